package main

import (
	"bytes"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/workers/rails/lightning/lndtest"
	"github.com/ledger/ledger/workers/rails/mpesa/mpesatest"
)

// changeIs is a waitFor condition: the payment's changeRefundStatus is status.
func changeIs(status string) func(map[string]any) bool {
	return func(p map[string]any) bool { return p["changeRefundStatus"] == status }
}

// changeOwed reads what the conversion booked to change_payable for a
// payment, in its deposit currency, and how many change_refunded events
// its stream holds.
func (s *testServer) changeOwed(t *testing.T, paymentID string) (decimal.Decimal, int) {
	t.Helper()
	var owed string
	var refunded int
	s.queryRow(t, `SELECT coalesce(p.state->>'changeDue', '0'),
		(SELECT count(*) FROM events WHERE stream_id = p.id AND type = 'payment.change_refunded') FROM payments p WHERE p.id = $1`,
		[]any{paymentID}, &owed, &refunded)
	return decimal.RequireFromString(owed), refunded
}

// mpesaChangeSetup is production ledgerd with M-Pesa (against fake) and
// a Kenyan payment by momo push, with a 5% buffer, to a momo merchant;
// env is the settings it started with, forward points its public URL at
// another process.
func mpesaChangeSetup(t *testing.T, fake *mpesatest.Server) (p paymentSetup, env map[string]string, id string, forward func(string)) {
	t.Helper()
	env = productionLightning(t, lndtest.NewNode(t))
	for k, v := range mpesaEnv(t, fake) {
		env[k] = v
	}
	var public string
	public, forward = forwardedURL(t)
	env["LEDGER_PUBLIC_URL"] = public
	p = newPaymentSetup(t, env)
	forward(p.s.URL)
	env["DATABASE_URL"], env["LEDGER_NATS_STREAM"], env["LEDGER_NATS_SUBJECT_PREFIX"] =
		p.s.DatabaseURL, p.s.Stream.Name, p.s.Stream.SubjectPrefix
	id = p.pay(t, p.utok, fmt.Sprintf(`{"merchantId":%q,"amount":1000,"reference":"r","fromCountry":"Kenya","bufferRate":0.05}`,
		p.keMomo))["id"].(string)
	fake.Approve(firstPrompt(t, fake).CheckoutID)
	return p, env, id, forward
}

// checkMPesaRefund checks that M-Pesa paid the change of payment id once,
// by B2C to the phone the prompt was paid from, under its own
// OriginatorConversationID, and the payout once under the payment id.
func checkMPesaRefund(t *testing.T, s *testServer, fake *mpesatest.Server, id string) {
	t.Helper()
	owed, refunded := s.changeOwed(t, id)
	payments := fake.Payments()
	payout, refund := payments[id], payments["change-"+id]
	if len(payments) != 2 || payout.Requests != 1 || payout.Phone != "254722000111" || refund.Requests != 1 ||
		refund.Phone != "254712345678" || !owed.IsPositive() || !decimal.NewFromInt(refund.Amount).Equal(owed) || refunded != 1 {
		t.Errorf("got B2C payments %+v, %d change_refunded events; want the payout to the merchant and the change (KES %s) to the payer, each once",
			payments, refunded, owed)
	}
}

// TestProductionMPesaChangeRefund: a Kenyan payer's momo push funds a
// payment with a buffer; after the B2C payout to the merchant succeeds,
// the change goes back by B2C to the phone the STK callback reported,
// once, though every callback comes twice.
func TestProductionMPesaChangeRefund(t *testing.T) {
	t.Parallel()
	fake := mpesatest.NewServer(t, mpesaCreds)
	fake.CallbacksTwice(true)
	p, _, id, _ := mpesaChangeSetup(t, fake)
	got := p.waitFor(t, id, 20*time.Second, changeIs("refunded"))
	if got["status"] != "success" || got["changeRefundAmount"].(float64) <= 0 {
		t.Errorf("got %v with change %v sats, want success with change", got["status"], got["changeRefundAmount"])
	}
	checkMPesaRefund(t, p.s, fake, id)
}

// TestProductionMPesaChangeRefundAfterCrash: ledgerd stops after M-Pesa
// took the change refund and before its result was recorded (the result
// never comes). The next process's sweep asks Transaction Status instead
// of paying again: the change is refunded once.
func TestProductionMPesaChangeRefundAfterCrash(t *testing.T) {
	t.Parallel()
	fake := mpesatest.NewServer(t, mpesaCreds)
	fake.DropResults(true) // B2C results are lost: the payout's is delivered below, the refund's never
	p, env, id, forward := mpesaChangeSetup(t, fake)
	b2c := func(key string) mpesatest.Payment {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for fake.Payments()[key].Requests == 0 {
			if time.Now().After(deadline) {
				t.Fatalf("no B2C request for %s", key)
			}
			time.Sleep(10 * time.Millisecond)
		}
		return fake.Payments()[key]
	}
	payout := b2c(id)
	r, err := http.Post(payout.ResultURL, "application/json", bytes.NewReader(mpesatest.B2CResult(payout, 0)))
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	b2c("change-" + id)
	got := p.waitFor(t, id, 20*time.Second, changeIs("sending"))
	sent, err := time.Parse(time.RFC3339Nano, got["updatedAt"].(string))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.s.stop(); err != nil {
		t.Fatal(err)
	}

	env["LEDGER_STALLED_AFTER"] = "1s"
	time.Sleep(time.Until(sent.Add(1100 * time.Millisecond))) // stalled by then: the new process's first sweep takes it
	p.s = startServer(t, env)
	forward(p.s.URL)
	p.waitFor(t, id, 60*time.Second, changeIs("refunded"))
	if fake.StatusQueries() == 0 {
		t.Error("got no Transaction Status query, want the refund recovered by one")
	}
	checkMPesaRefund(t, p.s, fake, id)
}

// TestProductionCamtChangeRefund: a naira payer's bank credit (camt.054,
// its debtor account and bank) funds a payment with a buffer; after the
// Paystack payout succeeds, the change goes back to the debtor's account
// by a Paystack transfer under its own reference; when the payer's bank
// reverses that transfer, the change is owed again and queued (the payout
// stands), and an operator pays it by hand. A debtor whose bank Paystack
// does not list is refused by the rail and queued. A euro payer's change
// cannot be sent (Paystack pays no euros): it is queued, listed by
// ledgerctl change list, and recorded as paid by an operator once.
func TestProductionCamtChangeRefund(t *testing.T) {
	t.Parallel()
	p, fake := paystackPayouts(t)

	fund := func(from, entry, debtor, bank string) string {
		got := p.pay(t, p.tok, fmt.Sprintf(`{"merchantId":%q,"amount":500,"reference":"r","fromCountry":%q,"bufferRate":0.05}`, p.za, from))
		var due struct {
			Reference, Currency string
			Amount              int64
		}
		jsonMember(t, got, "depositBankDetails", &due)
		rep := p.s.importCamt(t, camtFile(t, credit{entry, decimal.New(due.Amount, -2).StringFixed(2), due.Currency, due.Reference, debtor, bank}))
		wantOutcome(t, rep, "deposited", "")
		return got["id"].(string)
	}
	naira := fund("Nigeria", "NG-CHANGE-1", "0123456789", "Access Bank")
	euro := fund("Europe", "EU-CHANGE-1", "FR7630006000011234567890189", "BNP Paribas")
	unknownBank := fund("Nigeria", "NG-CHANGE-2", "0987654321", "Bank of Nowhere")

	p.waitFor(t, naira, 20*time.Second, changeIs("refunded"))
	owed, refunded := p.s.changeOwed(t, naira)
	tr, ok := fake.Transfer("change-" + naira)
	if !ok || tr.Currency != "NGN" || tr.Amount != owed.Shift(2).IntPart() || !owed.IsPositive() || refunded != 1 {
		t.Fatalf("got refund transfer %+v, %d change_refunded; want one of NGN %s under change-<payment id>", tr, refunded, owed)
	}
	if kind, bank, account := fake.RecipientOf(tr); kind != "nuban" || bank != "044" || account != "0123456789" {
		t.Errorf("refund recipient: got %s %s %s, want the debtor's nuban 044 0123456789", kind, bank, account)
	}
	if _, ok := fake.Transfer(naira); !ok {
		t.Error("the payout's transfer is not under the payment id")
	}
	// The payer's bank sends the refund back: the change is owed again and
	// queued, twice reported; the payout stands.
	fake.Settle("change-"+naira, "reversed")
	fake.Settle("change-"+naira, "reversed")
	got := p.waitFor(t, naira, 10*time.Second, changeIs("queued"))
	var reversals int
	p.s.queryRow(t, `SELECT count(*) FROM events WHERE stream_id = $1 AND type IN ('payment.payout_reversed', 'payment.change_refund_queued')`,
		[]any{naira}, &reversals)
	if got["status"] != "success" || reversals != 1 {
		t.Errorf("after the refund's reversal: got %v with %d reversal events, want success and the refund queued once", got["status"], reversals)
	}
	p.s.ledgerctl(t, "change", "paid", naira, "--reference", "NIP-0042", "--by", "ops")

	// A debtor's bank Paystack does not know: the rail refuses, nothing is
	// sent, and the refund waits for an operator with Paystack's reason.
	got = p.waitFor(t, unknownBank, 20*time.Second, changeIs("queued"))
	if _, sent := fake.Transfer("change-" + unknownBank); sent || got["status"] != "success" {
		t.Errorf("refund to an unknown bank: got a transfer %v, payment %v; want none, success", sent, got["status"])
	}
	var reason string
	p.s.queryRow(t, `SELECT state->'changeRefund'->>'reason' FROM payments WHERE id = $1`, []any{unknownBank}, &reason)
	if reason != `the payout rail refused the refund: Paystack does not pay "Bank of Nowhere" in NGN` {
		t.Errorf("refund to an unknown bank: got reason %q", reason)
	}
	p.s.ledgerctl(t, "change", "paid", unknownBank, "--reference", "NIP-0043", "--by", "ops")

	got = p.waitFor(t, euro, 20*time.Second, changeIs("queued"))
	if got["status"] != "success" {
		t.Errorf("euro payment: got %v, want success", got["status"])
	}
	var queued []struct {
		PaymentID, Currency, Reason string
		Amount                      decimal.Decimal
	}
	mustDecode(t, p.s.ledgerctl(t, "change", "list", "--json"), &queued)
	euroOwed, _ := p.s.changeOwed(t, euro)
	if len(queued) != 1 || queued[0].PaymentID != euro || queued[0].Currency != "EUR" || !queued[0].Amount.Equal(euroOwed) ||
		queued[0].Reason != "no payout rail pays BANK in EUR" {
		t.Fatalf("change list: got %+v, want the euro payment's EUR %s, no rail", queued, euroOwed)
	}
	p.s.ledgerctl(t, "change", "paid", euro, "--reference", "SEPA-0042", "--by", "ops")
	if _, _, err := p.s.tryLedgerctl(t, "change", "paid", euro, "--reference", "SEPA-0042", "--by", "ops"); err == nil {
		t.Error("change paid twice: got no error, want the second refused")
	}
	if got := p.waitFor(t, euro, 5*time.Second, changeIs("refunded")); got["status"] != "success" {
		t.Errorf("after change paid: got %v", got["status"])
	}
	if _, refunded := p.s.changeOwed(t, naira); refunded != 2 {
		t.Errorf("naira payment: got %d change_refunded events, want the rail's and the operator's", refunded)
	}
	if _, refunded := p.s.changeOwed(t, euro); refunded != 1 || fake.Transfers() != 4 {
		t.Errorf("got %d change_refunded events and %d transfers, want one event and no transfer for it", refunded, fake.Transfers())
	}
	// Every refund's postings balance, and change_payable nets to zero.
	p.s.ledgerctl(t, "audit", "verify")
	balances := mustStatus(t, p.s.call(t, http.MethodGet, "/ledger/balances", p.tok, ""), http.StatusOK)
	change := map[any]any{}
	for _, a := range balances["items"].([]any) {
		if a := a.(map[string]any); a["account"] == "change_payable" {
			change[a["currency"]] = a["balance"]
		}
	}
	if len(change) != 2 || change["NGN"] != 0.0 || change["EUR"] != 0.0 { // NGN: the refunded, the reversed and the refused refunds
		t.Errorf("change_payable: got %v, want NGN and EUR at 0 once every change is paid back", change)
	}
}

// TestProductionUnmatchedReturnByPaystack: a naira credit that names no
// payment, marked for return by an operator, is paid back to the debtor's
// account (with its bank, as the camt credit named them) by a Paystack
// transfer under the return's own reference, once. A euro credit's return
// has no rail: it stays returning, the operator's to send.
func TestProductionUnmatchedReturnByPaystack(t *testing.T) {
	t.Parallel()
	p, fake := paystackPayouts(t)
	_, naira := wantOutcome(t, p.s.importCamt(t, camtFile(t, credit{"NG-STRAY-1", "2500.00", "NGN", "LDGNOPAYMENTXYZ", "0123456789", "Access Bank"})),
		"unmatched", "no_match")
	_, euro := wantOutcome(t, p.s.importCamt(t, camtFile(t, credit{"EU-STRAY-1", "40.00", "EUR", "LDGNOPAYMENTXYZ", "FR76300060000112345", "BNP Paribas"})),
		"unmatched", "no_match")
	p.s.ledgerctl(t, "unmatched", "return", naira, "--by", "ops")
	p.s.ledgerctl(t, "unmatched", "return", euro, "--by", "ops")

	p.s.waitUnmatched(t, naira, "returned")
	tr, ok := fake.Transfer("return-" + naira)
	if !ok || tr.Currency != "NGN" || tr.Amount != 250000 || fake.Transfers() != 1 {
		t.Fatalf("got transfer %+v (%d in all), want NGN 2500.00 under return-<id>, the only one", tr, fake.Transfers())
	}
	if kind, bank, account := fake.RecipientOf(tr); kind != "nuban" || bank != "044" || account != "0123456789" {
		t.Errorf("return recipient: got %s %s %s, want the debtor's nuban 044 0123456789", kind, bank, account)
	}
	var status string
	p.s.queryRow(t, `SELECT status FROM unmatched_funds WHERE id = $1`, []any{euro}, &status)
	if status != "returning" {
		t.Errorf("euro return: got %s, want returning (no rail pays euros)", status)
	}
	p.s.ledgerctl(t, "audit", "verify")
}
