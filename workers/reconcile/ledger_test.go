package reconcile

import (
	"strings"
	"testing"
	"time"

	"github.com/ledger/ledger/eventstore/testenv"
)

// The ledger's side of a window reads the money events through the partial
// index on their own time, whatever the size of the history: the index
// covers exactly the types the query asks for, and the planner can use it.
func TestLedgerMovementsUseTheIndex(t *testing.T) {
	t.Parallel()
	migration, err := Migrations.ReadFile("migrations/0003_events_movements_at.sql")
	if err != nil {
		t.Fatal(err)
	}
	index := string(migration[strings.Index(string(migration), "CREATE INDEX"):])
	if n := strings.Count(index, "'"); n != 2*len(ledgerMovementTypes) {
		t.Errorf("the index names %d types, the query reads %d: keep migration 0003 and ledgerMovementTypes equal", n/2,
			len(ledgerMovementTypes))
	}
	for _, typ := range ledgerMovementTypes {
		if !strings.Contains(index, "'"+typ+"'") {
			t.Errorf("the index does not cover %s, which the query reads", typ)
		}
	}

	ctx := testenv.Context(t, 30*time.Second)
	pool := migrated(t, ctx)
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	// An empty table is read by a scan anyway: forbid it, to see whether
	// the index can serve the query at all.
	if _, err := tx.Exec(ctx, "SET LOCAL enable_seqscan = off"); err != nil {
		t.Fatal(err)
	}
	var plan strings.Builder
	rows, err := tx.Query(ctx, "EXPLAIN "+ledgerMovementsQuery, time.Now().Add(-24*time.Hour), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan.WriteString(line + "\n")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan.String(), "events_movements_at") {
		t.Errorf("the ledger's movements are not read through events_movements_at:\n%s", plan.String())
	}
	if _, err := NewLedger(pool).Records(ctx, "BANK", time.Now().Add(-time.Hour), time.Now()); err != nil {
		t.Errorf("records of an empty ledger: %v", err)
	}
}
