package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledger/ledger/eventstore/keys"
	"github.com/ledger/ledger/eventstore/testenv"
	"github.com/ledger/ledger/projections/rebuild"
)

// rebuildEnv runs ledgerctl commands on a database of the test's own.
type rebuildEnv struct {
	t         *testing.T
	ctx       context.Context
	url       string
	masterKey string // the file LEDGER_MASTER_KEY_FILE names
	pool      *pgxpool.Pool
}

func newRebuildEnv(t *testing.T) rebuildEnv {
	t.Helper()
	ctx := testenv.Context(t, 2*time.Minute)
	masterKey, _, err := keys.LocalMasterKeyFile(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e := rebuildEnv{t: t, ctx: ctx, url: testenv.NewDatabase(t), masterKey: masterKey}
	e.run("keys", "rotate") // migrates the database
	pool, err := pgxpool.New(ctx, e.url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	e.pool = pool
	return e
}

// run runs ledgerctl with args and returns its stdout; it fails the test
// on an error.
func (e rebuildEnv) run(args ...string) string {
	e.t.Helper()
	out, err := e.try(args...)
	if err != nil {
		e.t.Fatalf("ledgerctl %s: %v", strings.Join(args, " "), err)
	}
	return out
}

func (e rebuildEnv) try(args ...string) (string, error) {
	var out bytes.Buffer
	err := run(e.ctx, args, func(k string) string {
		return map[string]string{"DATABASE_URL": e.url, "LEDGER_MASTER_KEY_FILE": e.masterKey}[k]
	}, &out)
	return out.String(), err
}

// rows returns a table's rows as sorted JSON.
func (e rebuildEnv) rows(table string) []string {
	e.t.Helper()
	rows, err := e.pool.Query(e.ctx, `SELECT to_jsonb(x)::text AS j FROM `+table+` x ORDER BY j`)
	if err != nil {
		e.t.Fatal(err)
	}
	s, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

// TestProjectionsRebuildCommand: `ledgerctl projections rebuild` repairs a
// corrupted read model, one group or all of them, prints what it did (as
// text or JSON), leaves no schema behind, and refuses unknown names.
func TestProjectionsRebuildCommand(t *testing.T) {
	t.Parallel()
	e := newRebuildEnv(t)
	for _, name := range []string{"Acme", "Bolt"} {
		e.run("tenant", "create", "--name", name, "--email", "owner@"+strings.ToLower(name)+".test")
	}
	var created keyPair
	if err := json.Unmarshal([]byte(e.run("apikey", "create", "--tenant", e.tenantID("Acme"))), &created); err != nil {
		t.Fatal(err)
	}
	e.run("apikey", "revoke", created.APIKey)
	tenants, keys, users := e.rows("tenants"), e.rows("api_keys"), e.rows("users")

	if _, err := e.pool.Exec(e.ctx, `UPDATE tenants SET name = 'Mallory'; DELETE FROM api_keys WHERE revoked_at IS NOT NULL`); err != nil {
		t.Fatal(err)
	}
	out := e.run("projections", "rebuild", "tenants")
	for _, want := range []string{"rebuilt tenants: 6 events", "api_keys                      3 rows", "tenants                       2 rows"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if got := e.rows("tenants"); !equalRows(got, tenants) {
		t.Errorf("tenants after the rebuild:\n%v\nwant\n%v", got, tenants)
	}
	if got := e.rows("api_keys"); !equalRows(got, keys) {
		t.Errorf("api_keys after the rebuild:\n%v\nwant\n%v", got, keys)
	}

	if _, err := e.pool.Exec(e.ctx, `UPDATE users SET status = 'Inactive'`); err != nil {
		t.Fatal(err)
	}
	var res rebuildResult
	if err := json.Unmarshal([]byte(e.run("projections", "rebuild", "--json")), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.ReadModels) != len(rebuild.Groups) || res.Events != 8 || res.Rows["users"] != 2 || res.SwapAttempts != 1 {
		t.Errorf("rebuild all: %+v", res)
	}
	if got := e.rows("users"); !equalRows(got, users) {
		t.Errorf("users after the rebuild:\n%v\nwant\n%v", got, users)
	}

	for _, args := range [][]string{{"projections", "rebuild", "balances"}, {"projections", "rebuild", "users", "tenants"}} {
		if _, err := e.try(args...); err == nil || !strings.Contains(err.Error(), "tenants, users, merchants, payments, postings") {
			t.Errorf("ledgerctl %s: %v, want the list of read models", strings.Join(args, " "), err)
		}
	}
	var left int
	if err := e.pool.QueryRow(e.ctx, `SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'rebuild\_%'`).Scan(&left); err != nil || left != 0 {
		t.Errorf("%d rebuild schemas left (%v)", left, err)
	}
}

func (e rebuildEnv) tenantID(name string) string {
	e.t.Helper()
	var id string
	if err := e.pool.QueryRow(e.ctx, `SELECT id::text FROM tenants WHERE name = $1`, name).Scan(&id); err != nil {
		e.t.Fatal(err)
	}
	return id
}

func equalRows(a, b []string) bool {
	return strings.Join(a, "\n") == strings.Join(b, "\n")
}

// An audit's snapshot holds ledger_entries, the read model it reads, from
// its first moment: a rebuild's swap cannot commit between the snapshot and
// the audit's first read of it (which would have the audit read the new
// table in the old snapshot), so it waits for the audit.
func TestAuditSnapshotHoldsTheReadModels(t *testing.T) {
	t.Parallel()
	e := newRebuildEnv(t)
	snap, err := openAuditSnapshot(e.ctx, e.pool.Config().ConnConfig, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.close()
	err = pgx.BeginFunc(e.ctx, e.pool, func(tx pgx.Tx) error {
		_, err := tx.Exec(e.ctx, `LOCK TABLE ledger_entries IN ACCESS EXCLUSIVE MODE NOWAIT`)
		return err
	})
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "55P03" {
		t.Errorf("a swap's lock during the audit: got %v, want lock_not_available", err)
	}
}
