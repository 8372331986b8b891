package workers

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ledger/ledger/domain"
)

// runExpiry is the durable expiry timer: payment_deadlines is written with
// payment.created and cleared when the payment leaves created, so after a
// restart every overdue payment is found at the first poll. Several
// processes may pick the same payment: the domain expires it once (the
// second decision sees it expired and decides nothing).
func (w *Workers) runExpiry(ctx context.Context) error {
	t := time.NewTicker(w.cfg.ExpiryPoll)
	defer t.Stop()
	for {
		if err := w.expireDue(ctx); err != nil && ctx.Err() == nil {
			w.log.Warn("expiry: poll", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// expireDue expires the payments whose deadline has passed.
func (w *Workers) expireDue(ctx context.Context) error {
	now := w.now()
	rows, err := w.pool.Query(ctx, `SELECT payment_id, tenant_id FROM payment_deadlines
		WHERE expires_at <= $1 ORDER BY expires_at LIMIT 200`, now)
	if err != nil {
		return err
	}
	type due struct{ payment, tenant uuid.UUID }
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (due, error) {
		var d due
		return d, r.Scan(&d.payment, &d.tenant)
	})
	if err != nil {
		return err
	}
	for _, d := range list {
		p, err := w.execute(ctx, d.tenant, d.payment, func(p domain.Payment) ([]domain.Event, error) {
			return domain.DecideExpire(p, now)
		})
		if err != nil {
			if domain.ErrorKind(err) != domain.Conflict {
				w.log.Warn("expiry: expire", "payment", d.payment, "err", err)
			}
			continue
		}
		if p.Status == domain.StatusExpired {
			w.metrics.expired.Inc()
		}
	}
	return nil
}
