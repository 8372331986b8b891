package domain

import (
	"testing"
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
