package projections

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// QueuedChangeRefunds returns every tenant's successful payments whose
// change waits for an operator (changeRefundStatus queued), oldest first:
// the operator's list beside the unmatched-funds queue. The index
// payments_change_owed (migration 0023) finds them.
func (q *Reader) QueuedChangeRefunds(ctx context.Context) ([]TenantPaymentSnapshot, error) {
	rows, err := q.pool.Query(ctx, `SELECT tenant_id, state, version, updated_at FROM payments
		WHERE status = 'success' AND state->>'changeRefundStatus' = 'queued'
		ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("list queued change refunds: %w", err)
	}
	return pgx.CollectRows(rows, scanTenantPayment)
}
