package dashboard

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/domain"
)

func (h *harness) addPayment(status string) uuid.UUID {
	id := uuid.New()
	h.payments.put(domain.PaymentSnapshot{Payment: domain.Payment{ID: id, Status: status, Reference: "Invoice 42",
		DestinationAmount: decimal.NewFromInt(1500), DestinationCurrency: "ZAR", CreatedAt: h.now}})
	return id
}

// TestPaymentPageOnlyTheSessionTenant: a payment is read with the
// session's tenant; another tenant's (or a made-up id) is a 404 page.
func TestPaymentPageOnlyTheSessionTenant(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fakeCredentials{})
	id := h.addPayment(domain.StatusCreated)
	h.signIn()
	if rec := h.get("/dashboard/payments/" + id.String()); rec.Code != http.StatusOK || !strings.Contains(body(rec), "1,500.00 ZAR") {
		t.Fatalf("our payment: got %d, want 200 with its amount", rec.Code)
	}
	h.payments.moveTo(uuid.New()) // the payment is now another tenant's
	for _, path := range []string{"/dashboard/payments/" + id.String(), "/dashboard/payments/not-a-uuid",
		"/dashboard/live?payment=" + id.String()} {
		rec := h.get(path)
		if rec.Code != http.StatusNotFound || strings.Contains(body(rec), "Invoice 42") {
			t.Errorf("GET %s: got %d, want 404 showing nothing of the payment", path, rec.Code)
		}
	}
}

func TestPaymentsFilter(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fakeCredentials{})
	h.signIn()
	merchant := uuid.New()
	rec := h.get("/dashboard/payments?status=success&merchant=" + merchant.String() + "&from=2026-11-01&to=2026-11-24")
	if rec.Code != http.StatusOK {
		t.Fatalf("filtered list: got %d, want 200", rec.Code)
	}
	want := domain.PaymentFilter{Status: "success", MerchantID: merchant,
		CreatedFrom: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), CreatedBefore: time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)}
	if got := h.payments.lastFilter(); got != want {
		t.Errorf("filter: got %+v, want %+v (to is inclusive)", got, want)
	}
	for q, msg := range map[string]string{"status=paid": "Choose a status", "merchant=nope": "Choose a merchant",
		"from=25/11/2026": "Dates are YYYY-MM-DD"} {
		rec := h.get("/dashboard/payments?" + q)
		if rec.Code != http.StatusBadRequest || !strings.Contains(body(rec), msg) || !strings.Contains(body(rec), `id="status"`) {
			t.Errorf("?%s: got %d, want 400 with the filter form saying %q", q, rec.Code, msg)
		}
	}
}

// TestLiveSendsTheSessionTenantsPayments: the stream subscribes with the
// session's tenant, sends a payment's state first when asked for one, and
// then each change of it.
func TestLiveSendsTheSessionTenantsPayments(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fakeCredentials{})
	id, other := h.addPayment(domain.StatusCreated), h.addPayment(domain.StatusCreated)
	h.signIn()
	srv := httptest.NewServer(h.d)
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/dashboard/live?payment="+id.String()+"&tenant="+uuid.NewString(), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.AddCookie(h.cookies[sessionCookie])
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || ct != "text/event-stream" {
		t.Fatalf("live: got %d %s, want 200 text/event-stream", resp.StatusCode, ct)
	}
	lines := bufio.NewScanner(resp.Body)
	next := func() string {
		for lines.Scan() {
			if data, ok := strings.CutPrefix(lines.Text(), "data: "); ok {
				return data
			}
		}
		t.Fatalf("live stream ended: %v", lines.Err())
		return ""
	}
	if first := next(); !strings.Contains(first, `"status":"created"`) || !strings.Contains(first, id.String()) {
		t.Errorf("first event: got %s, want the payment as it is", first)
	}
	h.payments.put(domain.PaymentSnapshot{Payment: domain.Payment{ID: id, Status: domain.StatusSuccess}})
	h.feed.ch <- other // another payment of the page's tenant: not this page's
	h.feed.ch <- id
	if got := next(); !strings.Contains(got, `"status":"success"`) || !strings.Contains(got, id.String()) {
		t.Errorf("after a change: got %s, want the payment's new status", got)
	}
	h.feed.mu.Lock()
	defer h.feed.mu.Unlock()
	if len(h.feed.tenants) != 1 || h.feed.tenants[0] != h.tenant {
		t.Errorf("subscribed tenants: got %v, want the session's %s only", h.feed.tenants, h.tenant)
	}
}

// TestLiveEndsOnClose: Close ends open streams, so a graceful shutdown is
// not held up by open dashboard pages.
func TestLiveEndsOnClose(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fakeCredentials{})
	h.signIn()
	srv := httptest.NewServer(h.d)
	t.Cleanup(srv.Close)
	req, err := http.NewRequest(http.MethodGet, srv.URL+"/dashboard/live", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.AddCookie(h.cookies[sessionCookie])
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	ended := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, resp.Body)
		ended <- err
	}()
	h.d.Close()
	select {
	case err := <-ended:
		if err != nil {
			t.Errorf("stream: got %v, want a clean end", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("stream still open 5s after Close, want it ended")
	}
}

// TestLiveEndsAtSignOut: a stream opened before its session was signed out
// sends nothing more and ends, though payments keep changing.
func TestLiveEndsAtSignOut(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fakeCredentials{})
	id := h.addPayment(domain.StatusCreated)
	h.signIn()
	session := h.cookies[sessionCookie]
	srv := httptest.NewServer(h.d)
	t.Cleanup(srv.Close)
	req, err := http.NewRequest(http.MethodGet, srv.URL+"/dashboard/live", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.AddCookie(session)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if rec := h.post("/dashboard/sign-out", nil, true); rec.Code != http.StatusSeeOther {
		t.Fatalf("sign out: got %d, want 303", rec.Code)
	}
	h.feed.ch <- id
	ended := make(chan string, 1)
	go func() {
		rest, _ := io.ReadAll(resp.Body)
		ended <- string(rest)
	}()
	select {
	case rest := <-ended:
		if strings.Contains(rest, "data: ") {
			t.Errorf("after sign-out the stream sent %q, want nothing more", rest)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("stream still open 5s after sign-out and a change, want it ended")
	}
}
