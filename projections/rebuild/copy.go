package rebuild

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// The fold's COPYs. pgx's CopyFrom looks up the encode plan of every value
// it sends (a map keyed by the value's type, and a reflection check for
// nil first), and those lookups were a large part of what CopyFrom cost
// the fold's process (figures: docs/performance.md, Replay). A copyEncoder looks a column's plan up once
// for each Go type the column meets, and otherwise writes what CopyFrom
// writes: COPY's binary format, each value encoded by the connection's own
// codecs (pgx's EncodePlan), sent through pgconn's CopyFrom.

// copyEncoder encodes one table's rows for one connection.
type copyEncoder struct {
	m       *pgtype.Map
	sql     string // COPY ... FROM STDIN BINARY
	columns []string
	oids    []uint32
	plans   []columnPlan
}

// columnPlan is the encode plan of a column's values of one Go type.
type columnPlan struct {
	typ    reflect.Type
	plan   pgtype.EncodePlan
	canNil bool // a kind that can hold nil: pgx decides what its nil sends
}

// newCopyEncoder describes table's columns on c.
func newCopyEncoder(ctx context.Context, c *pgx.Conn, schema, table string, columns []string) (*copyEncoder, error) {
	quoted := make([]string, len(columns))
	for i, col := range columns {
		quoted[i] = ident(col)
	}
	list := strings.Join(quoted, ", ")
	sd, err := c.PgConn().Prepare(ctx, "", "SELECT "+list+" FROM "+qualified(schema, table), nil)
	if err != nil {
		return nil, fmt.Errorf("rebuild: describe %s: %w", table, err)
	}
	e := &copyEncoder{m: c.TypeMap(), sql: "COPY " + qualified(schema, table) + " (" + list + ") FROM STDIN BINARY",
		columns: columns, oids: make([]uint32, len(columns)), plans: make([]columnPlan, len(columns))}
	for i, f := range sd.Fields {
		e.oids[i] = f.DataTypeOID
	}
	return e, nil
}

// copier COPYs the fold's chunks over one connection.
type copier struct {
	conn     *pgx.Conn
	schema   string
	encoders map[string]*copyEncoder // by table
}

func newCopier(c *pgx.Conn, schema string) *copier {
	return &copier{conn: c, schema: schema, encoders: map[string]*copyEncoder{}}
}

// copy sends job's rows in one COPY statement.
func (w *copier) copy(ctx context.Context, job copyJob) error {
	e, ok := w.encoders[job.table]
	if !ok {
		var err error
		if e, err = newCopyEncoder(ctx, w.conn, w.schema, job.table, tables[job.table].Columns); err != nil {
			return err
		}
		w.encoders[job.table] = e
	}
	// pgconn reads the stream in a goroutine of its own, which it does not
	// always wait for when the connection fails: the stream is this
	// statement's alone, and its error is read under its lock.
	s := &copyStream{enc: e, rows: job.rows}
	_, err := w.conn.PgConn().CopyFrom(ctx, s, e.sql)
	if encodeErr := s.failure(); encodeErr != nil {
		return encodeErr
	}
	return err
}

// appendRow appends a row of values in COPY's binary format: the number
// of values, then each as its length (-1: NULL) and its bytes.
func (e *copyEncoder) appendRow(buf []byte, values []any) ([]byte, error) {
	if len(values) != len(e.oids) {
		return nil, fmt.Errorf("rebuild: %d values for %d columns", len(values), len(e.oids))
	}
	buf = binary.BigEndian.AppendUint16(buf, uint16(len(values)))
	for i, v := range values {
		var at int
		buf, at = beginValue(buf)
		out, err := e.encode(i, v, buf)
		if err != nil {
			return nil, fmt.Errorf("rebuild: encode %s: %w", e.columns[i], err)
		}
		buf = endValue(buf, at, out)
	}
	return buf, nil
}

// beginValue appends a value's length, -1 (NULL) until endValue sets it,
// and returns where it is: binary COPY rows and arrays both frame each
// value so.
func beginValue(buf []byte) ([]byte, int) {
	at := len(buf)
	return binary.BigEndian.AppendUint32(buf, 0xffffffff), at
}

// endValue is buf with the value begun at at: out is buf with the value's
// bytes appended, nil for NULL (buf as it is).
func endValue(buf []byte, at int, out []byte) []byte {
	if out == nil {
		return buf
	}
	binary.BigEndian.PutUint32(out[at:], uint32(len(out)-at-4))
	return out
}

// encode appends v as column i's type: nil, the buffer, for NULL.
func (e *copyEncoder) encode(i int, v any, buf []byte) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	p := &e.plans[i]
	if t := reflect.TypeOf(v); p.typ != t {
		plan := e.m.PlanEncode(e.oids[i], pgtype.BinaryFormatCode, v)
		if plan == nil {
			return e.m.Encode(e.oids[i], pgtype.BinaryFormatCode, v, buf) // its error
		}
		k := t.Kind()
		*p = columnPlan{typ: t, plan: plan,
			canNil: k == reflect.Pointer || k == reflect.Slice || k == reflect.Map || k == reflect.Interface || k == reflect.Chan || k == reflect.Func}
	}
	if p.canNil && reflect.ValueOf(v).IsNil() {
		return e.m.Encode(e.oids[i], pgtype.BinaryFormatCode, v, buf)
	}
	return p.plan.Encode(v, buf)
}

// copyStream is a COPY's data as pgconn reads it, encoded a piece at a
// time as it is read.
type copyStream struct {
	enc         *copyEncoder
	rows        pgx.CopyFromSource
	buf         []byte // encoded and not yet read from off on
	off         int
	begun, done bool
	mu          sync.Mutex
	err         error // the encoder's or the source's; pgconn's error would only say the read failed
}

func (s *copyStream) failure() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// copyHeader begins COPY's binary format: its signature, no flags, no
// header extension.
const copyHeader = "PGCOPY\n\377\r\n\000" + "\000\000\000\000" + "\000\000\000\000"

// copyPiece is how much a read encodes ahead: pgconn sends 64 kB messages.
const copyPiece = 64 << 10

func (s *copyStream) Read(p []byte) (int, error) {
	if s.off == len(s.buf) {
		if s.done {
			return 0, io.EOF
		}
		if err := s.fill(); err != nil {
			s.mu.Lock()
			s.err = err
			s.mu.Unlock()
			return 0, err
		}
	}
	n := copy(p, s.buf[s.off:])
	s.off += n
	return n, nil
}

// fill encodes rows until a piece is ready or the rows end.
func (s *copyStream) fill() error {
	buf := s.buf[:0]
	if !s.begun {
		buf, s.begun = append(make([]byte, 0, copyPiece+8<<10), copyHeader...), true
	}
	s.off = 0
	for len(buf) < copyPiece {
		if !s.rows.Next() {
			if err := s.rows.Err(); err != nil {
				return err
			}
			s.done = true
			buf = append(buf, 0xff, 0xff) // the trailer
			break
		}
		values, err := s.rows.Values()
		if err != nil {
			return err
		}
		if buf, err = s.enc.appendRow(buf, values); err != nil {
			return err
		}
	}
	s.buf = buf
	return nil
}
