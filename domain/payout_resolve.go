package domain

import (
	"fmt"
	"strings"
	"time"
)

// A payout its provider cannot account for (a request whose answer was
// lost and that the provider does not know, or a transfer the provider
// holds pending for want of an OTP or a balance) leaves its payment
// transferring: paying again might pay twice, so nothing retries it. The
// operator, who can see the provider's own statement, ends it: paid, with
// the provider's receipt, or not paid, with the reason. Not paid is a
// failed payout like any other: the payout is owed back as a refund.

// ResolvePayout is an operator's outcome for a transferring payment's
// payout.
type ResolvePayout struct {
	Paid    bool
	Receipt string // the provider's receipt or transfer code, when paid
	Reason  string // why it was not paid, when not
	By      string // the operator
	Now     time.Time
}

// DecideResolvePayout ends a transferring payment as the operator found
// its payout at the provider. Unlike DecidePayoutResult, a payment no
// longer transferring is refused: the operator must learn that the
// payout was ended meanwhile, and by what.
func DecideResolvePayout(p Payment, c ResolvePayout) ([]Event, error) {
	if p.Status != StatusTransferring {
		return nil, Errorf(Conflict, "payment_not_transferring", "payment %s is %s, not transferring: its payout has an outcome", p.ID, p.Status)
	}
	receipt, reason, err := c.outcome()
	if err != nil {
		return nil, err
	}
	at := c.Now.UTC().Truncate(time.Millisecond)
	if !c.Paid {
		return []Event{PaymentFailed{Reason: reason, ResolvedBy: c.By, At: at, Postings: failurePostings(p),
			Message: fmt.Sprintf("Payout not made, as %s found at the provider: %s", c.By, reason)}}, nil
	}
	return []Event{PaymentSucceeded{AmountSettled: p.PayoutAmount, PayoutID: receipt, ResolvedBy: c.By, At: at, Postings: settlementPostings(p),
		Message: fmt.Sprintf("Settled %s to the recipient, as %s found at the provider (receipt %s)",
			FormatAmount(p.PayoutAmount, p.DestinationUnit()), c.By, receipt)}}, nil
}

// outcome is c's receipt and reason, trimmed, or why c is not an
// operator's outcome.
func (c ResolvePayout) outcome() (receipt, reason string, err error) {
	receipt, reason = strings.TrimSpace(c.Receipt), strings.TrimSpace(c.Reason)
	switch {
	case c.By == "":
		return "", "", Invalidf("actor", "a payout's resolution names its operator")
	case c.Paid && receipt == "":
		return "", "", Invalidf("receipt", "a paid payout names the provider's receipt")
	case !c.Paid && reason == "":
		return "", "", Invalidf("reason", "an unpaid payout names why it was not paid")
	}
	return receipt, reason, nil
}

// A refund (a payment's change, returned unmatched funds) is a payout
// too, under its own key, and its provider can lose it the same way: the
// rail's row stays pending and the refund stays sending. The operator
// ends it as a payout, with the same command: paid, the refund is made
// (the rail's receipt as its payoutId, the money leaving through the
// rail's account, as the rail would have recorded it: the rail did pay);
// not paid, it was refused, as a refund the rail refused is. The refund's
// Outcome is the rail's either way, which reconciliation compares with
// the provider's statement. Recording the same outcome again (the
// command repeated after a failure) decides nothing; another is refused.

// notMade is the reason recorded for a refund the operator found the rail
// did not make.
func notMade(c ResolvePayout, reason string) string {
	return fmt.Sprintf("not made, as %s found at the provider: %s", c.By, reason)
}

// DecideResolveChangeRefundPayout ends p's change refund, sent to a rail
// that cannot account for it, as the operator found it at the provider:
// refunded, or queued for an operator to pay by hand.
func DecideResolveChangeRefundPayout(p Payment, c ResolvePayout) ([]Event, error) {
	receipt, reason, err := c.outcome()
	r := p.changeRefund()
	switch {
	case err != nil:
		return nil, err
	case c.Paid && r.Outcome == RefundSucceeded && r.PayoutID == receipt, !c.Paid && r.Outcome == RefundFailed:
		return nil, nil
	case p.ChangeRefundStatus != ChangeSending:
		return nil, Errorf(Conflict, "change_refund_not_sending", "payment %s's change refund is %s, not being sent: its rail has an outcome",
			p.ID, orNone(p.ChangeRefundStatus))
	}
	at := c.Now.UTC().Truncate(time.Millisecond)
	if !c.Paid {
		return []Event{PaymentChangeRefundQueued{Reason: notMade(c, reason), At: at}}, nil
	}
	return []Event{PaymentChangeRefunded{PayoutID: receipt, ResolvedBy: c.By, At: at,
		Postings: changeRefundPostings(p, ExternalAccount(r.Rail))}}, nil
}

// DecideResolveReturnPayout ends u's return, sent to a rail that cannot
// account for it, as the operator found it at the provider: returned, or
// refused (left to the operator to send by hand).
func DecideResolveReturnPayout(u UnmatchedFunds, c ResolvePayout) ([]Event, error) {
	receipt, reason, err := c.outcome()
	r := u.payerReturn()
	switch {
	case err != nil:
		return nil, err
	case c.Paid && r.Outcome == RefundSucceeded && r.PayoutID == receipt, !c.Paid && r.Outcome == RefundFailed:
		return nil, nil
	case !u.ReturnSending():
		return nil, Errorf(Conflict, "return_not_sending", "unmatched funds %s are %s and their return is not being sent: its rail has an outcome",
			u.ID, u.Status)
	}
	at := c.Now.UTC().Truncate(time.Millisecond)
	if !c.Paid {
		return []Event{UnmatchedFundsReturnRefused{Reason: notMade(c, reason), At: at}}, nil
	}
	return []Event{UnmatchedFundsReturned{PayoutID: receipt, ResolvedBy: c.By, At: at, Postings: returnPostings(u)}}, nil
}
