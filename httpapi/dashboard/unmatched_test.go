package dashboard

import (
	"net/http"
	"strings"
	"testing"
)

// TestUnmatchedPage lists the tenant's unmatched funds with what the open
// ones hold, each linked to its payment.
func TestUnmatchedPage(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fakeCredentials{})
	h.signIn()
	rec := h.get("/dashboard/unmatched")
	if rec.Code != http.StatusOK {
		t.Fatalf("got %d, want 200 (%s)", rec.Code, body(rec))
	}
	page := body(rec)
	for _, want := range []string{"Open: <strong>12.00 GBP</strong>", "wrong_currency", "overpaid", "5.50 EUR", "LDGABCDEFGHIJKL",
		`href="/dashboard/payments/` + fakeUnmatchedPayment.String() + `"`, "operator:ann", `aria-current="page">Unmatched funds`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}
