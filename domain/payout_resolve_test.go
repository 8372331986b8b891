package domain

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
)

// transferringMomo is a Kenyan momo payout awaiting its provider's outcome.
func transferringMomo(t *testing.T) Payment {
	t.Helper()
	p := newPayment(t, `{"MerchantID":"m","Amount":1000}`, testMerchant(CountryKenya, PayoutMomo))
	events, err := DecideDeposit(p, RecordDeposit{Amount: p.DepositDue, Now: businessHours})
	p = step(t, p, events, err, "payment.deposited")
	events, err = DecideBeginPayout(p, BeginPayout{Prices: lifecyclePrices, Now: businessHours})
	return step(t, p, events, err, "payment.transferring")
}

func TestResolvePayoutPaid(t *testing.T) {
	t.Parallel()
	p := transferringMomo(t)
	events, err := DecideResolvePayout(p, ResolvePayout{Paid: true, Receipt: " SLK4H7XQ2B ", By: "operator:amina", Now: businessHours})
	p = step(t, p, events, err, "payment.success")
	done := events[0].(PaymentSucceeded)
	if p.Status != StatusSuccess || done.PayoutID != "SLK4H7XQ2B" || done.ResolvedBy != "operator:amina" || !done.AmountSettled.Equal(p.PayoutAmount) {
		t.Fatalf("got %s, %+v; want success with the operator's receipt and name", p.Status, done)
	}
	// Ended: a second resolution is refused, not ignored.
	_, err = DecideResolvePayout(p, ResolvePayout{Reason: "not paid", By: "operator:amina", Now: businessHours})
	wantError(t, err, Conflict, "payment_not_transferring")
}

func TestResolvePayoutNotPaidIsRefunded(t *testing.T) {
	t.Parallel()
	p := transferringMomo(t)
	events, err := DecideResolvePayout(p, ResolvePayout{Reason: "no such transaction on the B2C statement", By: "operator:amina", Now: businessHours})
	p = step(t, p, events, err, "payment.failed")
	failed := events[0].(PaymentFailed)
	if p.Status != StatusFailed || failed.ResolvedBy != "operator:amina" || failed.Reason != "no such transaction on the B2C statement" {
		t.Fatalf("got %s, %+v", p.Status, failed)
	}
	// The payout's money is owed back as a rejected payout's is.
	want, _ := DecidePayoutResult(transferringMomo(t), PayoutResult{Rejected: true, Reason: "x", Now: businessHours})
	if got, w := PostingsOf(events[0]), PostingsOf(want[0]); len(got) != len(w) || got[0].Account != w[0].Account || got[len(got)-1].Account != w[len(w)-1].Account {
		t.Fatalf("got postings %+v, want a failed payout's %+v", got, w)
	}
}

func TestResolvePayoutRefusals(t *testing.T) {
	t.Parallel()
	p := transferringMomo(t)
	_, err := DecideResolvePayout(p, ResolvePayout{Paid: true, By: "operator:amina", Now: businessHours})
	wantError(t, err, Invalid, "validation_failed", "receipt")
	_, err = DecideResolvePayout(p, ResolvePayout{Reason: "  ", By: "operator:amina", Now: businessHours})
	wantError(t, err, Invalid, "validation_failed", "reason")
	_, err = DecideResolvePayout(p, ResolvePayout{Paid: true, Receipt: "R1", Now: businessHours})
	wantError(t, err, Invalid, "validation_failed", "actor")
	created := newPayment(t, `{"MerchantID":"m","Amount":1000}`, testMerchant(CountryKenya, PayoutMomo))
	_, err = DecideResolvePayout(created, ResolvePayout{Paid: true, Receipt: "R1", By: "operator:amina", Now: businessHours})
	wantError(t, err, Conflict, "payment_not_transferring")
}

// A change refund its rail cannot account for is ended by the operator as
// a payout is: paid, it is refunded through the rail's account (the rail's
// outcome, so a later reversal is taken); not paid, it is queued for an
// operator to pay by hand. The same outcome again decides nothing; any
// other, or a refund not being sent, is refused.
func TestResolveChangeRefundPayout(t *testing.T) {
	t.Parallel()
	sent := func(t *testing.T) (Payment, []Posting) {
		p, all := paidOut(t, `{"MerchantID":"m","Amount":1500,"BufferRate":0.05,"FromCountry":"KES"}`, testMerchant(CountryKenya, PayoutMomo),
			&Payer{PhoneNumber: "+254712345678"})
		_, err := DecideResolveChangeRefundPayout(p, ResolvePayout{Paid: true, Receipt: "R1", By: "operator:amina", Now: businessHours})
		wantError(t, err, Conflict, "change_refund_not_sending")
		events, err := DecideSendChangeRefund(p, SendChangeRefund{Rails: everyRail, Now: businessHours})
		return step(t, p, events, err, "payment.change_refund_sent"), all
	}
	t.Run("paid", func(t *testing.T) {
		t.Parallel()
		p, all := sent(t)
		for _, bad := range []struct {
			c     ResolvePayout
			field string
		}{{ResolvePayout{Paid: true, Receipt: "R1"}, "actor"}, {ResolvePayout{Paid: true, Receipt: " ", By: "operator:amina"}, "receipt"}} {
			_, err := DecideResolveChangeRefundPayout(p, bad.c)
			wantError(t, err, Invalid, "validation_failed", bad.field)
		}
		paid := ResolvePayout{Paid: true, Receipt: " SLK4H7XQ2B ", By: "operator:amina", Now: businessHours}
		events, err := DecideResolveChangeRefundPayout(p, paid)
		after := step(t, p, events, err, "payment.change_refunded")
		if e := events[0].(PaymentChangeRefunded); e.ResolvedBy != "operator:amina" || e.PayoutID != "SLK4H7XQ2B" {
			t.Errorf("got %+v, want the receipt, resolved by the operator", e)
		}
		if want, _ := DecideChangeRefundResult(p, PayoutResult{PayoutID: "SLK4H7XQ2B", Now: businessHours}); fmt.Sprint(PostingsOf(events[0])) != fmt.Sprint(PostingsOf(want[0])) {
			t.Errorf("got postings %+v, want the rail's %+v", PostingsOf(events[0]), PostingsOf(want[0]))
		}
		if !balances(append(all, PostingsOf(events[0])...))["change_payable KES"].IsZero() {
			t.Error("change_payable is not 0 once the change is refunded")
		}
		r := after.ChangeRefund
		if after.ChangeRefundStatus != ChangeRefunded || r.Outcome != RefundSucceeded || r.ResolvedBy != "operator:amina" || r.PayoutID != "SLK4H7XQ2B" {
			t.Errorf("got %s %+v, want refunded by the rail, as the operator found", after.ChangeRefundStatus, r)
		}
		if again, err := DecideResolveChangeRefundPayout(after, paid); err != nil || len(again) > 0 {
			t.Errorf("the same outcome again: got %v %v, want nothing", again, err)
		}
		_, err = DecideResolveChangeRefundPayout(after, ResolvePayout{Reason: "not paid", By: "operator:amina", Now: businessHours})
		wantError(t, err, Conflict, "change_refund_not_sending")
		_, err = DecideResolveChangeRefundPayout(after, ResolvePayout{Paid: true, Receipt: "OTHER", By: "operator:amina", Now: businessHours})
		wantError(t, err, Conflict, "change_refund_not_sending")
		// The rail made it: the payer's bank can still send it back.
		events, err = DecideChangeRefundReversal(after, PayoutReversal{PayoutID: "SLK4H7XQ2B", Reason: "closed", Now: businessHours})
		step(t, after, events, err, "payment.change_refund_queued")
	})
	t.Run("not paid", func(t *testing.T) {
		t.Parallel()
		p, _ := sent(t)
		failed := ResolvePayout{Reason: " not on the B2C statement ", By: "operator:amina", Now: businessHours}
		events, err := DecideResolveChangeRefundPayout(p, failed)
		after := step(t, p, events, err, "payment.change_refund_queued")
		if r := after.ChangeRefund; after.ChangeRefundStatus != ChangeQueued || r.Outcome != RefundFailed || len(PostingsOf(events[0])) != 0 ||
			r.Reason != "not made, as operator:amina found at the provider: not on the B2C statement" {
			t.Errorf("got %s %+v, want queued, the rail's refund failed", after.ChangeRefundStatus, r)
		}
		if again, err := DecideResolveChangeRefundPayout(after, failed); err != nil || len(again) > 0 {
			t.Errorf("the same outcome again: got %v %v, want nothing", again, err)
		}
		_, err = DecideResolveChangeRefundPayout(after, ResolvePayout{Paid: true, Receipt: "R1", By: "operator:amina", Now: businessHours})
		wantError(t, err, Conflict, "change_refund_not_sending")
		events, err = DecideResolveChangeRefund(after, ResolveChangeRefund{Reference: "BANK-1", By: "operator:amina", Now: businessHours})
		step(t, after, events, err, "payment.change_refunded")
	})
}

// A return its rail cannot account for is ended the same way: returned
// through the rail's account, or refused (the operator's to send).
func TestResolveReturnPayout(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	u := ApplyUnmatched(UnmatchedFunds{}, UnmatchedFundsReceived{UnmatchedID: uuid.New(), TenantID: OperatorBooks, Reason: UnmatchedNoMatch,
		Rail: FundingMomo, Amount: decimal.RequireFromString("120"), Currency: "KES", DebtorAccount: "254712345678", At: now})
	events, err := DecideReturnUnmatched(u, ReturnUnmatched{By: "ops", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	u = ApplyUnmatched(u, events[0])
	_, err = DecideResolveReturnPayout(u, ResolvePayout{Paid: true, Receipt: "R1", By: "operator:amina", Now: now})
	wantError(t, err, Conflict, "return_not_sending")
	events, err = DecideSendReturn(u, everyRail, now)
	wantTypes(t, events, err, "unmatched_funds.return_sent")
	u = ApplyUnmatched(u, events[0])

	paid := ResolvePayout{Paid: true, Receipt: "SLK1", By: "operator:amina", Now: now}
	events, err = DecideResolveReturnPayout(u, paid)
	wantTypes(t, events, err, "unmatched_funds.returned")
	if want, _ := DecideReturnResult(u, PayoutResult{PayoutID: "SLK1", Now: now}); fmt.Sprint(PostingsOf(events[0])) != fmt.Sprint(PostingsOf(want[0])) {
		t.Errorf("got postings %+v, want the rail's %+v", PostingsOf(events[0]), PostingsOf(want[0]))
	}
	done := ApplyUnmatched(u, roundTrip(t, events[0]))
	if done.Status != UnmatchedReturned || done.Return.Outcome != RefundSucceeded || done.Return.ResolvedBy != "operator:amina" {
		t.Errorf("got %s %+v, want returned by the rail, as the operator found", done.Status, done.Return)
	}
	if again, err := DecideResolveReturnPayout(done, paid); err != nil || len(again) > 0 {
		t.Errorf("the same outcome again: got %v %v, want nothing", again, err)
	}
	_, err = DecideResolveReturnPayout(done, ResolvePayout{Reason: "x", By: "operator:amina", Now: now})
	wantError(t, err, Conflict, "return_not_sending")

	events, err = DecideResolveReturnPayout(u, ResolvePayout{Reason: "not on the statement", By: "operator:amina", Now: now})
	wantTypes(t, events, err, "unmatched_funds.return_refused")
	if refused := ApplyUnmatched(u, events[0]); refused.Status != UnmatchedReturning || refused.ReturnSending() || refused.Return.Outcome != RefundFailed {
		t.Errorf("refused: got %s %+v, want returning, the operator's", refused.Status, refused.Return)
	}
}
