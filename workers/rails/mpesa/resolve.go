package mpesa

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/workers/rails/payout"
)

// Daraja's B2C documentation describes OriginatorConversationID as the
// request's tracking id and promises no de-duplication by it, so a payout
// whose request may have reached M-Pesa is never sent again: one that
// Transaction Status cannot find (the lost alert) is the operator's, who
// checks the B2C shortcode's statement and records what it shows here.

const stuckColumns = `originator_id, tenant_id, payment_id, amount, conversation_id, status, receipt, reason, created_at, updated_at`

func scanStuck(row pgx.Row) (payout.Stuck, error) {
	s := payout.Stuck{Provider: "mpesa", Currency: "KES"}
	var amount int64
	err := row.Scan(&s.Reference, &s.TenantID, &s.PaymentID, &amount, &s.ProviderID, &s.Status, &s.Receipt, &s.Reason,
		&s.AskedAt, &s.UpdatedAt)
	s.Amount, s.Acknowledged = decimal.NewFromInt(amount), s.ProviderID != ""
	return s, err
}

// StuckPayouts lists the B2C payouts asked for before before that have no
// outcome yet, oldest first.
func StuckPayouts(ctx context.Context, db *pgxpool.Pool, before time.Time) ([]payout.Stuck, error) {
	rows, err := db.Query(ctx, `SELECT `+stuckColumns+` FROM mpesa_payouts
		WHERE posted AND status = 'pending' AND created_at < $1 ORDER BY created_at`, before)
	if err != nil {
		return nil, fmt.Errorf("mpesa stuck payouts: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (payout.Stuck, error) { return scanStuck(r) })
	if err != nil {
		return nil, fmt.Errorf("mpesa stuck payouts: %w", err)
	}
	return out, nil
}

// ResolveStuck records an operator's outcome on the payment's pending B2C
// payout, which every later call of the payout then answers. The same
// outcome recorded again (the resolution repeated after its payment could
// not be ended) answers the row as it is; any other is ErrNotStuck.
func ResolveStuck(ctx context.Context, db *pgxpool.Pool, paymentID uuid.UUID, r payout.Resolution) (payout.Stuck, error) {
	status, receipt, reason := "failed", "", r.Reason
	if r.Paid {
		status, receipt, reason = "success", r.Receipt, ""
	}
	key := paymentID.String() // the payout's idempotency key, its OriginatorConversationID
	s, err := scanStuck(db.QueryRow(ctx, `UPDATE mpesa_payouts SET status = $2, receipt = $3, reason = $4, updated_at = now()
		WHERE originator_id = $1 AND posted AND status = 'pending' RETURNING `+stuckColumns, key, status, receipt, reason))
	if !errors.Is(err, pgx.ErrNoRows) {
		return s, err
	}
	s, found, err := FindPayout(ctx, db, paymentID)
	switch {
	case err != nil:
		return s, err
	case !found:
		return s, fmt.Errorf("payment %s has no M-Pesa payout: %w", paymentID, payout.ErrNotStuck)
	case s.Status == status && s.Receipt == receipt && s.Reason == reason:
		return s, nil
	case s.Status == "pending":
		return s, fmt.Errorf("payment %s's M-Pesa payout was never asked for: %w", paymentID, payout.ErrNotStuck)
	}
	return s, fmt.Errorf("payment %s's M-Pesa payout is %s already (receipt %q, reason %q): %w", paymentID, s.Status, s.Receipt, s.Reason,
		payout.ErrNotStuck)
}

// FindPayout returns the payment's M-Pesa payout in whatever state it is, and
// false when the payment has none.
func FindPayout(ctx context.Context, db *pgxpool.Pool, paymentID uuid.UUID) (payout.Stuck, bool, error) {
	s, err := scanStuck(db.QueryRow(ctx, `SELECT `+stuckColumns+` FROM mpesa_payouts WHERE originator_id = $1`, paymentID.String()))
	if errors.Is(err, pgx.ErrNoRows) {
		return s, false, nil
	}
	return s, err == nil, err
}
