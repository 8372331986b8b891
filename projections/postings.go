package projections

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ledger/ledger/domain"
)

// TrialBalance sums a tenant's posting lines recorded up to asOf (the zero
// time: all), by account and currency.
func (q *Reader) TrialBalance(ctx context.Context, tenantID uuid.UUID, asOf time.Time) ([]domain.AccountBalance, error) {
	var until *time.Time
	if !asOf.IsZero() {
		until = &asOf
	}
	rows, err := q.pool.Query(ctx, `SELECT account, currency,
			coalesce(sum(amount) FILTER (WHERE side = 'debit'), 0), coalesce(sum(amount) FILTER (WHERE side = 'credit'), 0)
		FROM ledger_entries e, unnest(e.accounts, e.currencies, e.sides, e.amounts) AS l(account, currency, side, amount)
		WHERE e.tenant_id = $1 AND ($2::timestamptz IS NULL OR e.recorded_at <= $2)
		GROUP BY account, currency ORDER BY account, currency`, tenantID, until)
	if err != nil {
		return nil, fmt.Errorf("trial balance: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (domain.AccountBalance, error) {
		var b domain.AccountBalance
		err := r.Scan(&b.Account, &b.Currency, &b.Debits, &b.Credits)
		return b, err
	})
}
