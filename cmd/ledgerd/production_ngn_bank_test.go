package main

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/workers/rails/lightning/lndtest"
	"github.com/ledger/ledger/workers/rails/paystack"
	"github.com/ledger/ledger/workers/rails/paystack/paystacktest"
)

// paystackPayouts is production ledgerd paying bank merchants through
// fake, which settles every transfer with success and sends its webhooks.
// The price feed converts between the fiat currencies; Lightning is
// configured as production's other rails are, and moves nothing.
func paystackPayouts(t *testing.T) (paymentSetup, *paystacktest.Server) {
	t.Helper()
	fake := paystacktest.NewServer(t, paystackTestKey)
	fake.SettleWith("success")
	env := productionLightning(t, lndtest.NewNode(t))
	env["LEDGER_PAYSTACK_SECRET_KEY"], env["LEDGER_PAYSTACK_BASE_URL"] = paystackTestKey, fake.URL()
	p := newPaymentSetup(t, env)
	fake.SetWebhookURL(p.s.URL + paystack.WebhookPath)
	return p, fake
}

// TestProductionNGNBankTransfer: production ledgerd moves naira by bank
// transfer both ways through camt.054 credits and Paystack. The contract's
// corridors take an NGN bank transfer only to a bank merchant of another
// country (or to BTC), so a Nigerian payer to a Nigerian bank merchant is
// refused before anything is created; the test instead funds a payment by
// an NGN credit quoting its reference and pays it to a South African bank
// merchant (basa), and pays a Nigerian bank merchant from a EUR credit as
// an NGN transfer to a nuban recipient. Each reaches success with one
// deposit and one transfer.
func TestProductionNGNBankTransfer(t *testing.T) {
	t.Parallel()
	p, fake := paystackPayouts(t)

	before := p.s.countEvents(t)
	r := p.s.call(t, http.MethodPost, "/payments", p.tok, fmt.Sprintf(`{"merchantId":%q,"amount":50000,"reference":"r","fromCountry":"Nigeria"}`, p.ng))
	mustProblem(t, r, http.StatusBadRequest, "unsupported_corridor")
	if after := p.s.countEvents(t); after != before {
		t.Errorf("a refused domestic NGN payment recorded %d events", after-before)
	}

	for i, c := range []struct {
		from, merchant, amount, depositCurrency, payoutCurrency, recipientType, bank, account string
		subunits                                                                              int64
	}{
		{"Nigeria", p.za, "500", "NGN", "ZAR", "basa", "470010", "1234567890", 50000},
		{"Europe", p.ng, "50000", "EUR", "NGN", "nuban", "057", "0123456789", 5000000},
	} {
		got := p.pay(t, p.tok, fmt.Sprintf(`{"merchantId":%q,"amount":%s,"reference":"r","fromCountry":%q}`, c.merchant, c.amount, c.from))
		id := got["id"].(string)
		var due struct {
			Reference, Currency string
			Amount              int64
		}
		jsonMember(t, got, "depositBankDetails", &due)
		if due.Currency != c.depositCurrency || due.Reference == "" || due.Amount <= 0 {
			t.Fatalf("%s: depositBankDetails: got %+v, want a %s amount and a reference", c.from, due, c.depositCurrency)
		}
		amount := decimal.New(due.Amount, -2)
		rep := p.s.importCamt(t, camtFile(t, credit{fmt.Sprintf("NG-ENTRY-%d", i), amount.StringFixed(2), due.Currency, due.Reference, "", ""}))
		if paid, _ := wantOutcome(t, rep, "deposited", ""); paid != id {
			t.Fatalf("%s: the credit deposited to %q, want %s", c.from, paid, id)
		}

		got = p.waitFor(t, id, 20*time.Second, statusIs("success"))
		if s := statuses(got); !slices.Equal(s, []string{"created", "deposited", "transferring", "success"}) {
			t.Errorf("%s: statusLogs: got %v", c.from, s)
		}
		if d, err := decimal.NewFromString(fmt.Sprint(got["amountDeposited"])); err != nil || !d.Equal(amount) {
			t.Errorf("%s: amountDeposited: got %v, want %s", c.from, got["amountDeposited"], amount)
		}
		tr, ok := fake.Transfer(id)
		if !ok || tr.Currency != c.payoutCurrency || tr.Amount != c.subunits || fake.Transfers() != i+1 || fake.Posts() != i+1 {
			t.Fatalf("%s: got transfer %+v (%d in all, %d posts), want one of %d %s subunits under the payment id",
				c.from, tr, fake.Transfers(), fake.Posts(), c.subunits, c.payoutCurrency)
		}
		if kind, bank, account := fake.RecipientOf(tr); kind != c.recipientType || bank != c.bank || account != c.account {
			t.Errorf("%s: recipient: got %s %s %s, want %s %s %s", c.from, kind, bank, account, c.recipientType, c.bank, c.account)
		}
		if n := p.s.depositEvents(t, id); n != 1 {
			t.Errorf("%s: deposit events: got %d, want 1", c.from, n)
		}
	}
}
