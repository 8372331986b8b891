package rebuild

import (
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/ledger/ledger/domain"
)

// Typed rows: the fold's two largest tables, ledger_entries and
// webhook_attempts (several rows for every two events between them),
// are kept as typed rows, not lists of boxed values. A boxed row cost a
// slice and an allocation for nearly every value, and pgx one more for
// each time value and each pointer it encoded: a large share of the
// fold's allocations. A chunk of typed rows is one allocation, and rowSource
// hands pgx each row's values as pointers to pgx's own types, which it
// encodes without any.

// entryRow is a ledger_entries row: an event's posting lines.
type entryRow struct {
	event, tenant uuid.UUID
	at            time.Time
	postings      []domain.Posting
}

// attemptRow is a webhook_attempts row.
type attemptRow struct {
	event, tenant, payment uuid.UUID
	attempt                int
	typ                    string
	at                     time.Time
	statusCode             *int
	durationMs             int64
	err                    *string
}

// typedChunk collects one table's typed rows for a COPY.
type typedChunk[R any] struct {
	table  string
	rows   []R
	source func([]R) *rowSource
}

// add appends a stream's rows; it reports whether the chunk is full.
func (c *typedChunk[R]) add(rows []R) bool {
	if len(rows) == 0 {
		return false
	}
	if c.rows == nil {
		c.rows = make([]R, 0, copyChunkNarrow+64)
	}
	c.rows = append(c.rows, rows...)
	return len(c.rows) >= copyChunkNarrow
}

// take is the chunk's COPY, leaving the chunk empty.
func (c *typedChunk[R]) take() copyJob {
	job := copyJob{table: c.table, rows: c.source(c.rows), n: len(c.rows)}
	c.rows = nil
	return job
}

// rowSource is a chunk of typed rows as a COPY reads them (a
// pgx.CopyFromSource): set puts row i into the pgx values that values
// points at (the copier encodes a row before it asks for the next).
type rowSource struct {
	n, next int
	set     func(i int)
	values  []any
}

func (s *rowSource) Next() bool {
	s.next++
	return s.next <= s.n
}

func (s *rowSource) Values() ([]any, error) {
	s.set(s.next - 1)
	return s.values, nil
}

func (s *rowSource) Err() error { return nil }

// entrySource hands pgx rows in foldColumns["ledger_entries"] order. The
// arrays (copy_array.go) are refilled for each row, their
// amounts' big.Ints reused.
func entrySource(rows []entryRow) *rowSource {
	var v struct {
		event, tenant               pgtype.UUID
		at                          pgtype.Timestamptz
		accounts, currencies, sides textArray
		amounts                     numericArray
	}
	return &rowSource{n: len(rows), values: []any{&v.event, &v.tenant, &v.at, &v.accounts, &v.currencies, &v.sides, &v.amounts},
		set: func(i int) {
			r := &rows[i]
			v.event, v.tenant = pgtype.UUID{Bytes: r.event, Valid: true}, pgtype.UUID{Bytes: r.tenant, Valid: true}
			v.at = pgtype.Timestamptz{Time: r.at, Valid: true}
			v.accounts, v.currencies, v.sides = v.accounts[:0], v.currencies[:0], v.sides[:0]
			v.amounts = slices.Grow(v.amounts[:0], len(r.postings))[:len(r.postings)] // within capacity, the big.Ints stay
			for j, p := range r.postings {
				v.accounts, v.currencies, v.sides = append(v.accounts, p.Account), append(v.currencies, p.Currency), append(v.sides, p.Side)
				setNumeric(&v.amounts[j], p.Amount)
			}
		}}
}

// attemptSource hands pgx rows in foldColumns["webhook_attempts"] order.
// The integers go as int8 values, which pgx range-checks into the int4
// columns as it did the Go ints.
func attemptSource(rows []attemptRow) *rowSource {
	var v struct {
		event, tenant, payment        pgtype.UUID
		attempt, statusCode, duration pgtype.Int8
		typ, err                      pgtype.Text
		at                            pgtype.Timestamptz
	}
	return &rowSource{n: len(rows), values: []any{&v.event, &v.attempt, &v.tenant, &v.payment, &v.typ, &v.at, &v.statusCode, &v.duration, &v.err},
		set: func(i int) {
			r := &rows[i]
			v.event, v.tenant, v.payment = pgtype.UUID{Bytes: r.event, Valid: true}, pgtype.UUID{Bytes: r.tenant, Valid: true},
				pgtype.UUID{Bytes: r.payment, Valid: true}
			v.attempt = pgtype.Int8{Int64: int64(r.attempt), Valid: true}
			v.typ = pgtype.Text{String: r.typ, Valid: true}
			v.at = pgtype.Timestamptz{Time: r.at, Valid: true}
			v.statusCode = pgtype.Int8{}
			if r.statusCode != nil {
				v.statusCode = pgtype.Int8{Int64: int64(*r.statusCode), Valid: true}
			}
			v.duration = pgtype.Int8{Int64: r.durationMs, Valid: true}
			v.err = pgtype.Text{}
			if r.err != nil {
				v.err = pgtype.Text{String: *r.err, Valid: true}
			}
		}}
}
