package eventstore

import (
	"io/fs"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ledger/ledger/eventstore/testenv"
)

// TestMigrateConcurrently starts five processes' worth of Migrate at once on
// a fresh database: all succeed, each migration is applied exactly once, and
// Pending turns from true to false.
func TestMigrateConcurrently(t *testing.T) {
	t.Parallel()
	const processes = 5
	ctx := testContext(t, 60*time.Second)
	url := testenv.NewDatabase(t)
	sets := allMigrations()

	check := mustPool(t, url, 2)
	pending, err := Pending(ctx, check, sets...)
	if err != nil || !pending {
		t.Fatalf("pending on a fresh database: got %v, %v; want true, nil", pending, err)
	}

	start := make(chan struct{})
	errs := make([]error, processes)
	var wg sync.WaitGroup
	for i := range processes {
		pool := mustPool(t, url, 2) // one pool per process, as separate ledgerd instances have
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = Migrate(ctx, pool, sets...)
		}()
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("migrate %d: got %v, want nil", i, err)
		}
	}

	rows, err := check.Query(ctx, `SELECT component || ':' || version, count(*) FROM schema_migrations GROUP BY 1`)
	if err != nil {
		t.Fatalf("read schema_migrations: %v", err)
	}
	applied := map[string]int{}
	var key string
	var n int
	if _, err := pgx.ForEachRow(rows, []any{&key, &n}, func() error { applied[key] = n; return nil }); err != nil {
		t.Fatalf("read schema_migrations: %v", err)
	}
	want := map[string]bool{}
	for _, set := range sets {
		names, err := fs.Glob(set.FS, "migrations/*.sql")
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range names {
			v, err := strconv.Atoi(strings.SplitN(strings.TrimPrefix(name, "migrations/"), "_", 2)[0])
			if err != nil {
				t.Fatalf("migration %s: %v", name, err)
			}
			want[set.Component+":"+strconv.Itoa(v)] = true
		}
	}
	if len(applied) != len(want) {
		t.Errorf("schema_migrations: got %v, want each of %v once", applied, want)
	}
	for k := range want {
		if applied[k] != 1 {
			t.Errorf("migration %s: got %d rows, want 1", k, applied[k])
		}
	}

	pending, err = Pending(ctx, check, sets...)
	if err != nil || pending {
		t.Errorf("pending after migrating: got %v, %v; want false, nil", pending, err)
	}
	// Running again changes nothing.
	if err := Migrate(ctx, check, sets...); err != nil {
		t.Errorf("migrate again: %v", err)
	}
	if got := countRows(t, ctx, check, `SELECT count(*) FROM schema_migrations`); got != len(want) {
		t.Errorf("schema_migrations after migrating again: got %d rows, want %d", got, len(want))
	}
	if got := countRows(t, ctx, check, `SELECT count(*) FROM sequencer_state`); got != 1 {
		t.Errorf("sequencer_state: got %d rows, want 1", got)
	}
}
