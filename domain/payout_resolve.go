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
	receipt, reason := strings.TrimSpace(c.Receipt), strings.TrimSpace(c.Reason)
	switch {
	case p.Status != StatusTransferring:
		return nil, Errorf(Conflict, "payment_not_transferring", "payment %s is %s, not transferring: its payout has an outcome", p.ID, p.Status)
	case c.By == "":
		return nil, Invalidf("actor", "a payout's resolution names its operator")
	case c.Paid && receipt == "":
		return nil, Invalidf("receipt", "a paid payout names the provider's receipt")
	case !c.Paid && reason == "":
		return nil, Invalidf("reason", "an unpaid payout names why it was not paid")
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
