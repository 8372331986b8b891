package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ledger/ledger/eventstore/eventrow"
	"github.com/ledger/ledger/eventstore/pguuid"
	"github.com/ledger/ledger/projections/rebuild"
)

// auditSnapshot is a set of connections that see one and the same state of
// the database: read-only REPEATABLE READ transactions sharing an exported
// snapshot. The service keeps writing while audit verify reads, and every
// check compares events and read models as of the same instant (read models
// are written in the events' own transactions, so any snapshot is one in
// which they agree). The connections are its own, not the pool's, as the
// relay's are: each streams one long query or holds cursors for the whole run.
type auditSnapshot struct {
	conns []*pgx.Conn
}

// openAuditSnapshot connects n times and begins n transactions, all in the
// snapshot of the first. The first locks the read models (ACCESS SHARE, as
// reading them does) before it takes the snapshot: a query resolves a
// table's name in the catalog as it is now, not as of the snapshot, so a
// rebuild's swap committed between the snapshot and the audit's first
// read of a table would have the audit read the new table in the old
// snapshot, short of the rows the swap itself wrote. Held to the end, the
// lock makes a swap wait for the audit, as the audit's reads already did.
func openAuditSnapshot(ctx context.Context, cfg *pgx.ConnConfig, n int) (*auditSnapshot, error) {
	s := &auditSnapshot{}
	var id string
	for i := range n {
		c, err := pgx.ConnectConfig(ctx, cfg.Copy())
		if err != nil {
			s.close()
			return nil, fmt.Errorf("audit snapshot: connect: %w", err)
		}
		pguuid.Register(c.TypeMap())
		s.conns = append(s.conns, c)
		if _, err := c.Exec(ctx, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"); err != nil {
			s.close()
			return nil, fmt.Errorf("audit snapshot: %w", err)
		}
		if i == 0 {
			if _, err = c.Exec(ctx, "LOCK TABLE "+strings.Join(readModelTables(), ", ")+" IN ACCESS SHARE MODE"); err == nil {
				err = c.QueryRow(ctx, "SELECT pg_export_snapshot()").Scan(&id)
			}
		} else {
			_, err = c.Exec(ctx, "SET TRANSACTION SNAPSHOT '"+strings.ReplaceAll(id, "'", "''")+"'")
		}
		if err != nil {
			s.close()
			return nil, fmt.Errorf("audit snapshot: %w", err)
		}
	}
	return s, nil
}

// readModelTables are the tables of every read model a rebuild swaps.
func readModelTables() []string {
	var tables []string
	for _, g := range rebuild.Groups {
		for _, t := range g.Tables {
			tables = append(tables, "public."+t)
		}
	}
	return tables
}

// close ends the transactions with the connections.
func (s *auditSnapshot) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, c := range s.conns {
		c.Close(ctx)
	}
	s.conns = nil
}

// auditFetchSize is how many rows a cursor reads per round trip.
const auditFetchSize = 2000

// auditCursor reads a query's rows in batches through a server-side cursor, so
// that memory holds one batch whatever the table's size, and several
// cursors can be read side by side on one connection, in one snapshot.
type auditCursor[T any] struct {
	conn  *pgx.Conn
	fetch string
	scan  pgx.RowToFunc[T]
	buf   []T
	i     int
	done  bool
}

func openAuditCursor[T any](ctx context.Context, conn *pgx.Conn, name, query string, scan pgx.RowToFunc[T]) (*auditCursor[T], error) {
	if _, err := conn.Exec(ctx, "DECLARE "+name+" NO SCROLL CURSOR FOR "+query); err != nil {
		return nil, fmt.Errorf("open cursor %s: %w", name, err)
	}
	return &auditCursor[T]{conn: conn, fetch: fmt.Sprintf("FETCH %d FROM %s", auditFetchSize, name), scan: scan}, nil
}

// peek returns the next row without consuming it, or nil after the last.
func (c *auditCursor[T]) peek(ctx context.Context) (*T, error) {
	if c.i == len(c.buf) && !c.done {
		rows, err := c.conn.Query(ctx, c.fetch)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.fetch, err)
		}
		c.buf, err = pgx.CollectRows(rows, c.scan)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.fetch, err)
		}
		c.i, c.done = 0, len(c.buf) < auditFetchSize
	}
	if c.i == len(c.buf) {
		return nil, nil
	}
	return &c.buf[c.i], nil
}

// next consumes the next row; ok is false after the last.
func (c *auditCursor[T]) next(ctx context.Context) (row T, ok bool, err error) {
	p, err := c.peek(ctx)
	if p == nil || err != nil {
		return row, false, err
	}
	c.i++
	return *p, true, nil
}

// auditTable is a read model read in the order of its stream key (the id of the
// stream that produced the row), beside the events read in stream order: a
// merge join, so neither side is ever held whole.
type auditTable[T any] struct {
	name  string
	cur   *auditCursor[T]
	key   func(T) uuid.UUID // the id of the stream that writes the row
	rowID func(T) string    // the row's own id, for a difference line
	found *auditFindings
	note  string // what an extra row means
}

// openAuditTable opens the cursor of a table; query must order the rows by key.
func openAuditTable[T any](ctx context.Context, conn *pgx.Conn, found *auditFindings, name, query string,
	key func(T) uuid.UUID, rowID func(T) string, scan pgx.RowToFunc[T]) (*auditTable[T], error) {
	cur, err := openAuditCursor(ctx, conn, "audit_"+name, query, scan)
	if err != nil {
		return nil, err
	}
	return &auditTable[T]{name: name, cur: cur, key: key, rowID: rowID, found: found,
		note: "extra: no stream produced this row"}, nil
}

func (t *auditTable[T]) extra(r T) {
	t.found.add(auditDifference{Subject: t.name + " " + t.rowID(r), Note: t.note})
}

// take returns the rows of stream id. Rows keyed before id were produced by
// no stream (every earlier stream has taken its own) and are reported.
func (t *auditTable[T]) take(ctx context.Context, id uuid.UUID) ([]T, error) {
	var rows []T
	for {
		r, err := t.cur.peek(ctx)
		if r == nil || err != nil {
			return rows, err
		}
		k := t.key(*r)
		c := bytes.Compare(k[:], id[:]) // Postgres orders uuids bytewise too
		if c > 0 {
			return rows, nil
		}
		if c < 0 {
			t.extra(*r)
		} else {
			rows = append(rows, *r)
		}
		t.cur.i++
	}
}

// rest reports every row no stream has taken.
func (t *auditTable[T]) rest(ctx context.Context) error {
	for {
		r, ok, err := t.cur.next(ctx)
		if !ok || err != nil {
			return err
		}
		t.extra(r)
	}
}

// auditEventColumns are the columns of an event as the event store reads
// them (eventrow), so that the hash is recomputed over exactly the envelope
// the sequencer hashed.
var auditEventColumns = eventrow.ColumnsOf("e")
