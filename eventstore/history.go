package eventstore

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore/eventrow"
)

// TenantEvents returns up to limit of a tenant's sequenced events after
// position after, in position order, of type eventType when it is not
// empty ("payment.created"). Only sequenced events are returned: their
// position, hash and prevhash are final (contract §9).
func (s *Store) TenantEvents(ctx context.Context, tenantID uuid.UUID, after int64, limit int, eventType string) ([]domain.Record, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+recordColumns+` FROM events
		WHERE tenant_id = $1 AND position IS NOT NULL AND position > $2 AND ($3 = '' OR type = $3)
		ORDER BY position LIMIT $4`, tenantID, after, eventType, limit)
	if err != nil {
		return nil, fmt.Errorf("tenant events: %w", err)
	}
	return pgx.CollectRows(rows, eventrow.Scan)
}

// StreamHistory returns a stream's sequenced events in stream order.
func (s *Store) StreamHistory(ctx context.Context, stream domain.StreamRef) ([]domain.Record, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+recordColumns+` FROM events
		WHERE stream_id = $1 AND tenant_id = $2 AND position IS NOT NULL ORDER BY stream_version`, stream.ID, stream.TenantID)
	if err != nil {
		return nil, fmt.Errorf("stream history: %w", err)
	}
	return pgx.CollectRows(rows, eventrow.Scan)
}

// FoldAsOf folds the events of a stream recorded at or before asOf: the
// stream as it stood then. Its Version is 0 when none had been recorded.
func FoldAsOf[S any](ctx context.Context, s *Store, stream domain.StreamRef, asOf time.Time,
	apply func(S, domain.Event) S) (Snapshot[S], error) {
	rows, err := s.pool.Query(ctx, `SELECT `+recordColumns+` FROM events
		WHERE stream_id = $1 AND tenant_id = $2 AND recorded_at <= $3 ORDER BY stream_version`, stream.ID, stream.TenantID, asOf)
	if err != nil {
		return Snapshot[S]{}, fmt.Errorf("fold as of: %w", err)
	}
	recs, err := pgx.CollectRows(rows, eventrow.Scan)
	if err != nil {
		return Snapshot[S]{}, err
	}
	return foldRecords(recs, apply)
}
