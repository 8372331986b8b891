package projections

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ledger/ledger/domain"
)

// unmatchedStream projects an unmatched item's stream onto its
// unmatched_funds row, and records the entry it holds: a bank's, or a
// rail's account and its provider's reference, recorded once alike.
type unmatchedStream struct{ u domain.UnmatchedFunds }

func (s *unmatchedStream) state() any { return s.u }

func (s *unmatchedStream) fold(e domain.Event) { s.u = domain.ApplyUnmatched(s.u, e) }

// rows records the bank entry of an item that holds a whole credit. An
// excess (overpaid) shares its entry with the deposit that recorded it.
func (s *unmatchedStream) rows(w Rows, r *domain.Record, e domain.Event) {
	if e, ok := e.(domain.UnmatchedFundsReceived); ok && e.Reason != domain.UnmatchedOverpaid {
		w.Put(bankCreditsTable, r.ID, r.TenantID, e.Entry.Account, e.Entry.EntryRef, r.RecordedAt)
	}
}

func (s *unmatchedStream) put(w Rows, first, last *domain.Record) {
	w.Put(unmatchedFundsTable, s.u.ID, first.TenantID, s.u.Status, JSONOf(s.u), last.StreamVersion, first.RecordedAt, last.RecordedAt)
}

var unmatchedChanges = []string{"status", "state", "version", "updated_at"}

func (s *unmatchedStream) update(w Rows, last *domain.Record) {
	w.Update(unmatchedFundsTable, []any{last.StreamID}, unmatchedChanges, s.u.Status, JSONOf(s.u), last.StreamVersion, last.RecordedAt)
}

// UnmatchedSnapshot is an unmatched item with its stream's version.
type UnmatchedSnapshot struct {
	domain.UnmatchedFunds
	Version int
}

func scanUnmatched(row pgx.Row) (UnmatchedSnapshot, error) {
	var (
		u     UnmatchedSnapshot
		state []byte
	)
	if err := row.Scan(&state, &u.Version); err != nil {
		return u, err
	}
	if err := json.Unmarshal(state, &u.UnmatchedFunds); err != nil {
		return u, fmt.Errorf("decode unmatched funds: %w", err)
	}
	return u, nil
}

// Unmatched reads one unmatched item of any tenant (an operator's read),
// or NotFound.
func (q *Reader) Unmatched(ctx context.Context, id uuid.UUID) (UnmatchedSnapshot, error) {
	u, err := scanUnmatched(q.pool.QueryRow(ctx, `SELECT state, version FROM unmatched_funds WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return u, domain.ErrNotFound
	}
	if err != nil {
		return u, fmt.Errorf("read unmatched funds: %w", err)
	}
	return u, nil
}

// ListUnmatched returns every tenant's unmatched items with status (""
// for all), oldest first: the operator's queue.
func (q *Reader) ListUnmatched(ctx context.Context, status string) ([]UnmatchedSnapshot, error) {
	rows, err := q.pool.Query(ctx, `SELECT state, version FROM unmatched_funds WHERE $1 = '' OR status = $1
		ORDER BY created_at, id`, status)
	if err != nil {
		return nil, fmt.Errorf("list unmatched funds: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (UnmatchedSnapshot, error) { return scanUnmatched(r) })
}

// BankCreditRecorded tells whether the bank entry is recorded already.
func (q *Reader) BankCreditRecorded(ctx context.Context, e domain.BankEntry) (bool, error) {
	var ok bool
	err := q.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM bank_credits WHERE account = $1 AND entry_ref = $2)`,
		e.Account, e.EntryRef).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("read bank credit: %w", err)
	}
	return ok, nil
}

// TenantPaymentSnapshot is a payment with its tenant and version.
type TenantPaymentSnapshot struct {
	TenantID uuid.UUID
	domain.PaymentSnapshot
}

// PaymentsByDepositReference reads the payments, of every tenant, whose
// deposit reference is one of refs.
func (q *Reader) PaymentsByDepositReference(ctx context.Context, refs []string) ([]TenantPaymentSnapshot, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	rows, err := q.pool.Query(ctx, `SELECT p.tenant_id, p.state, p.version, p.updated_at
		FROM deposit_references d JOIN payments p ON p.id = d.payment_id
		WHERE d.reference = ANY($1) ORDER BY p.id`, refs)
	if err != nil {
		return nil, fmt.Errorf("read payments by deposit reference: %w", err)
	}
	return pgx.CollectRows(rows, scanTenantPayment)
}

// scanTenantPayment reads a row of tenant_id, state, version, updated_at.
func scanTenantPayment(r pgx.CollectableRow) (TenantPaymentSnapshot, error) {
	var (
		p     TenantPaymentSnapshot
		state []byte
	)
	if err := r.Scan(&p.TenantID, &state, &p.Version, &p.UpdatedAt); err != nil {
		return p, err
	}
	p.UpdatedAt = p.UpdatedAt.UTC()
	var err error
	p.Payment, err = domain.DecodePayment(state)
	return p, err
}

// PaymentOfAnyTenant reads a payment whoever's it is, with its tenant (an
// operator's read), or NotFound.
func (q *Reader) PaymentOfAnyTenant(ctx context.Context, id uuid.UUID) (TenantPaymentSnapshot, error) {
	var p TenantPaymentSnapshot
	err := q.pool.QueryRow(ctx, `SELECT tenant_id FROM payments WHERE id = $1`, id).Scan(&p.TenantID)
	if errors.Is(err, pgx.ErrNoRows) {
		return p, domain.ErrNotFound
	}
	if err != nil {
		return p, fmt.Errorf("read payment tenant: %w", err)
	}
	p.PaymentSnapshot, err = q.Payment(ctx, p.TenantID, id)
	return p, err
}

// ListTenantUnmatched returns up to limit of the unmatched items a
// tenant's books hold, newest first.
func (q *Reader) ListTenantUnmatched(ctx context.Context, tenantID uuid.UUID, limit int) ([]domain.UnmatchedFunds, error) {
	rows, err := q.pool.Query(ctx, `SELECT state, version FROM unmatched_funds WHERE tenant_id = $1
		ORDER BY created_at DESC, id DESC LIMIT $2`, tenantID, limit)
	if err != nil {
		return nil, fmt.Errorf("list unmatched funds: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (domain.UnmatchedFunds, error) {
		u, err := scanUnmatched(r)
		return u.UnmatchedFunds, err
	})
}
