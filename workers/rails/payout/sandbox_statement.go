package payout

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/workers/rails/statement"
)

// SandboxDeposit is a deposit the sandbox rail delivered to a payment.
type SandboxDeposit struct {
	ID        uuid.UUID // the reference the ledger's deposit event carries
	PaymentID uuid.UUID
	Rail      string // the funding rail
	Amount    decimal.Decimal
	Currency  string // as the ledger's postings name it
	At        time.Time
}

// RecordDeposit enters d in the sandbox rail's books, as a provider
// records the money it delivered.
func (s *Sandbox) RecordDeposit(ctx context.Context, d SandboxDeposit) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO sandbox_deposits (id, payment_id, rail, amount, currency, received_at)
		VALUES ($1, $2, $3, $4, $5, $6)`, d.ID, d.PaymentID, d.Rail, d.Amount, d.Currency, d.At)
	if err != nil {
		return fmt.Errorf("sandbox deposit %s: %w", d.ID, err)
	}
	return nil
}

// Records lists what the sandbox rail's books say happened in [from, to)
// (statement.Source): the deposits it delivered, and the payouts it
// executed by their idempotency key, Bitcoin in sats as the ledger counts
// it. Reconciling the sandbox shows an operator the whole process without
// a provider.
func (s *Sandbox) Records(ctx context.Context, from, to time.Time) ([]statement.Record, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT rail, id::text, $3::text, amount, currency, $4::text, received_at FROM sandbox_deposits
		WHERE received_at >= $1 AND received_at < $2
		UNION ALL
		SELECT rail, idempotency_key, $5::text, amount, CASE currency WHEN 'BTC' THEN 'sats' ELSE currency END,
			CASE status WHEN 'completed' THEN $4 ELSE $6::text END, created_at FROM sandbox_payouts
		WHERE created_at >= $1 AND created_at < $2
		ORDER BY 7, 2`, from, to, statement.In, statement.Success, statement.Out, statement.Failed)
	if err != nil {
		return nil, fmt.Errorf("sandbox statement: %w", err)
	}
	recs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (statement.Record, error) {
		var r statement.Record
		err := row.Scan(&r.Rail, &r.Ref, &r.Direction, &r.Amount, &r.Currency, &r.Status, &r.At)
		r.At = r.At.UTC()
		return r, err
	})
	if err != nil {
		return nil, fmt.Errorf("sandbox statement: %w", err)
	}
	return recs, nil
}
