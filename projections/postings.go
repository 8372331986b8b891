package projections

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ledger/ledger/domain"
)

// projectPostings queues the posting lines an event carries, as one
// statement: a money event carries several lines, and a statement per line
// would cost the append a round of Postgres's per-statement work for each.
func projectPostings(b *pgx.Batch, r domain.Record, ps []domain.Posting) {
	lines := make([]int32, len(ps))
	accounts, currencies, sides, amounts := make([]string, len(ps)), make([]string, len(ps)), make([]string, len(ps)), make([]string, len(ps))
	for i, p := range ps {
		lines[i], accounts[i], currencies[i], sides[i], amounts[i] = int32(i+1), p.Account, p.Currency, p.Side, p.Amount.String()
	}
	b.Queue(`INSERT INTO ledger_postings (event_id, line, tenant_id, recorded_at, account, currency, side, amount)
		SELECT $1, l.line, $2, $3, l.account, l.currency, l.side, l.amount
		FROM unnest($4::int[], $5::text[], $6::text[], $7::text[], $8::numeric[]) AS l(line, account, currency, side, amount)`,
		r.ID, r.TenantID, r.RecordedAt, lines, accounts, currencies, sides, amounts)
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
		err := r.Scan(&b.Account, &b.Currency, &b.Debits, &b.Credits)
		return b, err
	})
}
