package workers

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/workers/rails/payout"
)

// The change refund worker pays a payment's change back once its payout
// has succeeded (domain/change_refund.go). Its durable takes the success
// events; the step records the intent (payment.change_refund_sent, or
// queued when no rail can pay the payer), calls the payout rail with the
// refund's own idempotency key and records the answer. A crash or a
// redelivery anywhere repeats the step on the payment's current state: an
// intent already recorded is not recorded again, and the rail answers the
// repeated key as it did the first time, so the change is paid once. A
// refund the provider holds pending (ErrPending) ends when the rail hears
// (PayoutSettled), or when the stalled sweep asks again (refundStalled).

// changeRefundsDurable is the change refund worker's durable: never rename
// it, a new name replays every success event (each finds its refund made).
const changeRefundsDurable = "change_refunds"

func (w *Workers) changeRefundsConsumer() *consumer {
	return &consumer{name: changeRefundsDurable, stream: w.cfg.Stream, filter: w.cfg.SubjectPrefix + ".*.payment.*.success",
		maxDeliver: 12, concurrency: 4, handle: w.handleChangeRefund, log: w.log, metrics: w.metrics}
}

func (w *Workers) handleChangeRefund(ctx context.Context, subject string) error {
	tenantID, paymentID, _, ok := paymentSubject(subject)
	if !ok || w.settledOwingNoChange.has(paymentID) {
		// Most payments owe no change, and most success messages reach
		// the process that recorded the success: acked without a read.
		return nil
	}
	return w.refundChange(ctx, tenantID, paymentID)
}

// refundChange records how a successful payment's change goes back and,
// when a rail can pay it, pays it.
func (w *Workers) refundChange(ctx context.Context, tenantID, paymentID uuid.UUID) error {
	p, err := w.execute(ctx, tenantID, paymentID, func(p domain.Payment) ([]domain.Event, error) {
		return domain.DecideSendChangeRefund(p, domain.SendChangeRefund{Rails: w.cfg.RefundRails, Now: w.now()})
	})
	if err != nil || p.ChangeRefundStatus != domain.ChangeSending {
		return err
	}
	return w.payChangeRefund(ctx, tenantID, p)
}

// payChangeRefund calls the rail for p's change refund, sent, and records
// its answer.
func (w *Workers) payChangeRefund(ctx context.Context, tenantID uuid.UUID, p domain.PaymentSnapshot) error {
	var payer domain.Payer // a refund is sent only to a payer the rail reported
	if p.Payer != nil {
		payer = *p.Payer
	}
	return w.payBack(ctx, payerRequest(p.ID, tenantID, *p.ChangeRefund, p.ChangeOwed(), p.DepositCurrency, payer),
		func(r domain.PayoutResult) error {
			_, err := w.executeFrom(ctx, tenantID, p.ID, p, func(p domain.Payment) ([]domain.Event, error) {
				return domain.DecideChangeRefundResult(p, r)
			})
			return err
		})
}

// payerRequest is the payout rail's request that pays a payer back: the
// refund sent (its rail and key) of amount, to payer, for id (a payment,
// or unmatched funds).
func payerRequest(id, tenantID uuid.UUID, sent domain.PayerRefund, amount decimal.Decimal, currency string, payer domain.Payer) payout.Request {
	return payout.Request{PaymentID: id, TenantID: tenantID, IdempotencyKey: sent.IdempotencyKey, Refund: true, Rail: sent.Rail,
		Amount: amount, Currency: currency, Name: payer.Name, BankName: payer.BankName, AccountNumber: payer.Account,
		PhoneNumber: payer.PhoneNumber}
}

// payBack calls the rail for r, money back to a payer, and records its
// answer. One the provider holds pending records nothing: the rail's
// report (PayoutSettled) or the stalled sweep calls again.
func (w *Workers) payBack(ctx context.Context, r payout.Request, record func(domain.PayoutResult) error) error {
	out, err := w.rail.Payout(ctx, r)
	if errors.Is(err, payout.ErrPending) {
		w.log.Debug("refund: pending at the provider", "key", r.IdempotencyKey)
		return nil
	}
	if err != nil {
		return fmt.Errorf("refund %s: %w", r.IdempotencyKey, err)
	}
	return record(domain.PayoutResult{PayoutID: out.PayoutID, Rejected: out.Rejected, Reason: out.Reason, Now: w.now()})
}

// settleChangeRefund is a rail's report that it learned how a refund sent
// ended: the rail is called again, answers what it recorded, and the
// answer is recorded. A payment whose refund is not being sent is left to
// the change refund worker: a payout's report does not make a refund's call.
func (w *Workers) settleChangeRefund(ctx context.Context, tenantID, paymentID uuid.UUID) error {
	p, err := w.payments.Payment(ctx, tenantID, paymentID)
	if err != nil || p.ChangeRefundStatus != domain.ChangeSending {
		return err
	}
	return w.payChangeRefund(ctx, tenantID, p)
}

// refundStalled takes the next batch of the successful payments whose
// change is still pending or sending since before StalledAfter (a message
// parked after its last delivery, a provider that never reported) and
// runs their refund step again. The index payments_change_owed has the
// same predicate (projections migration 0023).
func (w *Workers) refundStalled(ctx context.Context) error {
	list, err := w.stalledPayments(ctx, &w.stalledRefunds,
		`status = 'success' AND state->>'changeRefundStatus' IN ('pending', 'sending')`)
	if err != nil {
		return err
	}
	for _, s := range list {
		w.metrics.stalled.Inc()
		if err := w.refundChange(ctx, s.tenant, s.payment); err != nil {
			w.log.Warn("stalled change refunds: step failed; the next sweep tries again", "payment", s.payment, "err", err)
		}
	}
	return w.returnsStalled(ctx)
}
