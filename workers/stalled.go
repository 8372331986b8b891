package workers

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ledger/ledger/domain"
)

// stalledBatch bounds the payments one sweep takes on.
const stalledBatch = 200

// stalledCursor is where the sweep goes on from: it pages through the
// stalled payments in the order of when they last moved (then id), back to
// the start after the last page. A step that fails appends nothing and
// leaves that time as it was, so reading the oldest batch every time let a
// batch of payments that keep failing (a payout rail with no production
// adapter, say) hide every payment behind them for good.
type stalledCursor struct {
	batch int // payments a sweep takes on (stalledBatch; tests lower it)
	at    time.Time
	id    uuid.UUID
}

// runStalled is the lifecycle's safety net. A step is driven by its
// JetStream message, and a message that keeps failing (a price feed or a
// payout rail down for minutes) is parked as a dead letter after its last
// delivery: without this sweep its payment would stay deposited or
// transferring for good. Every StalledPoll it takes the next batch of the
// payments that have not moved for StalledAfter (longer than the consumer's
// own retries) and runs their step again. Steps are decided on the
// payment's current state and the rail is called with the payment id as
// idempotency key, so a sweep racing the consumer, or another process's
// sweep, changes nothing twice.
func (w *Workers) runStalled(ctx context.Context) error {
	return w.poll(ctx, w.cfg.StalledPoll, "stalled payments: sweep", w.moveStalled)
}

// moveStalled runs the next step of the next batch of payments stalled
// since before now - StalledAfter: transferring ones, and deposited ones
// that await their payout (domain.Payment.AwaitsPayout). The index
// payments_in_flight has the same predicate and finds them, keyed by id
// (projections migration 0019): the in-flight payments are few, and
// sorting them by when they last moved costs little. Then it does the
// same for the successful payments whose change is owed and not yet
// refunded or queued (refundStalled).
//
// A payment has not moved since its state's updatedAt: the time of its
// latest lifecycle, document or change refund event. The row's updated_at
// also moved with each webhook attempt while attempts were events, so a
// payment whose receiver kept failing looked as if it had moved at each
// retry. (The row's is the fallback for a state without the member, which
// no payment has.)
func (w *Workers) moveStalled(ctx context.Context) error {
	list, err := w.stalledPayments(ctx, &w.stalled, `status = 'transferring'
		OR (status = 'deposited' AND NOT (coalesce((state->>'heldForDocuments')::boolean, false)
		                                 AND coalesce((state->>'documents')::int, 0) = 0))`)
	if err != nil {
		return err
	}
	for _, s := range list {
		step := w.beginPayout
		if s.status == domain.StatusTransferring {
			step = w.payOut
		}
		w.metrics.stalled.Inc()
		if err := step(ctx, s.tenant, s.payment); err != nil {
			w.log.Warn("stalled payments: step failed; the next sweep tries again",
				"payment", s.payment, "status", s.status, "err", err)
		}
	}
	return w.refundStalled(ctx)
}

// stalledPayment is a payment the sweep takes on.
type stalledPayment struct {
	payment, tenant uuid.UUID
	status          string
	moved           time.Time
}

// stalledPayments reads the next page of cur, the payments that match
// where (an index's predicate) and have not moved since StalledAfter.
func (w *Workers) stalledPayments(ctx context.Context, cur *stalledCursor, where string) ([]stalledPayment, error) {
	rows, err := w.pool.Query(ctx, `SELECT id, tenant_id, status, moved FROM (
			SELECT id, tenant_id, status, coalesce((state->>'updatedAt')::timestamptz, updated_at) AS moved FROM payments
			WHERE `+where+`) AS stalled
		WHERE moved < $1 AND (moved, id) > ($3, $4)
		ORDER BY moved, id LIMIT $2`, w.now().Add(-w.cfg.StalledAfter), cur.batch, cur.at, cur.id)
	if err != nil {
		return nil, err
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (stalledPayment, error) {
		var s stalledPayment
		err := r.Scan(&s.payment, &s.tenant, &s.status, &s.moved)
		return s, err
	})
	if err != nil {
		return nil, err
	}
	if len(list) < cur.batch {
		cur.at, cur.id = time.Time{}, uuid.Nil // the last page: start again next time
	} else {
		cur.at, cur.id = list[len(list)-1].moved, list[len(list)-1].payment
	}
	return list, nil
}
