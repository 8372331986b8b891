package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ledger/ledger/workers/rails/mpesa/mpesatest"
)

// TestProductionMPesaLostPayoutResolvedByOperator: two B2C requests are
// answered 500 without M-Pesa acting on them. Nothing sends them again;
// the stalled-payment sweep's Transaction Status finds neither (the lost
// alert) and their payments stay transferring, listed by payouts stuck.
// The operator records one as paid and the other as not paid: each
// payment ends with an event naming the operator, the unpaid one's money
// is owed back, and neither can be resolved a second time.
func TestProductionMPesaLostPayoutResolvedByOperator(t *testing.T) {
	t.Parallel()
	fake := mpesatest.NewServer(t, mpesaCreds)
	fake.SetFault("/mpesa/b2c/v3/paymentrequest", mpesatest.Fault{Status500: 2})
	p, _, _ := productionMPesa(t, fake, map[string]string{"LEDGER_STALLED_AFTER": "1s"})

	transferring := func() string {
		t.Helper()
		n := len(fake.Prompts())
		id := p.pay(t, p.utok, fmt.Sprintf(`{"merchantId":%q,"amount":1000,"reference":"r","fromCountry":"Kenya"}`, p.keMomo))["id"].(string)
		waitUntil(t, "the prompt", func() bool { return len(fake.Prompts()) > n })
		fake.Approve(fake.Prompts()[n].CheckoutID)
		p.waitFor(t, id, 20*time.Second, statusIs("transferring"))
		return id
	}
	paid, unpaid := transferring(), transferring()
	waitUntil(t, "two lost alerts", func() bool {
		return strings.Count(p.s.logs.String(), "M-Pesa does not know a payout whose request got no answer") >= 2
	})
	var stuck []struct {
		PaymentID    string
		Provider     string
		Acknowledged bool
	}
	mustDecode(t, p.s.ledgerctl(t, "payouts", "stuck", "--older", "0s", "--json"), &stuck)
	if len(stuck) != 2 || stuck[0].PaymentID != paid || stuck[1].PaymentID != unpaid || stuck[0].Provider != "mpesa" || stuck[0].Acknowledged {
		t.Fatalf("payouts stuck: got %+v, want both unacknowledged M-Pesa payouts, oldest first", stuck)
	}
	if n := len(fake.Payments()); n != 0 {
		t.Fatalf("got %d B2C payments, want none: a request answered 500 is never sent again", n)
	}

	p.s.resolveRefused(t, "no outcome", paid, "--by", "amina")
	p.s.resolveRefused(t, "both outcomes", paid, "--paid", "SLK1", "--failed", "x", "--by", "amina")
	p.s.resolveRefused(t, "no payout", uuid.NewString(), "--paid", "SLK1", "--by", "amina")
	p.s.resolveRefused(t, "a blank receipt", paid, "--paid", " ", "--by", "amina")

	var res struct {
		Payout  struct{ Status, Receipt, Reason string }
		Payment struct{ Status, StatusLog string }
	}
	mustDecode(t, p.s.ledgerctl(t, "payouts", "resolve", paid, "--paid", "SLK4H7XQ2B", "--by", "amina"), &res)
	if res.Payout.Status != "success" || res.Payout.Receipt != "SLK4H7XQ2B" || res.Payment.Status != "success" {
		t.Fatalf("resolve --paid: got %+v", res)
	}
	mustDecode(t, p.s.ledgerctl(t, "payouts", "resolve", unpaid, "--failed", "not on the B2C statement", "--by", "amina"), &res)
	if res.Payout.Status != "failed" || res.Payment.Status != "failed" || !strings.Contains(res.Payment.StatusLog, "not on the B2C statement") {
		t.Fatalf("resolve --failed: got %+v", res)
	}
	// Ended, each refuses another outcome, and the list is empty.
	p.s.resolveRefused(t, "resolved already", paid, "--failed", "x", "--by", "amina")
	p.s.resolveRefused(t, "resolved already", unpaid, "--failed", "not on the B2C statement", "--by", "amina")
	mustDecode(t, p.s.ledgerctl(t, "payouts", "stuck", "--older", "0s", "--json"), &stuck)
	if len(stuck) != 0 {
		t.Fatalf("payouts stuck after resolving: got %+v", stuck)
	}

	for id, want := range map[string]string{paid: "ledger.payment.success.v1", unpaid: "ledger.payment.failed.v1"} {
		got := p.waitFor(t, id, 10*time.Second, func(m map[string]any) bool { return m["status"] != "transferring" })
		if id == paid && got["amountSettled"] == nil {
			t.Errorf("payment %s: got %v settled, want the payout amount", id, got["amountSettled"])
		}
		var data struct{ ResolvedBy string }
		last := p.lastEvent(t, id, &data)
		if last.Type != want || last.Actor != "operator:amina" || data.ResolvedBy != "operator:amina" {
			t.Errorf("payment %s: last event %s by %q (resolvedBy %q), want %s by operator:amina", id, last.Type, last.Actor, data.ResolvedBy, want)
		}
	}
	p.s.ledgerctl(t, "audit", "verify")
}

// paymentEvent is a payment's event as GET /payments/{id}/events shows it.
type paymentEvent struct {
	Type, Actor string
	Data        json.RawMessage
}

// lastEvent is payment id's last event, its data decoded into data.
func (p paymentSetup) lastEvent(t *testing.T, id string, data any) paymentEvent {
	t.Helper()
	var events struct{ Items []paymentEvent }
	mustDecode(t, mustOK(t, p.s.call(t, http.MethodGet, "/payments/"+id+"/events", p.tok, "")), &events)
	last := events.Items[len(events.Items)-1]
	mustDecode(t, last.Data, data)
	return last
}

// resolveRefused runs ledgerctl payouts resolve with args, which must be
// refused (why) with ledgerctl's error.
func (s *testServer) resolveRefused(t *testing.T, why string, args ...string) {
	t.Helper()
	if out, stderr, err := s.tryLedgerctl(t, append([]string{"payouts", "resolve"}, args...)...); err == nil {
		t.Fatalf("payouts resolve %v (%s): got %s, want a refusal", args, why, out)
	} else if !strings.Contains(string(stderr), "ledgerctl:") {
		t.Fatalf("payouts resolve %v (%s): got %v %s", args, why, err, stderr)
	}
}

// waitUntil waits for cond, failing after 30 s.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestProductionMPesaLatePaymentIsUnmatched: a momo payment's prompt is
// cancelled, so the payment expires; M-Pesa then reports it paid after
// all (its query confirms), and the callback comes twice. The money is one
// unmatched item in the payment's tenant's books (reason expired, the
// payer's phone number and the receipt as M-Pesa reported them), which
// the operator marks for return to that number: ledgerd pays it back by
// B2C to that number, once, under the return's own key.
func TestProductionMPesaLatePaymentIsUnmatched(t *testing.T) {
	t.Parallel()
	fake := mpesatest.NewServer(t, mpesaCreds)
	p, _, _ := productionMPesa(t, fake, map[string]string{"LEDGER_VALIDITY": "momo=2s"})

	id := p.pay(t, p.utok, fmt.Sprintf(`{"merchantId":%q,"amount":1000,"reference":"r","fromCountry":"Kenya"}`, p.keMomo))["id"].(string)
	waitUntil(t, "the prompt", func() bool { return len(fake.Prompts()) == 1 })
	fake.Cancel(fake.Prompts()[0].CheckoutID)
	p.waitFor(t, id, 20*time.Second, statusIs("expired"))
	fake.CallbacksTwice(true)
	fake.Approve(fake.Prompts()[0].CheckoutID)
	waitUntil(t, "both callbacks", func() bool {
		return strings.Count(p.s.logs.String(), "a prompt was paid after its payment ended") == 2
	})
	prompt := fake.Prompts()[0]

	var queue []struct {
		ID, Rail, Reason, Currency, DebtorAccount, TenantID, Status string
		Amount                                                      json.Number
		PaymentID                                                   *string
		References                                                  []string
		Entry                                                       struct{ Account, EntryRef string }
	}
	mustDecode(t, p.s.ledgerctl(t, "unmatched", "list", "--json"), &queue)
	if len(queue) != 1 {
		t.Fatalf("ledgerctl unmatched list: got %+v, want the late payment once", queue)
	}
	u := queue[0]
	if u.Rail != "MOMO" || u.Reason != "expired" || u.Currency != "KES" || u.Amount.String() != fmt.Sprint(prompt.Amount) ||
		u.DebtorAccount != prompt.Phone || u.PaymentID == nil || *u.PaymentID != id || u.Entry.Account != "MOMO:"+mpesaCreds.ShortCode ||
		u.Entry.EntryRef != prompt.Receipt || len(u.References) != 1 || u.References[0] != prompt.Receipt {
		t.Fatalf("unmatched item: got %+v, want KES %d from %s, receipt %s, on payment %s", u, prompt.Amount, prompt.Phone, prompt.Receipt, id)
	}
	var returned struct{ Status, ResolvedBy string }
	mustDecode(t, p.s.ledgerctl(t, "unmatched", "return", u.ID, "--by", "amina"), &returned)
	if returned.Status != "returning" || returned.ResolvedBy != "operator:amina" {
		t.Fatalf("unmatched return: got %+v", returned)
	}
	p.s.waitUnmatched(t, u.ID, "returned")
	back := fake.Payments()["return-"+u.ID]
	if back.Requests != 1 || back.Phone != prompt.Phone || back.Amount != prompt.Amount || len(fake.Payments()) != 1 {
		t.Errorf("B2C payments: got %+v, want the KES %d returned to %s once", fake.Payments(), prompt.Amount, prompt.Phone)
	}
	p.s.ledgerctl(t, "audit", "verify")
}
