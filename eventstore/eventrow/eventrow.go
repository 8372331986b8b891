// Package eventrow reads rows of the events table into domain.Records:
// the one list of columns and scan targets that the event store, the
// rebuild's catch-up and ledgerctl's audit and export share. The audit
// recomputes each hash over the record exactly as the sequencer read it,
// so every reader must read an event the same way.
//
// It is a package of its own, as pguuid is, so that projections can use
// it: the event store's tests import projections.
package eventrow

import (
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/ledger/ledger/domain"
)

// Columns are the columns Dest scans, in this order. An event the
// sequencer has not reached yet has no position or hashes: 0 and "".
var Columns = ColumnsOf("")

// ColumnsOf is Columns with each column qualified by a table alias, for
// queries that join the events table to another.
func ColumnsOf(alias string) string {
	prefix := ""
	if alias != "" {
		prefix = alias + "."
	}
	cols := make([]string, 0, 13)
	for _, c := range []string{"id", "tenant_id", "stream_type", "stream_id", "stream_version", "type", "schema_version",
		"data", "metadata", "recorded_at"} {
		cols = append(cols, prefix+c)
	}
	return strings.Join(append(cols, "coalesce("+prefix+"position, 0)", "coalesce("+prefix+"hash, '')",
		"coalesce("+prefix+"prevhash, '')"), ", ")
}

// Dest returns the scan targets of Columns into r, and the func that
// completes r once the row is scanned. The data is scanned as the bytes of
// the json column's text: into a json.RawMessage pgx would run
// json.Unmarshal over it, a validation pass of what Postgres has validated
// already.
func Dest(r *domain.Record) (dest []any, done func() error) {
	var meta []byte
	dest = []any{(*[16]byte)(&r.ID), (*[16]byte)(&r.TenantID), &r.StreamType, (*[16]byte)(&r.StreamID), &r.StreamVersion,
		&r.Type, &r.SchemaVersion, (*[]byte)(&r.Data), &meta, &r.RecordedAt, &r.Position, &r.Hash, &r.PrevHash}
	return dest, func() error {
		r.RecordedAt = r.RecordedAt.UTC()
		var err error
		if r.Meta, err = domain.DecodeMetadata(meta); err != nil {
			return fmt.Errorf("decode metadata of event %s: %w", r.ID, err)
		}
		return nil
	}
}

// Scan reads a row of Columns.
func Scan(row pgx.CollectableRow) (domain.Record, error) {
	var r domain.Record
	dest, done := Dest(&r)
	if err := row.Scan(dest...); err != nil {
		return r, fmt.Errorf("scan event: %w", err)
	}
	err := done()
	return r, err
}
