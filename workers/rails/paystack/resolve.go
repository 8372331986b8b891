package paystack

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

// A transfer Paystack holds pending (one awaiting an OTP the integration
// should not require, or the balance) is verified by every sweep and ends
// when Paystack ends it. When the operator has ended it on Paystack's
// dashboard instead, or sees it will not be made, its outcome is recorded
// here: a later webhook that disagrees is a contradiction alert.

const stuckColumns = `reference, tenant_id, payment_id, amount, currency, transfer_code, status, reason, created_at, updated_at`

func scanStuck(row pgx.Row) (payout.Stuck, error) {
	s := payout.Stuck{Provider: "paystack"}
	var amount int64
	err := row.Scan(&s.Reference, &s.TenantID, &s.PaymentID, &amount, &s.Currency, &s.ProviderID, &s.Status, &s.Reason,
		&s.AskedAt, &s.UpdatedAt)
	s.Amount, s.Acknowledged = decimal.NewFromInt(amount).Shift(-2), s.ProviderID != "" // subunits, as subunits() makes them
	if s.Status == "success" {
		s.Receipt = s.ProviderID
	}
	return s, err
}

// StuckPayouts lists the transfers asked for before before that have no
// outcome yet, oldest first.
func StuckPayouts(ctx context.Context, db *pgxpool.Pool, before time.Time) ([]payout.Stuck, error) {
	rows, err := db.Query(ctx, `SELECT `+stuckColumns+` FROM paystack_transfers
		WHERE posted AND status = 'pending' AND created_at < $1 ORDER BY created_at`, before)
	if err != nil {
		return nil, fmt.Errorf("paystack stuck payouts: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (payout.Stuck, error) { return scanStuck(r) })
	if err != nil {
		return nil, fmt.Errorf("paystack stuck payouts: %w", err)
	}
	return out, nil
}

// ResolveStuck records an operator's outcome on the payment's pending
// transfer (a paid one's receipt is its transfer code), which every later
// call of the payout then answers. The same outcome recorded again
// answers the row as it is; any other is ErrNotStuck.
func ResolveStuck(ctx context.Context, db *pgxpool.Pool, paymentID uuid.UUID, r payout.Resolution) (payout.Stuck, error) {
	status, code, reason := "failed", "", r.Reason
	if r.Paid {
		status, code, reason = "success", r.Receipt, ""
	}
	key := paymentID.String() // the payout's idempotency key, the transfer's reference
	s, err := scanStuck(db.QueryRow(ctx, `UPDATE paystack_transfers SET status = $2,
		transfer_code = coalesce(nullif($3, ''), transfer_code), reason = $4, updated_at = now()
		WHERE reference = $1 AND posted AND status = 'pending' RETURNING `+stuckColumns, key, status, code, reason))
	if !errors.Is(err, pgx.ErrNoRows) {
		return s, err
	}
	s, found, err := FindPayout(ctx, db, paymentID)
	switch {
	case err != nil:
		return s, err
	case !found:
		return s, fmt.Errorf("payment %s has no Paystack transfer: %w", paymentID, payout.ErrNotStuck)
	case s.Status == status && (r.Paid && s.Receipt == code || !r.Paid && s.Reason == reason):
		return s, nil
	case s.Status == "pending":
		return s, fmt.Errorf("payment %s's Paystack transfer was never asked for: %w", paymentID, payout.ErrNotStuck)
	}
	return s, fmt.Errorf("payment %s's Paystack transfer is %s already (code %q, reason %q): %w", paymentID, s.Status, s.ProviderID, s.Reason,
		payout.ErrNotStuck)
}

// FindPayout returns the payment's Paystack transfer in whatever state it is, and
// false when the payment has none.
func FindPayout(ctx context.Context, db *pgxpool.Pool, paymentID uuid.UUID) (payout.Stuck, bool, error) {
	s, err := scanStuck(db.QueryRow(ctx, `SELECT `+stuckColumns+` FROM paystack_transfers WHERE reference = $1`, paymentID.String()))
	if errors.Is(err, pgx.ErrNoRows) {
		return s, false, nil
	}
	return s, err == nil, err
}
