package dashboard

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/domain"
)

// TestPaymentPageShowsLightningAmountsInSats: a Lightning merchant's
// amounts are sats and its BTC price is in the payer's currency; neither
// is labelled BTC.
func TestPaymentPageShowsLightningAmountsInSats(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fakeCredentials{})
	id := uuid.New()
	settled := decimal.NewFromInt(50000)
	h.payments.put(domain.PaymentSnapshot{Payment: domain.Payment{ID: id, Status: domain.StatusSuccess,
		FromCurrency: "GBP", DestinationCurrency: "BTC", DestinationAmount: decimal.NewFromInt(50000),
		DepositDue: decimal.RequireFromString("38.38"), DepositCurrency: "GBP", AmountDeposited: decimal.RequireFromString("38.38"),
		AmountSettled: &settled, OTCFees: decimal.NewFromInt(500), BTCPrice: decimal.NewFromInt(76000), CreatedAt: h.now}})
	h.signIn()
	rec := h.get("/dashboard/payments/" + id.String())
	if rec.Code != http.StatusOK {
		t.Fatalf("got %d, want 200", rec.Code)
	}
	page := body(rec)
	for _, want := range []string{"<dd>50,000 sats</dd>", "<dt>OTC fees</dt><dd>500 sats</dd>", "<dd>76,000.00 GBP per BTC</dd>", "<dd>38.38 GBP</dd>"} {
		if !strings.Contains(page, want) {
			t.Errorf("payment page: want %s", want)
		}
	}
	if strings.Contains(page, ".00000000 BTC") {
		t.Error("payment page: an amount in sats is shown as BTC")
	}
	if rec := h.get("/dashboard/payments"); !strings.Contains(body(rec), "50,000 sats") {
		t.Error("payments list: want the merchant's amount as 50,000 sats")
	}
}
