package payout

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Table is a rail's table of payouts as an operator works it. Which
// payouts are stuck and how an operator's outcome is recorded is the same
// rule on every rail; the table, its key and its row are the rail's.
type Table struct {
	Noun    string // the payout as the operator reads it: "M-Pesa payout", "Paystack transfer"
	Name    string // the table, with posted, status, reason, created_at and updated_at columns
	Key     string // the column holding the payout's idempotency key: the payment's id, or a refund's own key (change-…, return-…)
	Columns string // what Scan reads, in its order
	// SetReceipt assigns the operator's receipt, $3, to the row.
	SetReceipt string
	Scan       func(pgx.Row) (Stuck, error)
}

// Stuck lists the payouts asked for before before that have no outcome
// yet, oldest first. One stored but never asked for is not stuck: the
// next call of its payout sends it.
func (t Table) Stuck(ctx context.Context, db *pgxpool.Pool, before time.Time) ([]Stuck, error) {
	rows, err := db.Query(ctx, `SELECT `+t.Columns+` FROM `+t.Name+`
		WHERE posted AND status = 'pending' AND created_at < $1 ORDER BY created_at`, before)
	if err != nil {
		return nil, fmt.Errorf("stuck %ss: %w", t.Noun, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Stuck, error) { return t.Scan(r) })
	if err != nil {
		return nil, fmt.Errorf("stuck %ss: %w", t.Noun, err)
	}
	return out, nil
}

// Resolve records an operator's outcome on the pending payout under key,
// which every later call of that key then answers. The same outcome
// recorded again (the resolution repeated after its payment or refund
// could not be ended) answers the row as it is; any other is ErrNotStuck.
func (t Table) Resolve(ctx context.Context, db *pgxpool.Pool, key string, r Resolution) (Stuck, error) {
	status, receipt, reason := "failed", "", r.Reason
	if r.Paid {
		status, receipt, reason = "success", r.Receipt, ""
	}
	s, err := t.Scan(db.QueryRow(ctx, `UPDATE `+t.Name+` SET status = $2, `+t.SetReceipt+`, reason = $4, updated_at = now()
		WHERE `+t.Key+` = $1 AND posted AND status = 'pending' RETURNING `+t.Columns, key, status, receipt, reason))
	if !errors.Is(err, pgx.ErrNoRows) {
		return s, err
	}
	s, found, err := t.Find(ctx, db, key)
	switch {
	case err != nil:
		return s, err
	case !found:
		return s, fmt.Errorf("no %s under %s: %w", t.Noun, key, ErrNotStuck)
	case s.Status == status && (r.Paid && s.Receipt == receipt || !r.Paid && s.Reason == reason):
		return s, nil
	case s.Status == "pending":
		return s, fmt.Errorf("the %s under %s was never asked for: %w", t.Noun, key, ErrNotStuck)
	}
	return s, fmt.Errorf("the %s under %s is %s already (receipt %q, reason %q): %w", t.Noun, key, s.Status, s.Receipt, s.Reason,
		ErrNotStuck)
}

// Find returns the payout under key in whatever state it is, and false
// when there is none.
func (t Table) Find(ctx context.Context, db *pgxpool.Pool, key string) (Stuck, bool, error) {
	s, err := t.Scan(db.QueryRow(ctx, `SELECT `+t.Columns+` FROM `+t.Name+` WHERE `+t.Key+` = $1`, key))
	if errors.Is(err, pgx.ErrNoRows) {
		return s, false, nil
	}
	return s, err == nil, err
}
