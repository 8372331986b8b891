package projections

import (
	"context"
	"io/fs"
	"slices"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore"
	"github.com/ledger/ledger/eventstore/testenv"
)

// migrationsBefore is the projections' migration set without the files
// from version on: the schema a server of an earlier version left.
func migrationsBefore(t *testing.T, version string) eventstore.MigrationSet {
	t.Helper()
	names, err := fs.Glob(Migrations, "migrations/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	files := fstest.MapFS{}
	for _, name := range names {
		if name >= "migrations/"+version {
			continue
		}
		data, err := fs.ReadFile(Migrations, name)
		if err != nil {
			t.Fatal(err)
		}
		files[name] = &fstest.MapFile{Data: data}
	}
	return eventstore.MigrationSet{Component: "projections", FS: files}
}

// databaseBefore is a database of the test's own, migrated up to the
// projections' migration version, not included.
func databaseBefore(ctx context.Context, t *testing.T, version string) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(ctx, testenv.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := eventstore.Migrate(ctx, pool, eventstore.Migrations, migrationsBefore(t, version)); err != nil {
		t.Fatal(err)
	}
	return pool
}

// TestLedgerEntriesMigrationKeepsEveryLine: migration 0015 turns the
// posting lines of a history into one row per event, each event's lines in
// line order whatever order they were stored in, and the trial balance is
// what it was.
func TestLedgerEntriesMigrationKeepsEveryLine(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pool := databaseBefore(ctx, t, "0015")
	tenant, deposit, conversion := uuid.New(), uuid.New(), uuid.New()
	at := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	// Lines stored out of order, one amount with more digits than a float holds.
	_, err := pool.Exec(ctx, `INSERT INTO ledger_postings (event_id, line, tenant_id, recorded_at, account, currency, side, amount) VALUES
		($2, 2, $1, $4, 'customer_funds', 'sats', 'credit', 84167),
		($2, 1, $1, $4, 'external:LIGHTNING', 'sats', 'debit', 84167),
		($3, 3, $1, $5, 'payout_payable', 'ZAR', 'credit', 1500.123456789012345678),
		($3, 1, $1, $5, 'customer_funds', 'sats', 'debit', 84167),
		($3, 2, $1, $5, 'conversion', 'sats', 'credit', 84167),
		($3, 4, $1, $5, 'conversion', 'ZAR', 'debit', 1500.123456789012345678)`,
		tenant, deposit, conversion, at, at.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	// The trial balance as TrialBalance read it from the lines.
	rows, err := pool.Query(ctx, `SELECT account, currency, coalesce(sum(amount) FILTER (WHERE side = 'debit'), 0),
			coalesce(sum(amount) FILTER (WHERE side = 'credit'), 0)
		FROM ledger_postings WHERE tenant_id = $1 GROUP BY account, currency ORDER BY account, currency`, tenant)
	if err != nil {
		t.Fatal(err)
	}
	before, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (domain.AccountBalance, error) {
		var b domain.AccountBalance
		err := r.Scan(&b.Account, &b.Currency, &b.Debits, &b.Credits)
		return b, err
	})
	if err != nil || len(before) != 5 {
		t.Fatalf("trial balance before the migration: %+v, %v", before, err)
	}

	if err := eventstore.Migrate(ctx, pool, eventstore.Migrations, eventstore.MigrationSet{Component: "projections", FS: Migrations}); err != nil {
		t.Fatal(err)
	}
	var gone bool
	if err := pool.QueryRow(ctx, `SELECT to_regclass('ledger_postings') IS NULL`).Scan(&gone); err != nil || !gone {
		t.Errorf("ledger_postings after the migration: gone %v, error %v; want gone", gone, err)
	}
	type entry struct {
		tenant                               uuid.UUID
		recorded                             time.Time
		accounts, currencies, sides, amounts []string
	}
	want := map[uuid.UUID]entry{
		deposit: {tenant, at, []string{"external:LIGHTNING", "customer_funds"}, []string{"sats", "sats"}, []string{"debit", "credit"},
			[]string{"84167", "84167"}},
		conversion: {tenant, at.Add(time.Minute), []string{"customer_funds", "conversion", "payout_payable", "conversion"},
			[]string{"sats", "sats", "ZAR", "ZAR"}, []string{"debit", "credit", "credit", "debit"},
			[]string{"84167", "84167", "1500.123456789012345678", "1500.123456789012345678"}},
	}
	rows, err = pool.Query(ctx, `SELECT event_id, tenant_id, recorded_at, accounts, currencies, sides, amounts::text[] FROM ledger_entries`)
	if err != nil {
		t.Fatal(err)
	}
	got := map[uuid.UUID]entry{}
	for rows.Next() {
		var id uuid.UUID
		var e entry
		if err := rows.Scan(&id, &e.tenant, &e.recorded, &e.accounts, &e.currencies, &e.sides, &e.amounts); err != nil {
			t.Fatal(err)
		}
		got[id] = e
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Errorf("got %d ledger_entries rows, want %d", len(got), len(want))
	}
	for id, w := range want {
		g := got[id]
		if g.tenant != w.tenant || !g.recorded.Equal(w.recorded) || !slices.Equal(g.accounts, w.accounts) ||
			!slices.Equal(g.currencies, w.currencies) || !slices.Equal(g.sides, w.sides) || !slices.Equal(g.amounts, w.amounts) {
			t.Errorf("entry %s: got %+v, want %+v", id, g, w)
		}
	}
	after, err := NewReader(pool).TrialBalance(ctx, tenant, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if !sameBalances(before, after) {
		t.Errorf("trial balance: before the migration %+v, after %+v", before, after)
	}
}

func sameBalances(a, b []domain.AccountBalance) bool {
	return slices.EqualFunc(a, b, func(x, y domain.AccountBalance) bool {
		return x.Account == y.Account && x.Currency == y.Currency && x.Debits.Equal(y.Debits) && x.Credits.Equal(y.Credits)
	})
}

// TestLedgerEntriesMigrationWaitsForAppendsInFlight: a ledgerd of the
// version before still appending while 0015 runs loses no posting line. Its
// append's transaction holds the migration up until it commits, and the
// line it wrote is copied.
func TestLedgerEntriesMigrationWaitsForAppendsInFlight(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pool := databaseBefore(ctx, t, "0015")
	event := uuid.New()
	inFlight, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer inFlight.Rollback(context.Background())
	if _, err := inFlight.Exec(ctx, `INSERT INTO ledger_postings (event_id, line, tenant_id, recorded_at, account, currency, side, amount)
		VALUES ($1, 1, $2, now(), 'customer_funds', 'sats', 'debit', 5)`, event, uuid.New()); err != nil {
		t.Fatal(err)
	}
	migrated := make(chan error, 1)
	go func() {
		migrated <- eventstore.Migrate(ctx, pool, eventstore.Migrations, eventstore.MigrationSet{Component: "projections", FS: Migrations})
	}()
	for waiting := 0; waiting == 0; {
		select {
		case err := <-migrated:
			t.Fatalf("the migration ended while an append was in flight: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE relation = 'ledger_postings'::regclass AND NOT granted`).
			Scan(&waiting); err != nil {
			t.Fatal(err)
		}
	}
	if err := inFlight.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-migrated; err != nil {
		t.Fatal(err)
	}
	var lines int
	if err := pool.QueryRow(ctx, `SELECT coalesce(sum(cardinality(accounts)), 0) FROM ledger_entries WHERE event_id = $1`, event).
		Scan(&lines); err != nil || lines != 1 {
		t.Errorf("lines of the append in flight after the migration: %d, %v; want 1", lines, err)
	}
}
