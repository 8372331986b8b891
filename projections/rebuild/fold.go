package rebuild

import (
	"context"
	"slices"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/projections"
)

// The bulk round's fold: the events in stream order, each stream projected
// whole by projections.ProjectStream (the domain's own fold, the rows the
// append writes) into rows held in memory, and each row COPYed once, when
// its stream ends, instead of the statements the append would run for each
// event (figures: docs/performance.md, Replay). Every row belongs to the
// stream whose events write it (a momo account, an API key, a session
// belong to the stream naming them), so stream order gives the same rows as
// position order.

// tables are the projection's tables by name.
var tables = func() map[string]*projections.Table {
	m := map[string]*projections.Table{}
	for _, t := range projections.Tables {
		m[t.Name] = t
	}
	return m
}()

// streamTypes are the stream types whose events write a group's tables;
// nil: any stream, for postings, which any event may carry.
var streamTypes = map[string][]string{
	"tenants": {"tenant"}, "users": {"user"}, "merchants": {"merchant"}, "payments": {"payment"}, "postings": nil,
	"dashboard": {"dashboard_user"}, "bank_credits": {"payment", "unmatched_funds"}, "reconciliation": {"reconciliation"},
}

// heldRows are one stream's rows, as projections.Rows, until it ends.
type heldRows struct {
	keep map[string]bool
	rows []heldRow
}

type heldRow struct {
	t       *projections.Table
	values  []any
	deleted bool
}

func (h *heldRows) find(t *projections.Table, key []any) *heldRow {
	for i := range h.rows {
		if r := &h.rows[i]; r.t == t && slices.Equal(r.values[:t.Key], key) {
			return r
		}
	}
	return nil
}

func (h *heldRows) Put(t *projections.Table, row ...any) {
	if !h.keep[t.Name] {
		return
	}
	if r := h.find(t, row[:t.Key]); r != nil {
		r.values, r.deleted = row, false
		return
	}
	h.rows = append(h.rows, heldRow{t: t, values: row})
}

func (h *heldRows) Update(t *projections.Table, key []any, columns []string, values ...any) {
	r := h.find(t, key)
	if r == nil || r.deleted {
		return
	}
	for i, c := range columns {
		r.values[slices.Index(t.Columns, c)] = values[i]
	}
}

func (h *heldRows) Keeps(t *projections.Table) bool { return h.keep[t.Name] }

func (h *heldRows) Delete(t *projections.Table, key ...any) {
	if r := h.find(t, key); r != nil {
		r.deleted = true
	}
}

// folder folds the streams one bulk worker is given.
type folder struct {
	r       *rebuilder
	recs    []domain.Record // the stream being read
	held    heldRows
	out     map[string][][]any // rows ready for COPY, per table
	copies  chan<- copyJob
	current uuid.UUID
}

func newFolder(r *rebuilder, copies chan<- copyJob) *folder {
	return &folder{r: r, out: map[string][][]any{}, copies: copies, held: heldRows{keep: r.keep}}
}

// copyJob is a chunk of rows for one table.
type copyJob struct {
	table string
	rows  pgx.CopyFromSource
	n     int // rows
}

// Rows per COPY statement. Postgres gives each COPY statement an insert
// buffer of up to 1000 rows or 64 kB, and creates the buffer's tuple slots
// anew for every statement, each slot registered with its resource owner
// at a cost that grows with the slots already registered (they all pin the
// same tuple descriptor, which Postgres 15 files under one hash bucket),
// which short statements pay mostly for narrow rows (a buffer holds few
// rows carrying a payment's state). Narrow rows go in long statements;
// rows holding a JSON document keep short ones: long chunks of them made
// the Go collector run far more often under the rebuild's memory limit.
// Figures: docs/performance.md, Replay.
const (
	copyChunk       = 2000
	copyChunkNarrow = 16000
)

// documentTables are the tables whose rows hold a JSON document.
var documentTables = map[string]bool{"users": true, "payments": true}

// chunkRows is the rows per COPY of table.
func chunkRows(table string) int {
	if documentTables[table] {
		return copyChunk
	}
	return copyChunkNarrow
}

// add takes one record; records come in stream order.
func (f *folder) add(ctx context.Context, rec *domain.Record) error {
	if len(f.recs) > 0 && f.current != rec.StreamID {
		if err := f.endStream(ctx); err != nil {
			return err
		}
	}
	f.current = rec.StreamID
	f.recs = append(f.recs, *rec)
	f.r.events.Add(1)
	return nil
}

// endStream projects the stream just read and queues its rows.
func (f *folder) endStream(ctx context.Context) error {
	if len(f.recs) == 0 {
		return nil
	}
	f.held.rows = f.held.rows[:0]
	if _, err := projections.ProjectStream(&f.held, nil, f.recs); err != nil {
		return err
	}
	f.recs = f.recs[:0]
	for _, r := range f.held.rows {
		if !r.deleted {
			f.out[r.t.Name] = append(f.out[r.t.Name], r.values)
		}
	}
	for table, rows := range f.out {
		if len(rows) >= chunkRows(table) {
			if err := f.send(ctx, table); err != nil {
				return err
			}
		}
	}
	return nil
}

func (f *folder) send(ctx context.Context, table string) error {
	rows := f.out[table]
	if err := f.queue(ctx, copyJob{table: table, rows: pgx.CopyFromRows(rows), n: len(rows)}); err != nil {
		return err
	}
	f.out[table] = nil
	return nil
}

func (f *folder) queue(ctx context.Context, job copyJob) error {
	select {
	case f.copies <- job:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// finish ends the last stream and sends every row left.
func (f *folder) finish(ctx context.Context) error {
	if err := f.endStream(ctx); err != nil {
		return err
	}
	for table, rows := range f.out {
		if len(rows) > 0 {
			if err := f.send(ctx, table); err != nil {
				return err
			}
		}
	}
	return nil
}
