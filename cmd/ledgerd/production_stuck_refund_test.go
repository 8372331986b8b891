package main

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ledger/ledger/workers/rails/mpesa/mpesatest"
)

// lostB2C is the log line of a B2C request M-Pesa never answered and its
// Transaction Status cannot find.
const lostB2C = "M-Pesa does not know a payout whose request got no answer"

// TestProductionMPesaLostChangeRefundResolvedByOperator: two payments'
// change refunds are answered 500 by B2C without M-Pesa acting on them;
// Transaction Status finds neither (the lost alert), so they stay sending,
// listed by payouts stuck under their own keys. The operator resolves one
// as paid (refunded by the rail, as the statement shows) and the other as
// not paid (queued, then paid by hand): each by its key, once; the same
// outcome again answers as it is, another is refused. Neither refund is
// sent again.
func TestProductionMPesaLostChangeRefundResolvedByOperator(t *testing.T) {
	t.Parallel()
	fake := mpesatest.NewServer(t, mpesaCreds)
	fake.DropResults(true) // each payout's result is delivered below, once its refund's request is set to fail
	p, _, _ := productionMPesa(t, fake, map[string]string{"LEDGER_STALLED_AFTER": "2s"})

	refundAnswered500 := func() string {
		t.Helper()
		n := len(fake.Prompts())
		id := p.pay(t, p.utok, fmt.Sprintf(`{"merchantId":%q,"amount":1000,"reference":"r","fromCountry":"Kenya","bufferRate":0.05}`,
			p.keMomo))["id"].(string)
		waitUntil(t, "the prompt", func() bool { return len(fake.Prompts()) > n })
		fake.Approve(fake.Prompts()[n].CheckoutID)
		waitUntil(t, "the payout", func() bool { return fake.Payments()[id].Requests == 1 })
		// The payout is made and its result not yet in: the change refund,
		// which follows it, is the next B2C request.
		fake.SetFault("/mpesa/b2c/v3/paymentrequest", mpesatest.Fault{Status500: 1})
		r, err := http.Post(fake.Payments()[id].ResultURL, "application/json", bytes.NewReader(mpesatest.B2CResult(fake.Payments()[id], 0)))
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		p.waitFor(t, id, 20*time.Second, changeIs("sending"))
		return id
	}
	paid := refundAnswered500()
	unpaid := refundAnswered500()
	waitUntil(t, "two lost alerts", func() bool { return strings.Count(p.s.logs.String(), lostB2C) >= 2 })

	var stuck []struct{ PaymentID, Reference, Provider string }
	mustDecode(t, p.s.ledgerctl(t, "payouts", "stuck", "--older", "0s", "--json"), &stuck)
	if len(stuck) != 2 || stuck[0].Reference != "change-"+paid || stuck[0].PaymentID != paid || stuck[1].Reference != "change-"+unpaid ||
		stuck[0].Provider != "mpesa" {
		t.Fatalf("payouts stuck: got %+v, want both change refunds under their keys, oldest first", stuck)
	}
	p.s.resolveRefused(t, "a payout with an outcome", paid, "--paid", "SLK1", "--by", "amina")
	p.s.resolveRefused(t, "no refund", "change-"+uuid.NewString(), "--paid", "SLK1", "--by", "amina")
	p.s.resolveRefused(t, "not a key", "refund-"+paid, "--paid", "SLK1", "--by", "amina")
	p.s.resolveRefused(t, "no return", "return-"+paid, "--paid", "SLK1", "--by", "amina")
	p.s.resolveRefused(t, "a blank reason", "change-"+paid, "--failed", " ", "--by", "amina")

	type resolution struct {
		Payout  struct{ Status, Receipt, Reason string }
		Payment struct {
			Status, ChangeRefundStatus string
			ChangeRefund               struct{ PayoutID, ResolvedBy, Reason, Outcome string }
		}
	}
	resolve := func(args ...string) resolution {
		t.Helper()
		var res resolution
		mustDecode(t, p.s.ledgerctl(t, append([]string{"payouts", "resolve"}, args...)...), &res)
		return res
	}
	done := resolve("change-"+paid, "--paid", "SLK4H7XQ2B", "--by", "amina")
	if r := done.Payment.ChangeRefund; done.Payout.Status != "success" || done.Payout.Receipt != "SLK4H7XQ2B" || done.Payment.Status != "success" ||
		done.Payment.ChangeRefundStatus != "refunded" || r.PayoutID != "SLK4H7XQ2B" || r.ResolvedBy != "operator:amina" || r.Outcome != "success" {
		t.Fatalf("resolve --paid: got %+v", done)
	}
	if again := resolve("change-"+paid, "--paid", "SLK4H7XQ2B", "--by", "amina"); again != done {
		t.Errorf("the same outcome again: got %+v, want %+v", again, done)
	}
	p.s.resolveRefused(t, "another outcome", "change-"+paid, "--failed", "not on the statement", "--by", "amina")
	p.s.resolveRefused(t, "another receipt", "change-"+paid, "--paid", "SLK0000000", "--by", "amina")

	queued := resolve("change-"+unpaid, "--failed", "not on the B2C statement", "--by", "amina")
	if r := queued.Payment.ChangeRefund; queued.Payout.Status != "failed" || queued.Payment.ChangeRefundStatus != "queued" ||
		r.Outcome != "failed" || !strings.Contains(r.Reason, "not on the B2C statement") {
		t.Fatalf("resolve --failed: got %+v", queued)
	}
	if again := resolve("change-"+unpaid, "--failed", "not on the B2C statement", "--by", "amina"); again != queued {
		t.Errorf("the same outcome again: got %+v, want %+v", again, queued)
	}
	p.s.resolveRefused(t, "another outcome", "change-"+unpaid, "--paid", "SLK1", "--by", "amina")
	mustDecode(t, p.s.ledgerctl(t, "payouts", "stuck", "--older", "0s", "--json"), &stuck)
	if len(stuck) != 0 {
		t.Fatalf("payouts stuck after resolving: got %+v", stuck)
	}

	for id, want := range map[string]string{paid: "ledger.payment.change_refunded.v1", unpaid: "ledger.payment.change_refund_queued.v1"} {
		var data struct{ PayoutID string }
		if last := p.lastEvent(t, id, &data); last.Type != want || last.Actor != "operator:amina" || id == paid && data.PayoutID != "SLK4H7XQ2B" {
			t.Errorf("payment %s: last event %s by %q (%+v), want %s by operator:amina", id, last.Type, last.Actor, data, want)
		}
		if _, refunded := p.s.changeOwed(t, id); id == paid && refunded != 1 {
			t.Errorf("payment %s: got %d change_refunded events, want 1", id, refunded)
		}
	}
	// The queued refund is paid by hand as any other.
	p.s.ledgerctl(t, "change", "paid", unpaid, "--reference", "MPESA-PORTAL-7", "--by", "amina")
	p.waitFor(t, unpaid, 5*time.Second, changeIs("refunded"))
	if payments := fake.Payments(); len(payments) != 2 || payments[paid].Requests != 1 || payments[unpaid].Requests != 1 {
		t.Errorf("B2C payments: got %+v, want the two payouts once and no refund sent again", payments)
	}
	p.s.ledgerctl(t, "audit", "verify")
}

// TestProductionMPesaLostReturnResolvedByOperator: unmatched funds marked
// for return are answered 500 by B2C and unknown to Transaction Status;
// the operator resolves the return by its key as the statement shows it
// paid: the funds are returned, once.
func TestProductionMPesaLostReturnResolvedByOperator(t *testing.T) {
	t.Parallel()
	fake := mpesatest.NewServer(t, mpesaCreds)
	p, _, _ := productionMPesa(t, fake, map[string]string{"LEDGER_VALIDITY": "momo=2s", "LEDGER_STALLED_AFTER": "1s"})

	id := p.pay(t, p.utok, fmt.Sprintf(`{"merchantId":%q,"amount":1000,"reference":"r","fromCountry":"Kenya"}`, p.keMomo))["id"].(string)
	waitUntil(t, "the prompt", func() bool { return len(fake.Prompts()) == 1 })
	fake.Cancel(fake.Prompts()[0].CheckoutID)
	p.waitFor(t, id, 20*time.Second, statusIs("expired"))
	fake.Approve(fake.Prompts()[0].CheckoutID) // paid after all: unmatched
	waitUntil(t, "the late payment", func() bool { return strings.Contains(p.s.logs.String(), "a prompt was paid after its payment ended") })
	var queue []struct{ ID string }
	mustDecode(t, p.s.ledgerctl(t, "unmatched", "list", "--json"), &queue)
	if len(queue) != 1 {
		t.Fatalf("unmatched list: got %+v, want the late payment", queue)
	}
	key := "return-" + queue[0].ID
	fake.SetFault("/mpesa/b2c/v3/paymentrequest", mpesatest.Fault{Status500: 1})
	p.s.ledgerctl(t, "unmatched", "return", queue[0].ID, "--by", "amina")
	waitUntil(t, "the lost alert", func() bool { return strings.Contains(p.s.logs.String(), lostB2C) })

	var stuck []struct{ PaymentID, Reference string }
	mustDecode(t, p.s.ledgerctl(t, "payouts", "stuck", "--older", "0s", "--json"), &stuck)
	if len(stuck) != 1 || stuck[0].Reference != key || stuck[0].PaymentID != queue[0].ID {
		t.Fatalf("payouts stuck: got %+v, want the return under %s", stuck, key)
	}
	var res struct {
		Payout         struct{ Status, Receipt string }
		UnmatchedFunds struct {
			Status string
			Return struct{ PayoutID, ResolvedBy, Outcome string }
		}
	}
	mustDecode(t, p.s.ledgerctl(t, "payouts", "resolve", key, "--paid", "SLK9RETURN", "--by", "amina"), &res)
	if u := res.UnmatchedFunds; res.Payout.Status != "success" || u.Status != "returned" || u.Return.PayoutID != "SLK9RETURN" ||
		u.Return.ResolvedBy != "operator:amina" || u.Return.Outcome != "success" {
		t.Fatalf("resolve --paid: got %+v", res)
	}
	p.s.ledgerctl(t, "payouts", "resolve", key, "--paid", "SLK9RETURN", "--by", "amina")
	p.s.resolveRefused(t, "another outcome", key, "--failed", "not on the statement", "--by", "amina")
	p.s.waitUnmatched(t, queue[0].ID, "returned")
	if n := len(fake.Payments()); n != 0 {
		t.Errorf("got %d B2C payments, want none: the return answered 500 is never sent again", n)
	}
	p.s.ledgerctl(t, "audit", "verify")
}
