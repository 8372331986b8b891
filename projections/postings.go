package projections

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ledger/ledger/domain"
)

// projectPostings queues the posting lines an event carries.
func projectPostings(b *pgx.Batch, r domain.Record, ps []domain.Posting) {
	for i, p := range ps {
		b.Queue(`INSERT INTO ledger_postings (event_id, line, tenant_id, recorded_at, account, currency, side, amount)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, r.ID, i+1, r.TenantID, r.RecordedAt, p.Account, p.Currency, p.Side, p.Amount)
	}
}

// TrialBalance sums a tenant's postings recorded up to asOf (the zero time:
// all), by account and currency.
func (q *Reader) TrialBalance(ctx context.Context, tenantID uuid.UUID, asOf time.Time) ([]domain.AccountBalance, error) {
	var until *time.Time
	if !asOf.IsZero() {
		until = &asOf
	}
	rows, err := q.pool.Query(ctx, `SELECT account, currency,
			coalesce(sum(amount) FILTER (WHERE side = 'debit'), 0), coalesce(sum(amount) FILTER (WHERE side = 'credit'), 0)
		FROM ledger_postings WHERE tenant_id = $1 AND ($2::timestamptz IS NULL OR recorded_at <= $2)
		GROUP BY account, currency ORDER BY account, currency`, tenantID, until)
	if err != nil {
		return nil, fmt.Errorf("trial balance: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (domain.AccountBalance, error) {
		var b domain.AccountBalance
		return b, r.Scan(&b.Account, &b.Currency, &b.Debits, &b.Credits)
	})
}
