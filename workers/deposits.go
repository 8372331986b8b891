package workers

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/workers/rails/lightning"
)

// Invoices looks up Lightning deposit invoices at the node that made them
// (lightning.LND in production).
type Invoices interface {
	LookupInvoice(ctx context.Context, paymentHash string) (lightning.InvoiceState, error)
	// CancelInvoice makes an invoice unpayable (lightning.LND.CancelInvoice).
	CancelInvoice(ctx context.Context, paymentHash string) error
}

// openInvoicesPage is how many open invoices one query reads; a poll reads
// them all, page by page, so none waits behind others for its turn.
const openInvoicesPage = 500

// runDeposits watches the open Lightning deposit invoices: every poll looks
// up, at the node, the invoice of each Lightning-funded payment still
// waiting for funds. Postgres says which invoices are open
// (payment_deadlines, written with payment.created and cleared when the
// payment leaves created), so an invoice settled while no process was
// running is found at the first poll after a restart, and several
// processes polling at once record a deposit once: the payment's stream
// decides it (see recordDeposit).
func (w *Workers) runDeposits(ctx context.Context) error {
	return w.poll(ctx, w.cfg.InvoicePoll, "deposits: poll", w.pollInvoices)
}

// openInvoice is a payment still waiting for funds and the hash of its
// deposit invoice ("" for a payment not funded by Lightning); momo says
// it is funded by a momo prompt, usdt by a USDT transfer.
type openInvoice struct {
	payment, tenant uuid.UUID
	hash            string
	momo, usdt      bool
}

// lookupFailuresInARow is how many failed lookups in a row end a poll: the
// node is likely down, and the next poll asks again.
const lookupFailuresInARow = 3

// pollInvoices records the deposits of the open invoices that settled. A
// lookup that fails is passed over, so one invoice the node cannot answer
// for does not hold up the others behind it; a few failures in a row end
// the poll. It returns the first failure.
func (w *Workers) pollInvoices(ctx context.Context) error {
	var after uuid.UUID // keyset paging by payment id
	var first error
	inARow := 0
	for {
		page, err := w.openInvoices(ctx, after)
		if err != nil {
			return err
		}
		if len(page) == 0 {
			return first
		}
		for _, o := range page {
			inv, err := w.cfg.Invoices.LookupInvoice(ctx, o.hash)
			var unknown *lightning.RejectedError
			if errors.As(err, &unknown) {
				// Not this node's invoice: it can never settle here, and must
				// not hold up the others. The payment expires at its deadline.
				w.log.Warn("deposits: invoice unknown to the node", "payment", o.payment, "err", err)
				continue
			}
			if err != nil {
				if first == nil {
					first = fmt.Errorf("invoice of payment %s: %w", o.payment, err)
				}
				if inARow++; inARow >= lookupFailuresInARow {
					return first
				}
				continue
			}
			inARow = 0
			if !inv.Settled() {
				continue
			}
			if err := w.recordDeposit(ctx, o.tenant, o.payment, inv); err != nil {
				w.log.Warn("deposits: record", "payment", o.payment, "err", err)
			}
		}
		after = page[len(page)-1].payment
	}
}

// openInvoices reads a page of the open deposit invoices, after a payment id.
func (w *Workers) openInvoices(ctx context.Context, after uuid.UUID) ([]openInvoice, error) {
	rows, err := w.pool.Query(ctx, `SELECT d.payment_id, d.tenant_id, p.state->'lightningInvoice'->>'paymentHash'
		FROM payment_deadlines d JOIN payments p ON p.id = d.payment_id
		WHERE d.payment_id > $1 AND p.state->>'funding' = $2 AND p.state->'lightningInvoice'->>'paymentHash' IS NOT NULL
		ORDER BY d.payment_id LIMIT $3`, after, domain.FundingLightning, openInvoicesPage)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (openInvoice, error) {
		var o openInvoice
		err := r.Scan(&o.payment, &o.tenant, &o.hash)
		return o, err
	})
}

// recordDeposit records the deposit of a payment whose invoice settled. It
// is dated when the invoice settled, not when it was seen, so one found
// late (after a restart) is still inside the payment's validity. A
// Lightning payment has one invoice, paid once: a payment that already took
// funds, or left created, decides nothing, so two processes or two polls
// record it once.
func (w *Workers) recordDeposit(ctx context.Context, tenantID, paymentID uuid.UUID, inv lightning.InvoiceState) error {
	at := inv.SettledAt
	if at.IsZero() {
		at = w.now()
	}
	_, err := w.execute(ctx, tenantID, paymentID, func(p domain.Payment) ([]domain.Event, error) {
		if p.Status != domain.StatusCreated || p.AmountDeposited.IsPositive() {
			return nil, nil
		}
		return domain.DecideDeposit(p, domain.RecordDeposit{Amount: decimal.NewFromInt(inv.AmountPaidSats), Now: at,
			InvoiceSettled: true})
	})
	return err
}
