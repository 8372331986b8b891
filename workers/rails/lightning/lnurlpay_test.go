package lightning

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const testMetadata = `[["text/plain","Pay alice"],["text/identifier","alice@example.com"]]`

// lnurlService is a fake LUD-06 service: alice's payRequest at
// /.well-known/lnurlp/alice and a callback at /cb?k1=abc that signs a
// regtest invoice for the amount asked, with the metadata's hash. Tests
// bend it with the hooks.
type lnurlService struct {
	t        *testing.T
	callback string // where the payRequest points; set by the constructor

	payRequest func(pr map[string]any)                           // edits the payRequest answer
	invoice    func(b *Bolt11)                                   // edits the invoice before it is signed
	handle     func(w http.ResponseWriter, r *http.Request) bool // answers instead, when it returns true

	mu       sync.Mutex
	requests []*url.URL
}

func (s *lnurlService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests = append(s.requests, r.URL)
	s.mu.Unlock()
	if s.handle != nil && s.handle(w, r) {
		return
	}
	switch r.URL.Path {
	case "/.well-known/lnurlp/alice":
		pr := map[string]any{"tag": "payRequest", "callback": s.callback, "minSendable": 1_000,
			"maxSendable": 1_000_000_000, "metadata": testMetadata, "commentAllowed": 12}
		if s.payRequest != nil {
			s.payRequest(pr)
		}
		writeTestJSON(w, http.StatusOK, pr)
	case "/cb":
		q := r.URL.Query()
		msat, err := strconv.ParseUint(q.Get("amount"), 10, 64)
		if q.Get("k1") != "abc" || err != nil {
			http.Error(w, "bad callback query "+r.URL.RawQuery, http.StatusBadRequest)
			return
		}
		hash := sha256.Sum256([]byte(testMetadata))
		b := Bolt11{Network: Regtest, AmountMsat: msat, Timestamp: specTime, PaymentHash: specHash, DescriptionHash: &hash}
		if s.invoice != nil {
			s.invoice(&b)
		}
		pr, err := Encode(b, specKey(s.t))
		if err != nil {
			s.t.Error(err)
		}
		writeTestJSON(w, http.StatusOK, map[string]any{"pr": pr, "routes": []any{}})
	default:
		http.NotFound(w, r)
	}
}

func (s *lnurlService) seen() []*url.URL {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*url.URL(nil), s.requests...)
}

func writeTestJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// newTLSService serves s over TLS as example.com, which the test server's
// client dials locally, so Lightning addresses resolve with no AllowHTTP.
func newTLSService(t *testing.T, s *lnurlService) *LNURLPay {
	t.Helper()
	s.t, s.callback = t, "https://example.com/cb?k1=abc"
	srv := httptest.NewTLSServer(s)
	t.Cleanup(srv.Close)
	return &LNURLPay{Client: srv.Client()}
}

// newHTTPService serves s over plain http and returns the bech32 LNURL of
// alice's payRequest there.
func newHTTPService(t *testing.T, s *lnurlService) string {
	t.Helper()
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	s.t, s.callback = t, srv.URL+"/cb?k1=abc"
	return EncodeLNURL(srv.URL + "/.well-known/lnurlp/alice")
}

func TestLNURLPayLightningAddress(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, comment, wantComment string
		commentAllowed             int
	}{
		{name: "comment sent", comment: "thanks ✓", commentAllowed: 12, wantComment: "thanks ✓"},
		{name: "comment of exactly the allowed characters", comment: "ééé", commentAllowed: 3, wantComment: "ééé"},
		{name: "comment too long is left out", comment: "far too long a comment", commentAllowed: 12},
		{name: "comments not allowed", comment: "hi", commentAllowed: 0},
		{name: "no comment", commentAllowed: 12},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := &lnurlService{payRequest: func(pr map[string]any) { pr["commentAllowed"] = tt.commentAllowed }}
			p := newTLSService(t, s)
			got, err := p.Invoice(context.Background(), "alice@Example.COM", 21_000, tt.comment)
			if err != nil {
				t.Fatal(err)
			}
			if got.AmountMsat != 21_000 || got.PaymentHash != hex.EncodeToString(specHash[:]) || !strings.HasPrefix(got.PaymentRequest, "lnbcrt210n1") {
				t.Errorf("got %+v, want 21000 msat, hash %x", got, specHash)
			}
			reqs := s.seen()
			if len(reqs) != 2 {
				t.Fatalf("got %d requests, want 2", len(reqs))
			}
			q := reqs[1].Query()
			if q.Get("k1") != "abc" || q.Get("amount") != "21000" || q.Get("comment") != tt.wantComment || q.Has("comment") != (tt.wantComment != "") {
				t.Errorf("got callback query %q, want k1=abc, amount=21000, comment %q", reqs[1].RawQuery, tt.wantComment)
			}
			if !strings.HasPrefix(reqs[1].RawQuery, "k1=abc&amount=21000") {
				t.Errorf("got callback query %q, want the service's own query first", reqs[1].RawQuery)
			}
		})
	}
}

func TestLNURLPayBech32(t *testing.T) {
	t.Parallel()
	s := &lnurlService{}
	lnurl := newHTTPService(t, s)
	p := &LNURLPay{AllowHTTP: true}
	for _, dest := range []string{lnurl, strings.ToUpper(lnurl)} { // LUD-01: QR codes use upper case
		got, err := p.Invoice(context.Background(), dest, 1_000_000, "")
		if err != nil {
			t.Fatal(err)
		}
		if got.AmountMsat != 1_000_000 || !strings.HasPrefix(got.PaymentRequest, "lnbcrt10u1") {
			t.Errorf("got %+v, want an invoice for 1000000 msat", got)
		}
	}
}

// TestLNURLPayRejects covers answers that break LUD-06 or ask for something
// else than we asked: each is a RejectedError, so the payout fails instead
// of retrying.
func TestLNURLPayRejects(t *testing.T) {
	t.Parallel()
	other := sha256.Sum256([]byte("something else"))
	tests := []struct {
		name       string
		s          *lnurlService // nil: as is
		amountMsat int64
		want       string
		requests   int // how far it got
	}{
		{name: "wrong tag", s: &lnurlService{payRequest: func(pr map[string]any) { pr["tag"] = "withdrawRequest" }},
			want: `tag is "withdrawRequest"`, requests: 1},
		{name: "below minSendable", amountMsat: 999, want: "outside 1000-1000000000", requests: 1},
		{name: "above maxSendable", amountMsat: 1_000_000_001, want: "outside", requests: 1},
		{name: "min above max", s: &lnurlService{payRequest: func(pr map[string]any) { pr["minSendable"] = 2_000_000_000 }},
			want: "sendable range", requests: 1},
		{name: "metadata not a string", s: &lnurlService{payRequest: func(pr map[string]any) { pr["metadata"] = []any{} }},
			want: "invalid JSON", requests: 1},
		{name: "metadata not a JSON array", s: &lnurlService{payRequest: func(pr map[string]any) { pr["metadata"] = "text" }},
			want: "metadata is not a JSON array", requests: 1},
		{name: "http callback", s: &lnurlService{payRequest: func(pr map[string]any) { pr["callback"] = "http://example.com/cb?k1=abc" }},
			want: "http URL http://example.com/cb?k1=abc is not https", requests: 1},
		{name: "relative callback", s: &lnurlService{payRequest: func(pr map[string]any) { pr["callback"] = "/cb?k1=abc" }},
			want: "not an absolute URL", requests: 1},
		{name: "ERROR on the payRequest", s: &lnurlService{handle: errorAnswer("/.well-known/lnurlp/alice", http.StatusOK)},
			want: "service says: no such user", requests: 1},
		{name: "ERROR with 404", s: &lnurlService{handle: errorAnswer("/.well-known/lnurlp/alice", http.StatusNotFound)},
			want: "service says: no such user", requests: 1},
		{name: "ERROR on the callback", s: &lnurlService{handle: errorAnswer("/cb", http.StatusOK)},
			want: "service says: no such user", requests: 2},
		{name: "404", s: &lnurlService{handle: statusAnswer(http.StatusNotFound)}, want: "answered 404", requests: 1},
		{name: "invoice amount mismatch", s: &lnurlService{invoice: func(b *Bolt11) { b.AmountMsat += 1_000 }},
			want: "invoice is for 22000 msat, asked for 21000", requests: 2},
		{name: "invoice without amount", s: &lnurlService{invoice: func(b *Bolt11) { b.AmountMsat = 0 }},
			want: "invoice is for 0 msat", requests: 2},
		{name: "description hash mismatch", s: &lnurlService{invoice: func(b *Bolt11) { b.DescriptionHash = &other }},
			want: "description hash", requests: 2},
		{name: "description instead of its hash", s: &lnurlService{invoice: func(b *Bolt11) { b.DescriptionHash, b.Description = nil, "Pay alice" }},
			want: "description hash", requests: 2},
		{name: "not an invoice", s: &lnurlService{handle: func(w http.ResponseWriter, r *http.Request) bool {
			if r.URL.Path == "/cb" {
				writeTestJSON(w, http.StatusOK, map[string]any{"pr": "lnbc1notaninvoice", "routes": []any{}})
			}
			return r.URL.Path == "/cb"
		}}, want: "callback invoice: bolt11", requests: 2},
		{name: "oversized body", s: &lnurlService{payRequest: func(pr map[string]any) { pr["padding"] = strings.Repeat("x", lnurlMaxBody) }},
			want: "answer exceeds 65536 bytes", requests: 1},
		{name: "redirect to http", s: &lnurlService{handle: func(w http.ResponseWriter, r *http.Request) bool {
			http.Redirect(w, r, "http://example.com/.well-known/lnurlp/alice", http.StatusFound)
			return true
		}}, want: "is not https", requests: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if tt.s == nil {
				tt.s = &lnurlService{}
			}
			p := newTLSService(t, tt.s)
			amount := tt.amountMsat
			if amount == 0 {
				amount = 21_000
			}
			_, err := p.Invoice(context.Background(), "alice@example.com", amount, "")
			var rejected *RejectedError
			if !errors.As(err, &rejected) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want a RejectedError containing %q", err, tt.want)
			}
			if got := len(tt.s.seen()); got != tt.requests {
				t.Errorf("got %d requests, want %d", got, tt.requests)
			}
		})
	}
}

func errorAnswer(path string, status int) func(http.ResponseWriter, *http.Request) bool {
	return func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path != path {
			return false
		}
		writeTestJSON(w, status, map[string]string{"status": "ERROR", "reason": "no such user"})
		return true
	}
}

func statusAnswer(status int) func(http.ResponseWriter, *http.Request) bool {
	return func(w http.ResponseWriter, _ *http.Request) bool {
		http.Error(w, "internal detail that must not leak", status)
		return true
	}
}

// TestLNURLPayDestinations covers destinations refused before any request.
func TestLNURLPayDestinations(t *testing.T) {
	t.Parallel()
	s := &lnurlService{}
	lnurl := newHTTPService(t, s)
	// The service's port is random, and so is the LNURL's last checksum
	// character: change it to one it is not.
	badChecksum := lnurl[:len(lnurl)-1] + "x"
	if strings.HasSuffix(lnurl, "x") {
		badChecksum = lnurl[:len(lnurl)-1] + "q"
	}
	tests := []struct {
		name, dest string
		p          LNURLPay
		want       string
	}{
		{"http LNURL without AllowHTTP", lnurl, LNURLPay{}, "is not https"},
		{"bad checksum", badChecksum, LNURLPay{AllowHTTP: true}, "neither a Lightning address nor"},
		{"bech32 of another kind", bech32Encode("lnbc", bytesToWords([]byte("https://example.com"))), LNURLPay{}, "neither"},
		{"LNURL of a relative URL", EncodeLNURL("/lnurlp/alice"), LNURLPay{AllowHTTP: true}, "not an absolute URL"},
		{"LNURL with a user", EncodeLNURL("https://u:p@example.com/x"), LNURLPay{}, "not an absolute URL"},
		{"LNURL of ftp", EncodeLNURL("ftp://example.com/x"), LNURLPay{AllowHTTP: true}, "is not https"},
		{"upper-case name", "Alice@example.com", LNURLPay{}, "not a Lightning address"},
		{"address at an IP", "alice@127.0.0.1", LNURLPay{}, "not a Lightning address"},
		{"address with a port", "alice@example.com:8443", LNURLPay{}, "not a Lightning address"},
	}
	for _, tt := range tests {
		_, err := tt.p.Invoice(context.Background(), tt.dest, 21_000, "")
		var rejected *RejectedError
		if !errors.As(err, &rejected) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want a RejectedError containing %q", tt.name, err, tt.want)
		}
	}
	if _, err := (&LNURLPay{}).Invoice(context.Background(), "alice@example.com", 0, ""); err == nil {
		t.Error("zero amount: got no error")
	}
	if got := len(s.seen()); got != 0 {
		t.Errorf("got %d requests, want none", got)
	}
}

// TestLNURLPayRetryable covers failures a later attempt may not meet: none
// is a RejectedError, and none quotes the answer's body.
func TestLNURLPayRetryable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		s    *lnurlService
		ctx  time.Duration
		want string
	}{
		{name: "500", s: &lnurlService{handle: statusAnswer(http.StatusInternalServerError)}, want: "example.com answered 500"},
		{name: "429", s: &lnurlService{handle: statusAnswer(http.StatusTooManyRequests)}, want: "example.com answered 429"},
		{name: "503 on the callback", s: &lnurlService{handle: func(w http.ResponseWriter, r *http.Request) bool {
			if r.URL.Path == "/cb" {
				statusAnswer(http.StatusServiceUnavailable)(w, r)
			}
			return r.URL.Path == "/cb"
		}}, want: "answered 503"},
		{name: "hung service", ctx: 50 * time.Millisecond, s: &lnurlService{handle: func(_ http.ResponseWriter, r *http.Request) bool {
			<-r.Context().Done()
			return true
		}}, want: "context deadline exceeded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := newTLSService(t, tt.s)
			ctx := context.Background()
			if tt.ctx > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.ctx)
				defer cancel()
			}
			_, err := p.Invoice(ctx, "alice@example.com", 21_000, "")
			var rejected *RejectedError
			if err == nil || errors.As(err, &rejected) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want a plain error containing %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "internal detail") {
				t.Errorf("error %q quotes the answer's body", err)
			}
		})
	}
}

// TestLNURLPayRedirect follows an https redirect, and runs the caller's own
// CheckRedirect after ours.
func TestLNURLPayRedirect(t *testing.T) {
	t.Parallel()
	s := &lnurlService{handle: func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path == "/alice" {
			http.Redirect(w, r, "https://pay.example.com/.well-known/lnurlp/alice", http.StatusFound)
		}
		return r.URL.Path == "/alice"
	}}
	p := newTLSService(t, s)
	lnurl := EncodeLNURL("https://example.com/alice")
	if _, err := p.Invoice(context.Background(), lnurl, 21_000, ""); err != nil {
		t.Fatal(err)
	}

	client := *p.Client
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return errors.New("caller says no") }
	p.Client = &client
	if _, err := p.Invoice(context.Background(), lnurl, 21_000, ""); err == nil || !strings.Contains(err.Error(), "caller says no") {
		t.Fatalf("got %v, want the caller's CheckRedirect error", err)
	}
}
