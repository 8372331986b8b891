package eventstore

import (
	"context"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledger/ledger/eventstore/testenv"
)

// TestMigrateConcurrently starts five processes' worth of Migrate at once on
// a fresh database: all succeed, each migration is applied exactly once, and
// Pending turns from true to false.
func TestMigrateConcurrently(t *testing.T) {
	t.Parallel()
	const processes = 5
	ctx := testenv.Context(t, 60*time.Second)
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

// concurrentIndexSet is a migration set whose second file builds a unique
// index concurrently, which Postgres refuses inside a transaction block.
func concurrentIndexSet() MigrationSet {
	return MigrationSet{Component: "migrate_test", FS: fstest.MapFS{
		"migrations/0001_items.sql": {Data: []byte(`CREATE TABLE items (id integer PRIMARY KEY, code integer NOT NULL);
INSERT INTO items VALUES (1, 10), (2, 20), (3, 30);`)},
		"migrations/0002_items_code.sql": {Data: []byte(`-- migrate: no transaction
-- A failed build leaves an invalid index: drop it before building again.
DROP INDEX CONCURRENTLY IF EXISTS items_code;
CREATE UNIQUE INDEX CONCURRENTLY items_code
	ON items (code);
`)},
	}}
}

// indexState returns the index's oid and whether it is valid; ok is false
// when there is no such index.
func indexState(t *testing.T, ctx context.Context, pool *pgxpool.Pool, name string) (oid uint32, valid, ok bool) {
	t.Helper()
	rows, err := pool.Query(ctx, `SELECT indexrelid::oid, indisvalid FROM pg_index WHERE indexrelid = to_regclass($1)`, name)
	if err != nil {
		t.Fatalf("read index %s: %v", name, err)
	}
	defer rows.Close()
	if !rows.Next() {
		return 0, false, false
	}
	if err := rows.Scan(&oid, &valid); err != nil {
		t.Fatalf("read index %s: %v", name, err)
	}
	return oid, valid, true
}

// TestMigrateOutsideTransaction: a marked file runs outside a transaction (the
// concurrent build succeeds), its version is recorded, and running again
// rebuilds nothing.
func TestMigrateOutsideTransaction(t *testing.T) {
	t.Parallel()
	ctx := testenv.Context(t, 60*time.Second)
	pool := mustPool(t, testenv.NewDatabase(t), 2)
	set := concurrentIndexSet()

	if err := Migrate(ctx, pool, set); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	oid, valid, ok := indexState(t, ctx, pool, "items_code")
	if !ok || !valid {
		t.Fatalf("items_code after migrating: got exists %v valid %v, want a valid index", ok, valid)
	}
	if got := countRows(t, ctx, pool, `SELECT count(*) FROM schema_migrations WHERE component = 'migrate_test'`); got != 2 {
		t.Errorf("schema_migrations: got %d rows, want 2", got)
	}

	if err := Migrate(ctx, pool, set); err != nil {
		t.Fatalf("migrate again: %v", err)
	}
	if again, _, _ := indexState(t, ctx, pool, "items_code"); again != oid {
		t.Errorf("items_code after migrating again: got oid %d, want %d (not rebuilt)", again, oid)
	}
	if pending, err := Pending(ctx, pool, set); err != nil || pending {
		t.Errorf("pending: got %v, %v; want false, nil", pending, err)
	}
}

// TestMigrateOutsideTransactionRetriesFailedBuild: a concurrent build that
// fails leaves an invalid index and no recorded version; once the cause is
// fixed, the next Migrate drops the invalid index and builds a valid one.
func TestMigrateOutsideTransactionRetriesFailedBuild(t *testing.T) {
	t.Parallel()
	ctx := testenv.Context(t, 60*time.Second)
	pool := mustPool(t, testenv.NewDatabase(t), 2)
	set := concurrentIndexSet()
	first := MigrationSet{Component: set.Component, FS: fstest.MapFS{
		"migrations/0001_items.sql": set.FS.(fstest.MapFS)["migrations/0001_items.sql"],
	}}
	if err := Migrate(ctx, pool, first); err != nil {
		t.Fatalf("migrate the table: %v", err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO items VALUES (4, 10)`); err != nil { // a duplicate code: the unique build fails
		t.Fatal(err)
	}

	if err := Migrate(ctx, pool, set); err == nil {
		t.Fatal("migrate over duplicate codes: got nil, want the unique build's error")
	}
	if _, valid, ok := indexState(t, ctx, pool, "items_code"); !ok || valid {
		t.Fatalf("items_code after the failed build: got exists %v valid %v, want an invalid index", ok, valid)
	}
	if got := countRows(t, ctx, pool, `SELECT count(*) FROM schema_migrations WHERE component = 'migrate_test'`); got != 1 {
		t.Errorf("schema_migrations after the failed build: got %d rows, want 1", got)
	}

	if _, err := pool.Exec(ctx, `DELETE FROM items WHERE id = 4`); err != nil {
		t.Fatal(err)
	}
	if err := Migrate(ctx, pool, set); err != nil {
		t.Fatalf("migrate after fixing the data: %v", err)
	}
	if _, valid, ok := indexState(t, ctx, pool, "items_code"); !ok || !valid {
		t.Errorf("items_code after the retry: got exists %v valid %v, want a valid index", ok, valid)
	}
	if got := countRows(t, ctx, pool, `SELECT count(*) FROM schema_migrations WHERE component = 'migrate_test'`); got != 2 {
		t.Errorf("schema_migrations after the retry: got %d rows, want 2", got)
	}
}

// TestMigrateOutsideTransactionWhileOthersWait: two processes wait for the
// migration lock; the one that gets it builds the index concurrently while
// the other still waits. The build waits for every older snapshot, so a
// waiter must not hold one (as a statement blocked in pg_advisory_lock
// does): both succeed, and the file is applied once.
func TestMigrateOutsideTransactionWhileOthersWait(t *testing.T) {
	t.Parallel()
	ctx := testenv.Context(t, 60*time.Second)
	url := testenv.NewDatabase(t)
	set := concurrentIndexSet()

	holder := mustPool(t, url, 2) // one connection holds the lock, the other watches
	conn, err := holder.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, int64(migrateLockKey)); err != nil {
		t.Fatal(err)
	}

	const processes = 2
	errs := make([]error, processes)
	var wg sync.WaitGroup
	for i := range processes {
		pool := mustPool(t, url, 2) // one pool per process, as separate ledgerd instances have
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = Migrate(ctx, pool, set)
		}()
	}

	// Release the lock once both are waiting for it, so one migrates while
	// the other still waits.
	for {
		rows, err := holder.Query(ctx, `SELECT pid FROM pg_stat_activity
			WHERE datname = current_database() AND query LIKE '%pg_try_advisory_lock%' AND pid <> pg_backend_pid()`)
		if err != nil {
			t.Fatalf("watch the waiters: %v", err)
		}
		var waiting []uint32
		for rows.Next() {
			var pid uint32
			if err := rows.Scan(&pid); err != nil {
				t.Fatal(err)
			}
			waiting = append(waiting, pid)
		}
		rows.Close()
		if len(waiting) == processes {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("waiters of the migration lock: got %v, want %d", waiting, processes)
		case <-time.After(10 * time.Millisecond):
		}
	}
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_unlock($1)`, int64(migrateLockKey)); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("migrate %d: got %v, want nil", i, err)
		}
	}
	if _, valid, ok := indexState(t, ctx, holder, "items_code"); !ok || !valid {
		t.Errorf("items_code: got exists %v valid %v, want a valid index", ok, valid)
	}
	if got := countRows(t, ctx, holder, `SELECT count(*) FROM schema_migrations WHERE component = 'migrate_test'`); got != 2 {
		t.Errorf("schema_migrations: got %d rows, want 2", got)
	}
}

// TestSplitStatements: statements end at a line ending in a semicolon;
// comments alone make no statement.
func TestSplitStatements(t *testing.T) {
	t.Parallel()
	got := splitStatements("-- migrate: no transaction\n-- why;\nDROP INDEX x;\n\nCREATE INDEX x\n  ON t (a);\n-- trailing\n")
	want := []string{"-- migrate: no transaction\n-- why;\nDROP INDEX x;", "CREATE INDEX x\n  ON t (a);"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
