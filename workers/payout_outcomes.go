package workers

import (
	"context"

	"github.com/google/uuid"

	"github.com/ledger/ledger/domain"
)

// PayoutSettled is a payout rail's report that it learned a payout's
// outcome outside a call (a provider's webhook): the payout is called
// again, the rail answers the outcome it recorded, and the payment moves
// to success or failed. A payment no longer transferring is left as it is.
func (w *Workers) PayoutSettled(ctx context.Context, tenantID, paymentID uuid.UUID) error {
	return w.payOut(ctx, tenantID, paymentID)
}

// PayoutReversed records that a payment's confirmed payout came back
// (payment.payout_reversed); a repeated report records nothing new.
func (w *Workers) PayoutReversed(ctx context.Context, tenantID, paymentID uuid.UUID, payoutID, reason string) error {
	_, err := w.execute(ctx, tenantID, paymentID, func(p domain.Payment) ([]domain.Event, error) {
		return domain.DecidePayoutReversal(p, domain.PayoutReversal{PayoutID: payoutID, Reason: reason, Now: w.now()})
	})
	return err
}
