package workers

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ledger/ledger/domain"
)

// stalledBatch bounds the payments one sweep takes on.
const stalledBatch = 200

// runStalled is the lifecycle's safety net. A step is driven by its
// JetStream message, and a message that keeps failing (a price feed or a
// payout rail down for minutes) is parked as a dead letter after its last
// delivery: without this sweep its payment would stay deposited or
// transferring for good. Every StalledPoll it takes the payments that have
// not moved for StalledAfter (longer than the consumer's own retries) and
// runs their step again. Steps are decided on the payment's current state
// and the rail is called with the payment id as idempotency key, so a sweep
// racing the consumer, or another process's sweep, changes nothing twice.
func (w *Workers) runStalled(ctx context.Context) error {
	return w.poll(ctx, w.cfg.StalledPoll, "stalled payments: sweep", w.moveStalled)
}

// moveStalled runs the next step of every payment stalled since before
// now - StalledAfter, oldest first.
func (w *Workers) moveStalled(ctx context.Context) error {
	rows, err := w.pool.Query(ctx, `SELECT id, tenant_id, status FROM payments
		WHERE (status = 'transferring'
			OR (status = 'deposited' AND NOT coalesce((state->>'heldForDocuments')::boolean, false)))
			AND updated_at < $1
		ORDER BY updated_at LIMIT $2`, w.now().Add(-w.cfg.StalledAfter), stalledBatch)
	if err != nil {
		return err
	}
	type stalled struct {
		payment, tenant uuid.UUID
		status          string
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (stalled, error) {
		var s stalled
		err := r.Scan(&s.payment, &s.tenant, &s.status)
		return s, err
	})
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
	return nil
}
