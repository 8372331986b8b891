package lightning

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
)

var (
	testMacaroon    = []byte{0x02, 0x01, 0x03, 0x6c, 0x6e, 0x64}
	testPreimageKey = bytes.Repeat([]byte{0x5a}, 32)
)

// fakeLND serves the REST calls LND makes, checking the macaroon and the
// JSON lnd's proxy would accept (its unmarshaler refuses unknown fields).
// Invoices are signed with the spec key; payments settle unless pay says
// otherwise; both are keyed by payment hash, as in lnd.
type fakeLND struct {
	t   *testing.T
	now time.Time

	intercept func(w http.ResponseWriter, r *http.Request) bool // answers instead, when it returns true
	pay       func(w http.ResponseWriter, hash [32]byte) bool   // answers a send instead, when it returns true

	mu       sync.Mutex
	invoices map[[32]byte]fakeInvoice
	paid     map[[32]byte]bool
	sends    int
}

type fakeInvoice struct {
	pr      string
	value   int64
	created time.Time
	expiry  int64
	state   string
}

func (f *fakeLND) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if got := r.Header.Get("Grpc-Metadata-macaroon"); got != hex.EncodeToString(testMacaroon) {
		f.t.Errorf("got macaroon header %q, want %x", got, testMacaroon)
		grpcError(w, http.StatusInternalServerError, "verification failed: signature mismatch after caveat verification")
		return
	}
	if f.intercept != nil && f.intercept(w, r) {
		return
	}
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/invoices":
		f.addInvoice(w, r)
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/invoice/"):
		f.lookupInvoice(w, r)
	case r.Method == http.MethodPost && r.URL.Path == "/v2/router/send":
		f.send(w, r)
	default:
		grpcError(w, http.StatusNotImplemented, "Not Implemented")
	}
}

// decodeStrict decodes r's JSON body as lnd's proxy does, or fails the test.
func (f *fakeLND) decodeStrict(r *http.Request, v any) bool {
	if r.Header.Get("Content-Type") != "application/json" {
		f.t.Errorf("got Content-Type %q, want application/json", r.Header.Get("Content-Type"))
	}
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		f.t.Errorf("request body: %v", err)
		return false
	}
	return true
}

func (f *fakeLND) addInvoice(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Memo            string `json:"memo"`
		DescriptionHash []byte `json:"description_hash"`
		RPreimage       []byte `json:"r_preimage"`
		Value           string `json:"value"`  // int64: a JSON string
		Expiry          string `json:"expiry"` // int64: a JSON string
	}
	if !f.decodeStrict(r, &req) {
		grpcError(w, http.StatusBadRequest, "bad request")
		return
	}
	value, err1 := strconv.ParseInt(req.Value, 10, 64)
	expiry, err2 := strconv.ParseInt(req.Expiry, 10, 64)
	if len(req.RPreimage) != 32 || errors.Join(err1, err2) != nil {
		f.t.Errorf("got r_preimage %x, value %q, expiry %q", req.RPreimage, req.Value, req.Expiry)
	}
	hash := sha256.Sum256(req.RPreimage)
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.invoices[hash]; ok {
		grpcError(w, http.StatusInternalServerError, "invoice with payment hash already exists")
		return
	}
	b := Bolt11{Network: Regtest, AmountMsat: uint64(value) * 1000, Timestamp: f.now, PaymentHash: hash,
		Description: req.Memo, Expiry: time.Duration(expiry) * time.Second}
	if req.DescriptionHash != nil {
		b.DescriptionHash = (*[32]byte)(req.DescriptionHash)
	}
	pr, err := Encode(b, specKey(f.t))
	if err != nil {
		f.t.Error(err)
	}
	f.invoices[hash] = fakeInvoice{pr: pr, value: value, created: f.now, expiry: expiry, state: "OPEN"}
	writeTestJSON(w, http.StatusOK, map[string]any{"r_hash": hash[:], "payment_request": pr,
		"add_index": strconv.Itoa(len(f.invoices)), "payment_addr": make([]byte, 32)})
}

func (f *fakeLND) lookupInvoice(w http.ResponseWriter, r *http.Request) {
	raw, err := hex.DecodeString(strings.TrimPrefix(r.URL.Path, "/v1/invoice/"))
	if err != nil || len(raw) != 32 {
		grpcError(w, http.StatusInternalServerError, "encoding/hex: invalid byte")
		return
	}
	f.mu.Lock()
	inv, ok := f.invoices[[32]byte(raw)]
	f.mu.Unlock()
	if !ok {
		grpcError(w, http.StatusNotFound, "there are no existing invoices")
		return
	}
	paid, settled := "0", "0"
	if inv.state == "SETTLED" { // settled a minute after it was made
		paid, settled = strconv.FormatInt(inv.value, 10), strconv.FormatInt(inv.created.Unix()+60, 10)
	}
	writeTestJSON(w, http.StatusOK, map[string]any{"memo": "", "r_hash": raw, "payment_request": inv.pr,
		"value": strconv.FormatInt(inv.value, 10), "creation_date": strconv.FormatInt(inv.created.Unix(), 10),
		"expiry": strconv.FormatInt(inv.expiry, 10), "state": inv.state, "add_index": "1",
		"amt_paid_sat": paid, "settle_date": settled})
}

func (f *fakeLND) send(w http.ResponseWriter, r *http.Request) {
	var req struct {
		PaymentRequest    string `json:"payment_request"`
		TimeoutSeconds    int32  `json:"timeout_seconds"`
		FeeLimitSat       string `json:"fee_limit_sat"` // int64: a JSON string
		NoInflightUpdates bool   `json:"no_inflight_updates"`
	}
	if !f.decodeStrict(r, &req) {
		grpcError(w, http.StatusBadRequest, "bad request")
		return
	}
	if req.TimeoutSeconds != 60 || req.FeeLimitSat != "10" || !req.NoInflightUpdates {
		f.t.Errorf("got timeout %d s, fee limit %q, no in-flight updates %t; want 60, \"10\", true",
			req.TimeoutSeconds, req.FeeLimitSat, req.NoInflightUpdates)
	}
	terms, err := DecodeBolt11(req.PaymentRequest)
	if err != nil || req.PaymentRequest != strings.ToLower(req.PaymentRequest) {
		f.t.Errorf("got payment request %q (%v), want a lower-case invoice", req.PaymentRequest, err)
	}
	f.mu.Lock()
	f.sends++
	already := f.paid[terms.PaymentHash]
	f.paid[terms.PaymentHash] = true
	f.mu.Unlock()
	if f.pay != nil && f.pay(w, terms.PaymentHash) {
		return
	}
	if already {
		streamError(w, http.StatusConflict, "invoice is already paid")
		return
	}
	streamResult(w, payment("SUCCEEDED", testPreimage[:], "1001", "FAILURE_REASON_NONE"))
}

// grpcError answers as lnd's proxy does for a unary call.
func grpcError(w http.ResponseWriter, status int, message string) {
	writeTestJSON(w, status, map[string]any{"code": 2, "message": message, "details": []any{}})
}

// streamError answers as lnd's proxy does for a stream that fails before
// its first message.
func streamError(w http.ResponseWriter, status int, message string) {
	writeTestJSON(w, status, map[string]any{"error": map[string]any{"code": 6, "message": message, "details": []any{}}})
}

// streamResult writes each payment as a stream message, one per line.
func streamResult(w http.ResponseWriter, payments ...map[string]any) {
	w.Header().Set("Content-Type", "application/json")
	for _, p := range payments {
		_ = json.NewEncoder(w).Encode(map[string]any{"result": p})
	}
}

func payment(status string, preimage []byte, feeMsat, reason string) map[string]any {
	return map[string]any{"payment_hash": hex.EncodeToString(specHash[:]), "value": "21", "payment_preimage": hex.EncodeToString(preimage),
		"value_sat": "21", "value_msat": "21000", "status": status, "fee_sat": "1", "fee_msat": feeMsat,
		"creation_time_ns": "0", "htlcs": []any{}, "payment_index": "1", "failure_reason": reason}
}

func newFakeLND(t *testing.T, f *fakeLND) *LND {
	t.Helper()
	f.t, f.now = t, specTime
	f.invoices, f.paid = map[[32]byte]fakeInvoice{}, map[[32]byte]bool{}
	srv := httptest.NewTLSServer(f)
	t.Cleanup(srv.Close)
	n, err := NewLND(srv.URL+"/", testMacaroon, testPreimageKey, srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func lndRequest() InvoiceRequest {
	return InvoiceRequest{PaymentID: uuid.MustParse("9a3c1f5e-2b7d-4e8a-9c61-0d4f2e8b7a15"), AmountSats: 21_000,
		Description: "Deposit for payment 9a3c1f5e", CreatedAt: specTime, Expiry: 15 * time.Minute}
}

func TestLNDCreateInvoice(t *testing.T) {
	t.Parallel()
	n := newFakeLND(t, &fakeLND{})
	r := lndRequest()
	got, err := n.CreateInvoice(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	preimage := n.preimage(r.PaymentID)
	hash := sha256.Sum256(preimage[:])
	terms, err := DecodeBolt11(got.PaymentRequest)
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case got.PaymentHash != hex.EncodeToString(hash[:]) || terms.PaymentHash != hash:
		t.Errorf("got payment hash %s, want %x", got.PaymentHash, hash)
	case got.AmountSats != 21_000 || terms.AmountMsat != 21_000_000:
		t.Errorf("got %d sats, invoice %d msat, want 21000 sats", got.AmountSats, terms.AmountMsat)
	case !got.ExpiresAt.Equal(specTime.Add(15 * time.Minute)):
		t.Errorf("got expiry %v, want %v", got.ExpiresAt, specTime.Add(15*time.Minute))
	}

	other := r
	other.PaymentID = uuid.MustParse("0b8e5c1a-6f3d-4a2b-8e9c-7d1f0a3b5c2e")
	if o := n.preimage(other.PaymentID); o == preimage {
		t.Error("two payments derived the same preimage")
	}
}

// TestLNDCreateInvoiceIdempotent asks for the same payment's invoice from
// several goroutines, as retries and several ledgerd processes would: one
// invoice is made, and everyone gets it.
func TestLNDCreateInvoiceIdempotent(t *testing.T) {
	t.Parallel()
	f := &fakeLND{}
	n := newFakeLND(t, f)
	r := lndRequest()
	want, err := n.CreateInvoice(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			got, err := n.CreateInvoice(context.Background(), r)
			if err == nil && got != want {
				err = fmt.Errorf("got %+v, want %+v", got, want)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.invoices) != 1 {
		t.Errorf("got %d invoices, want 1", len(f.invoices))
	}
}

func TestLNDCreateInvoiceLongDescription(t *testing.T) {
	t.Parallel()
	n := newFakeLND(t, &fakeLND{})
	r := lndRequest()
	r.Description = strings.Repeat("d", MaxDescriptionLen+1)
	got, err := n.CreateInvoice(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	terms, err := DecodeBolt11(got.PaymentRequest)
	if want := sha256.Sum256([]byte(r.Description)); err != nil || terms.DescriptionHash == nil || *terms.DescriptionHash != want {
		t.Errorf("got %+v, %v, want description hash %x", terms, err, want)
	}
}

func TestLNDCreateInvoiceFails(t *testing.T) {
	t.Parallel()
	r := lndRequest()
	existing := func(state string, value int64) func(*fakeLND, *LND) {
		return func(f *fakeLND, n *LND) {
			p := n.preimage(r.PaymentID)
			f.invoices[sha256.Sum256(p[:])] = fakeInvoice{pr: "lnbcrt1", value: value, created: specTime, expiry: 60, state: state}
		}
	}
	tests := []struct {
		name     string
		f        *fakeLND // nil: as is
		setup    func(*fakeLND, *LND)
		edit     func(*InvoiceRequest)
		want     string
		rejected bool
	}{
		{name: "payment id reused for another amount", setup: existing("OPEN", 5), want: "already has an invoice for 5 sats", rejected: true},
		{name: "existing invoice canceled", setup: existing("CANCELED", 21_000), want: "was canceled", rejected: true},
		{name: "zero amount", edit: func(r *InvoiceRequest) { r.AmountSats = 0 }, want: "out of range", rejected: true},
		{name: "expiry under a second", edit: func(r *InvoiceRequest) { r.Expiry = time.Millisecond }, want: "expiry", rejected: true},
		// BOLT #11 states whole seconds: the invoice would end before its payment.
		{name: "expiry not whole seconds", edit: func(r *InvoiceRequest) { r.Expiry = 1500 * time.Millisecond }, want: "expiry 1.5s", rejected: true},
		{name: "expiry beyond lnd's year", edit: func(r *InvoiceRequest) { r.Expiry = MaxInvoiceExpiry + time.Second }, want: "expiry", rejected: true},
		{name: "answer with another expiry", f: &fakeLND{intercept: func(w http.ResponseWriter, r *http.Request) bool {
			var req struct {
				RPreimage []byte `json:"r_preimage"`
			}
			_ = json.NewDecoder(r.Body).Decode(&req)
			b := Bolt11{Network: Regtest, AmountMsat: 21_000_000, Timestamp: specTime, PaymentHash: sha256.Sum256(req.RPreimage), Expiry: time.Hour}
			pr, err := Encode(b, specKey(t))
			if err != nil {
				t.Error(err)
			}
			writeTestJSON(w, http.StatusOK, map[string]any{"r_hash": b.PaymentHash[:], "payment_request": pr})
			return true
		}}, want: "expiring 1h0m0s after its timestamp, asked 15m0s"},
		{name: "invalid argument", f: &fakeLND{intercept: answer(http.StatusBadRequest, "memo too large")}, want: "memo too large", rejected: true},
		{name: "5xx is retryable", f: &fakeLND{intercept: answer(http.StatusServiceUnavailable, "server is still starting")},
			want: "lnd answered 503: server is still starting"},
		{name: "non-JSON 5xx from a proxy", f: &fakeLND{intercept: func(w http.ResponseWriter, _ *http.Request) bool {
			http.Error(w, "<html>bad gateway</html>", http.StatusBadGateway)
			return true
		}}, want: "lnd answered 502: Bad Gateway"},
		{name: "lookup fails", setup: existing("OPEN", 21_000), f: &fakeLND{intercept: func(w http.ResponseWriter, r *http.Request) bool {
			if r.Method == http.MethodGet {
				grpcError(w, http.StatusInternalServerError, "database is locked")
			}
			return r.Method == http.MethodGet
		}}, want: "look up existing invoice: lnd answered 500: database is locked"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if tt.f == nil {
				tt.f = &fakeLND{}
			}
			n := newFakeLND(t, tt.f)
			if tt.setup != nil {
				tt.setup(tt.f, n)
			}
			req := r
			if tt.edit != nil {
				tt.edit(&req)
			}
			_, err := n.CreateInvoice(context.Background(), req)
			var rejected *RejectedError
			if err == nil || errors.As(err, &rejected) != tt.rejected || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error containing %q, rejected %t", err, tt.want, tt.rejected)
			}
		})
	}
}

// answer makes every request fail with status and lnd's gRPC message.
func answer(status int, message string) func(http.ResponseWriter, *http.Request) bool {
	return func(w http.ResponseWriter, _ *http.Request) bool {
		grpcError(w, status, message)
		return true
	}
}

func TestNewLNDRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, url     string
		macaroon, key []byte
	}{
		{"plain http", "http://localhost:8080", testMacaroon, testPreimageKey},
		{"no host", "https://", testMacaroon, testPreimageKey},
		{"no macaroon", "https://localhost:8080", nil, testPreimageKey},
		{"short key", "https://localhost:8080", testMacaroon, testPreimageKey[:31]},
	}
	for _, tt := range tests {
		if _, err := NewLND(tt.url, tt.macaroon, tt.key, nil); err == nil {
			t.Errorf("%s: got no error", tt.name)
		}
	}
}
