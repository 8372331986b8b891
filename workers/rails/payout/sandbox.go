package payout

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"
)

// Test values that make the sandbox rail reject a payout (contract §7).
const (
	FailingAccountNumber = "4000000000"
	FailingPhoneNumber   = "+254700000002"
)

// Sandbox is the sandbox payout rail. Like a real bank API it
// de-duplicates by idempotency key, in Postgres so every instance shares
// its books, and counts every call it receives: more than one executed
// payout for a payment would be a double payout.
type Sandbox struct {
	pool  *pgxpool.Pool
	delay time.Duration // how long a payout takes (LEDGER_SANDBOX_PAYOUT_DELAY)
}

// NewSandbox returns the sandbox rail over pool.
func NewSandbox(pool *pgxpool.Pool, delay time.Duration) *Sandbox {
	return &Sandbox{pool: pool, delay: delay}
}

// Payout executes r once per idempotency key; a repeated key answers what
// the first call decided.
func (s *Sandbox) Payout(ctx context.Context, r Request) (Outcome, error) {
	status, reason := "completed", ""
	switch {
	case r.Rail == "BANK" && r.AccountNumber == FailingAccountNumber:
		status, reason = "failed", "the recipient bank rejected the account number"
	case r.Rail == "MOMO" && r.PhoneNumber == FailingPhoneNumber:
		status, reason = "failed", "the number is not registered for mobile money"
	}
	dest := r.AccountNumber + r.PhoneNumber + r.LNURL
	id := uuid.Must(uuid.NewV7())
	var out Outcome
	// The call is counted and the payout executed in one round trip (and
	// one transaction). A change refund is not the payment's payout: it is
	// not counted among the payout's calls.
	b := &pgx.Batch{}
	if !r.Refund {
		b.Queue(`INSERT INTO sandbox_payout_calls (payment_id, calls) VALUES ($1, 1)
		ON CONFLICT (payment_id) DO UPDATE SET calls = sandbox_payout_calls.calls + 1`, r.PaymentID)
	}
	b.Queue(`INSERT INTO sandbox_payouts (id, payment_id, idempotency_key, rail, amount, currency, destination, status, reason, refund)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (idempotency_key) DO NOTHING RETURNING id`,
		id, r.PaymentID, r.IdempotencyKey, r.Rail, r.Amount, r.Currency, dest, status, reason, r.Refund)
	br := s.pool.SendBatch(ctx, b)
	var err error
	if !r.Refund {
		_, err = br.Exec()
	}
	if err == nil {
		err = br.QueryRow().Scan(&id)
	}
	// The batch commits at Close: its error outranks the scan's, even the
	// "no row" of a repeated key.
	if cerr := br.Close(); cerr != nil {
		err = cerr
	}
	if errors.Is(err, pgx.ErrNoRows) {
		// Already executed: answer as the first call did.
		err = s.pool.QueryRow(ctx, `SELECT id, status, reason FROM sandbox_payouts WHERE idempotency_key = $1`,
			r.IdempotencyKey).Scan(&id, &status, &reason)
	}
	if err != nil {
		return out, fmt.Errorf("sandbox payout: %w", err)
	}
	if s.delay > 0 {
		select {
		case <-time.After(s.delay):
		case <-ctx.Done():
			return out, ctx.Err()
		}
	}
	return Outcome{PayoutID: id.String(), Rejected: status == "failed", Reason: reason}, nil
}

// Item is one executed payout, as GET /sandbox/payouts lists it.
type Item struct {
	ID             uuid.UUID
	PaymentID      uuid.UUID
	IdempotencyKey string
	Rail           string
	Amount         decimal.Decimal
	Currency       string
	Status         string
	CreatedAt      time.Time
}

// Payouts lists the payouts executed for a payment and the calls received.
func (s *Sandbox) Payouts(ctx context.Context, paymentID uuid.UUID) ([]Item, int64, error) {
	items, err := s.items(ctx, paymentID, false)
	if err != nil {
		return nil, 0, err
	}
	var calls int64
	err = s.pool.QueryRow(ctx, `SELECT coalesce((SELECT calls FROM sandbox_payout_calls WHERE payment_id = $1), 0)`, paymentID).Scan(&calls)
	return items, calls, err
}

// Refunds lists the change refunds executed for a payment: one at most.
func (s *Sandbox) Refunds(ctx context.Context, paymentID uuid.UUID) ([]Item, error) {
	return s.items(ctx, paymentID, true)
}

func (s *Sandbox) items(ctx context.Context, paymentID uuid.UUID, refunds bool) ([]Item, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, payment_id, idempotency_key, rail, amount, currency, status, created_at
		FROM sandbox_payouts WHERE payment_id = $1 AND refund = $2 ORDER BY created_at, id`, paymentID, refunds)
	if err != nil {
		return nil, fmt.Errorf("sandbox payouts: %w", err)
	}
	items, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Item, error) {
		var it Item
		err := row.Scan(&it.ID, &it.PaymentID, &it.IdempotencyKey, &it.Rail, &it.Amount, &it.Currency, &it.Status, &it.CreatedAt)
		it.CreatedAt = it.CreatedAt.UTC()
		return it, err
	})
	if err != nil {
		return nil, fmt.Errorf("sandbox payouts: %w", err)
	}
	return items, nil
}
