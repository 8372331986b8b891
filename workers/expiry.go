package workers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/workers/rails/lightning"
)

// runExpiry is the durable expiry timer: payment_deadlines is written with
// payment.created and cleared when the payment leaves created, so after a
// restart every overdue payment is found at the first poll. A payment
// whose Lightning invoice is watched is expired only once the node says
// the invoice was not settled (see paidBeforeExpiry). Several
// processes may pick the same payment: the domain expires it once (the
// second decision sees it expired and decides nothing).
func (w *Workers) runExpiry(ctx context.Context) error {
	return w.poll(ctx, w.cfg.ExpiryPoll, "expiry: poll", w.expireDue)
}

// expiryPage is how many overdue payments one query reads.
const expiryPage = 200

// expireDue expires the payments whose deadline has passed, reading them
// page by page in deadline order. Every page is read, not only the first:
// a payment whose invoice the node cannot answer for is left for the next
// poll, and while the node is down a page of those would otherwise hold
// every later deadline, Lightning or not, behind it.
func (w *Workers) expireDue(ctx context.Context) error {
	now := w.now()
	var afterAt time.Time
	var afterID uuid.UUID
	for {
		page, err := w.overdue(ctx, now, afterAt, afterID)
		if err != nil || len(page) == 0 {
			return err
		}
		for _, d := range page {
			w.expire(ctx, d, now)
		}
		last := page[len(page)-1]
		afterAt, afterID = last.expiresAt, last.payment
		if len(page) < w.expiryPage {
			return nil
		}
	}
}

// deadline is a payment_deadlines row.
type deadline struct {
	openInvoice
	expiresAt time.Time
}

// overdue reads a page of the deadlines passed by now, after (at, id).
func (w *Workers) overdue(ctx context.Context, now, at time.Time, id uuid.UUID) ([]deadline, error) {
	rows, err := w.pool.Query(ctx, `SELECT d.payment_id, d.tenant_id, coalesce(p.state->'lightningInvoice'->>'paymentHash', ''),
		coalesce(p.state->>'funding' = 'MOMO', false), coalesce(p.state->>'funding' = 'USDT', false), d.expires_at
		FROM payment_deadlines d LEFT JOIN payments p ON p.id = d.payment_id
		WHERE d.expires_at <= $1 AND (d.expires_at, d.payment_id) > ($2, $3)
		ORDER BY d.expires_at, d.payment_id LIMIT $4`, now, at, id, w.expiryPage)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (deadline, error) {
		var d deadline
		err := r.Scan(&d.payment, &d.tenant, &d.hash, &d.momo, &d.usdt, &d.expiresAt)
		return d, err
	})
}

// expire expires one overdue payment unless its invoice was paid, its
// momo prompt was paid or is still open, or a USDT transfer made in time
// awaits its confirmations.
func (w *Workers) expire(ctx context.Context, d deadline, now time.Time) {
	if paid, err := w.paidBeforeExpiry(ctx, d.openInvoice); paid || err != nil {
		if err != nil {
			w.log.Warn("expiry: check invoice", "payment", d.payment, "err", err)
		}
		return
	}
	if open, err := w.promptOpen(ctx, d.openInvoice); open || err != nil {
		if err != nil {
			w.log.Warn("expiry: check prompt", "payment", d.payment, "err", err)
		}
		return
	}
	if pending, err := w.transferPending(ctx, d); pending || err != nil {
		if err != nil {
			w.log.Warn("expiry: check USDT transfers", "payment", d.payment, "err", err)
		}
		return
	}
	p, err := w.execute(ctx, d.tenant, d.payment, func(p domain.Payment) ([]domain.Event, error) {
		return domain.DecideExpire(p, now)
	})
	if err != nil {
		if domain.ErrorKind(err) != domain.Conflict {
			w.log.Warn("expiry: expire", "payment", d.payment, "err", err)
		}
		return
	}
	if p.Status == domain.StatusExpired {
		w.metrics.expired.Inc()
	}
}

// paidBeforeExpiry reports whether d's Lightning invoice was paid,
// recording the deposit if so: a payer who paid just before the deadline,
// or while no process watched, must not see the payment expire. An invoice
// not paid yet is canceled at the node first, so that it cannot be paid
// once its payment has expired (the payer's wallet refuses a canceled
// invoice); one paid between the lookup and the cancel is recorded. Without
// an answer from the node (an error) the payment is not expired this round;
// an invoice the node does not know can never be paid, so it does not hold
// the expiry.
func (w *Workers) paidBeforeExpiry(ctx context.Context, d openInvoice) (bool, error) {
	if w.cfg.Invoices == nil || d.hash == "" {
		return false, nil
	}
	inv, err := w.cfg.Invoices.LookupInvoice(ctx, d.hash)
	var unknown *lightning.RejectedError
	if errors.As(err, &unknown) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if !inv.Settled() {
		err := w.cfg.Invoices.CancelInvoice(ctx, d.hash)
		switch {
		case err == nil, errors.As(err, &unknown):
			return false, nil // it can never be paid now
		case !errors.Is(err, lightning.ErrInvoiceSettled):
			return false, err
		}
		if inv, err = w.cfg.Invoices.LookupInvoice(ctx, d.hash); err != nil {
			return true, err
		}
		if !inv.Settled() {
			return true, fmt.Errorf("invoice %s: settled when canceled, %s when looked up", d.hash, inv.State)
		}
	}
	return true, w.recordDeposit(ctx, d.tenant, d.payment, inv)
}
