package rebuild

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore/eventrow"
	"github.com/ledger/ledger/projections"
)

// applier replays, after the bulk round, the events committed since: each
// stream's new records projected by projections.ProjectStream from the
// stream's state before them (its earlier events folded, their rows being
// in the shadow tables already), as the statements the append runs, on one
// apply connection, in one pipeline, keeping only the group's tables.
type applier struct {
	r     *rebuilder
	conn  *pgx.Conn
	batch *pgx.Batch
}

func (r *rebuilder) newApplier(conn *pgx.Conn) *applier {
	return &applier{r: r, conn: conn, batch: &pgx.Batch{}}
}

// groupRows keeps the writes to the tables being rebuilt.
type groupRows struct {
	keep map[string]bool
	w    projections.Rows
}

func (g groupRows) Put(t *projections.Table, row ...any) {
	if g.keep[t.Name] {
		g.w.Put(t, row...)
	}
}

func (g groupRows) Update(t *projections.Table, key []any, columns []string, values ...any) {
	if g.keep[t.Name] {
		g.w.Update(t, key, columns, values...)
	}
}

func (g groupRows) Keeps(t *projections.Table) bool { return g.keep[t.Name] }

func (g groupRows) Delete(t *projections.Table, key ...any) {
	if g.keep[t.Name] {
		g.w.Delete(t, key...)
	}
}

// apply projects recs, read in q's snapshot in any order of streams but
// each stream's in version order, and sends their statements.
func (a *applier) apply(ctx context.Context, q pgx.Tx, recs []domain.Record) error {
	if len(recs) == 0 {
		return nil
	}
	var order []uuid.UUID
	streams := map[uuid.UUID][]domain.Record{}
	for _, r := range recs {
		if _, ok := streams[r.StreamID]; !ok {
			order = append(order, r.StreamID)
		}
		streams[r.StreamID] = append(streams[r.StreamID], r)
	}
	earlier, err := earlierRecords(ctx, q, streams)
	if err != nil {
		return err
	}
	w := groupRows{keep: a.r.keep, w: projections.StatementRows(a.batch)}
	for _, id := range order {
		before, err := projections.FoldStream(nil, earlier[id])
		if err != nil {
			return fmt.Errorf("rebuild: %w", err)
		}
		if _, err := projections.ProjectStream(w, before, streams[id]); err != nil {
			return fmt.Errorf("rebuild: %w", err)
		}
		a.r.events.Add(int64(len(streams[id])))
	}
	return a.flush(ctx)
}

// earlierRecords reads, in q's snapshot, each stream's records before the
// first of its new ones.
func earlierRecords(ctx context.Context, q pgx.Tx, streams map[uuid.UUID][]domain.Record) (map[uuid.UUID][]domain.Record, error) {
	ids, firsts := make([]uuid.UUID, 0, len(streams)), make([]int, 0, len(streams))
	for id, recs := range streams {
		if recs[0].StreamVersion > 1 {
			ids, firsts = append(ids, id), append(firsts, recs[0].StreamVersion)
		}
	}
	earlier := map[uuid.UUID][]domain.Record{}
	if len(ids) == 0 {
		return earlier, nil
	}
	rows, err := q.Query(ctx, `SELECT `+eventrow.Columns+` FROM public.events e
		JOIN unnest($1::uuid[], $2::int[]) AS s(stream, first) ON e.stream_id = s.stream AND e.stream_version < s.first
		ORDER BY e.stream_id, e.stream_version`, ids, firsts)
	if err != nil {
		return nil, fmt.Errorf("rebuild: read events: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var r domain.Record
		dest, done := eventrow.Dest(&r)
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("rebuild: read events: %w", err)
		}
		if err := done(); err != nil {
			return nil, fmt.Errorf("rebuild: %w", err)
		}
		earlier[r.StreamID] = append(earlier[r.StreamID], r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("rebuild: read events: %w", err)
	}
	return earlier, nil
}

// flush sends the queued statements in one pipeline.
func (a *applier) flush(ctx context.Context) error {
	n := a.batch.Len()
	if n == 0 {
		return nil
	}
	err := a.conn.SendBatch(ctx, a.batch).Close()
	a.r.stmts.Add(int64(n))
	a.batch = &pgx.Batch{}
	if err != nil {
		return fmt.Errorf("rebuild: replay: %w", err)
	}
	return nil
}
