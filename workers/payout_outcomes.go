package workers

import (
	"context"

	"github.com/google/uuid"

	"github.com/ledger/ledger/domain"
)

// PayoutSettled is a payout rail's report that it learned the outcome of
// a payout, or of a change refund, outside a call (a provider's webhook):
// the payout (or refund) is called again, the rail answers the outcome it
// recorded, and the payment moves to success or failed (its change to
// refunded or queued). A payment no longer transferring, whose change is
// not being sent, is left as it is.
//
// A rail's payouts are also the returns of unmatched funds, reported
// under the item's id (no payment's): its return is settled instead.
func (w *Workers) PayoutSettled(ctx context.Context, tenantID, paymentID uuid.UUID) error {
	err := w.payOut(ctx, tenantID, paymentID)
	if domain.ErrorKind(err) == domain.NotFound {
		return w.settleReturn(ctx, paymentID)
	}
	if err != nil {
		return err
	}
	return w.settleChangeRefund(ctx, tenantID, paymentID)
}

// PayoutReversed records that a payment's confirmed payout came back
// (payment.payout_reversed), or, when key is its change refund's
// (domain.ChangeRefundKey), that the refund did (the change is owed again
// and queued for an operator); a repeated report records nothing new.
func (w *Workers) PayoutReversed(ctx context.Context, tenantID, paymentID uuid.UUID, key, payoutID, reason string) error {
	if key == domain.ReturnKey(paymentID) {
		// Returned unmatched funds came back to the balance: the rail has
		// alerted the operators, whose they are again.
		w.log.Error("a return of unmatched funds was reversed; it is the operator's", "unmatched", paymentID, "reason", reason)
		return nil
	}
	_, err := w.execute(ctx, tenantID, paymentID, func(p domain.Payment) ([]domain.Event, error) {
		r := domain.PayoutReversal{PayoutID: payoutID, Reason: reason, Now: w.now()}
		if key == domain.ChangeRefundKey(paymentID) {
			return domain.DecideChangeRefundReversal(p, r)
		}
		return domain.DecidePayoutReversal(p, r)
	})
	return err
}
