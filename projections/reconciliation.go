package projections

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ledger/ledger/domain"
)

// breakStream projects a reconciliation break's stream onto its
// reconciliation_breaks row.
type breakStream struct{ b domain.Break }

func (s *breakStream) state() any { return s.b }

func (s *breakStream) fold(e domain.Event) { s.b = domain.ApplyBreak(s.b, e) }

func (s *breakStream) rows(Rows, *domain.Record, domain.Event) {}

func (s *breakStream) put(w Rows, first, last *domain.Record) {
	w.Put(breaksTable, s.b.ID, s.b.Rail, s.b.Kind, s.b.Status, JSONOf(s.b), last.StreamVersion, first.RecordedAt, last.RecordedAt)
}

var breakChanges = []string{"status", "state", "version", "updated_at"}

func (s *breakStream) update(w Rows, last *domain.Record) {
	w.Update(breaksTable, []any{last.StreamID}, breakChanges, s.b.Status, JSONOf(s.b), last.StreamVersion, last.RecordedAt)
}

// BreakSnapshot is a reconciliation break with its stream's version.
type BreakSnapshot struct {
	domain.Break
	Version int
}

func scanBreak(row pgx.Row) (BreakSnapshot, error) {
	var (
		b     BreakSnapshot
		state []byte
	)
	if err := row.Scan(&state, &b.Version); err != nil {
		return b, err
	}
	if err := json.Unmarshal(state, &b.Break); err != nil {
		return b, fmt.Errorf("decode reconciliation break: %w", err)
	}
	return b, nil
}

// Break reads one reconciliation break, or NotFound.
func (q *Reader) Break(ctx context.Context, id uuid.UUID) (BreakSnapshot, error) {
	b, err := scanBreak(q.pool.QueryRow(ctx, `SELECT state, version FROM reconciliation_breaks WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return b, domain.ErrNotFound
	}
	if err != nil {
		return b, fmt.Errorf("read reconciliation break: %w", err)
	}
	return b, nil
}

// ListBreaks returns the reconciliation breaks with status ("" for all),
// oldest first: the operator's list.
func (q *Reader) ListBreaks(ctx context.Context, status string) ([]domain.Break, error) {
	rows, err := q.pool.Query(ctx, `SELECT state, version FROM reconciliation_breaks WHERE $1 = '' OR status = $1
		ORDER BY created_at, id`, status)
	if err != nil {
		return nil, fmt.Errorf("list reconciliation breaks: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (domain.Break, error) {
		b, err := scanBreak(r)
		return b.Break, err
	})
}

// OpenBreaks is the open breaks of one rail: how many, and when the
// oldest was found.
type OpenBreaks struct {
	Rail   string
	Count  int64
	Oldest time.Time
}

// OpenBreaksByRail counts the open breaks per rail, for the metrics.
func (q *Reader) OpenBreaksByRail(ctx context.Context) ([]OpenBreaks, error) {
	rows, err := q.pool.Query(ctx, `SELECT rail, count(*), min(created_at) FROM reconciliation_breaks
		WHERE status = $1 GROUP BY rail ORDER BY rail`, domain.BreakOpen)
	if err != nil {
		return nil, fmt.Errorf("count open reconciliation breaks: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (OpenBreaks, error) {
		var o OpenBreaks
		err := r.Scan(&o.Rail, &o.Count, &o.Oldest)
		return o, err
	})
}
