package eventrow

import (
	"testing"

	"github.com/ledger/ledger/domain"
)

// TestColumns: the plain and the qualified lists name the same columns in
// the same order, and Dest has a target for each.
func TestColumns(t *testing.T) {
	if want := `id, tenant_id, stream_type, stream_id, stream_version, type, schema_version, data, metadata, recorded_at, ` +
		`coalesce(position, 0), coalesce(hash, ''), coalesce(prevhash, '')`; Columns != want {
		t.Errorf("Columns = %s, want %s", Columns, want)
	}
	if want := `e.id, e.tenant_id, e.stream_type, e.stream_id, e.stream_version, e.type, e.schema_version, e.data, ` +
		`e.metadata, e.recorded_at, coalesce(e.position, 0), coalesce(e.hash, ''), coalesce(e.prevhash, '')`; ColumnsOf("e") != want {
		t.Errorf("ColumnsOf(e) = %s, want %s", ColumnsOf("e"), want)
	}
	if dest, _ := Dest(&domain.Record{}); len(dest) != 13 {
		t.Errorf("Dest has %d targets for 13 columns", len(dest))
	}
}
