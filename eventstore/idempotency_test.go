package eventstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore/keys"
	"github.com/ledger/ledger/eventstore/sealing"
	"github.com/ledger/ledger/eventstore/testenv"
	"github.com/ledger/ledger/projections"
)

// idempotencyEnv is an event store with a tenant, and Idempotency over it.
type idempotencyEnv struct {
	store  *Store
	idem   *Idempotency
	tenant tenantStreams
}

func newIdempotencyEnv(t *testing.T, ctx context.Context) idempotencyEnv {
	pool := mustMigrated(t, 8)
	store := New(pool, projections.Projector{}, nil)
	return idempotencyEnv{store: store, idem: NewIdempotency(store, sealing.NewSealer(pool, mustMasterKeys(t))),
		tenant: mustCreateTenant(t, ctx, store)}
}

// addKey runs a command that appends one API key to the tenant's stream.
func (e idempotencyEnv) addKey(ctx context.Context) error {
	_, err := Execute(ctx, e.store, e.tenant.Tenant, domain.Metadata{}, domain.ApplyTenant,
		func(domain.Tenant) ([]domain.Event, error) { return []domain.Event{newKey()}, nil })
	return err
}

func (e idempotencyEnv) version(t *testing.T, ctx context.Context) int {
	t.Helper()
	return len(streamVersions(t, ctx, e.store.pool, e.tenant.Tenant.ID))
}

// TestIdempotencyKeepsOnlyFinalAnswers: an answer that asks to be retried
// (not final), or a 5xx, is not kept for the key and its appends are
// dropped, so the retry runs again; a final one commits with its appends
// and is replayed.
func TestIdempotencyKeepsOnlyFinalAnswers(t *testing.T) {
	t.Parallel()
	ctx := testenv.Context(t, 30*time.Second)
	e := newIdempotencyEnv(t, ctx)
	start := e.version(t, ctx)
	runs := 0
	for i, tc := range []struct {
		status int
		final  bool
	}{{409, false}, {503, true}, {409, true}, {409, true}} {
		resp, replayed, err := e.idem.Do(ctx, "tenant", "key", []byte("hash"), func(ctx context.Context) Response {
			runs++
			if err := e.addKey(ctx); err != nil {
				t.Fatal(err)
			}
			return Response{Status: tc.status, ContentType: "application/problem+json", Body: []byte{byte('0' + runs)}, Final: tc.final}
		})
		if err != nil {
			t.Fatal(err)
		}
		wantRuns, wantReplayed := min(i+1, 3), i == 3
		if runs != wantRuns || replayed != wantReplayed || string(resp.Body) != string(rune('0'+wantRuns)) {
			t.Fatalf("call %d: got %d runs, replayed %v, body %q; want %d, %v, %q", i+1, runs, replayed, resp.Body,
				wantRuns, wantReplayed, string(rune('0'+wantRuns)))
		}
		wantAppended := 0
		if i >= 2 {
			wantAppended = 1
		}
		if got := e.version(t, ctx) - start; got != wantAppended {
			t.Fatalf("call %d: %d events appended, want %d (only the final answer's)", i+1, got, wantAppended)
		}
	}
}

// TestIdempotencyCommitsAfterTheAnswer: nothing a keyed request appends is
// visible, nor are AfterCommit's functions run, before its answer is
// recorded with it.
func TestIdempotencyCommitsAfterTheAnswer(t *testing.T) {
	t.Parallel()
	ctx := testenv.Context(t, 30*time.Second)
	e := newIdempotencyEnv(t, ctx)
	start := e.version(t, ctx)
	var after []string
	_, _, err := e.idem.Do(ctx, "tenant", "key", []byte("hash"), func(ctx context.Context) Response {
		if err := e.addKey(ctx); err != nil {
			t.Fatal(err)
		}
		AfterCommit(ctx, func() { after = append(after, "committed") })
		if got := e.version(t, ctx) - start; got != 0 || len(after) != 0 {
			t.Errorf("before the answer: %d events visible, after-commit ran %v; want none", got, after)
		}
		return Response{Status: 201, Body: []byte(`{}`), Final: true}
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.version(t, ctx) - start; got != 1 || !slices.Equal(after, []string{"committed"}) {
		t.Errorf("after the answer: %d events, after-commit ran %v; want 1 and once", got, after)
	}
	var n int
	if err := e.store.pool.QueryRow(ctx, `SELECT count(*) FROM idempotency_keys WHERE key = 'key'`).Scan(&n); err != nil || n != 1 {
		t.Errorf("records of the key: got %d, %v; want 1", n, err)
	}
}

// TestIdempotencyLoserReplaysTheWinner: when another process records the
// key while this request runs, this request's appends are dropped and the
// other's answer is replayed: one effect, one answer.
func TestIdempotencyLoserReplaysTheWinner(t *testing.T) {
	t.Parallel()
	ctx := testenv.Context(t, 30*time.Second)
	e := newIdempotencyEnv(t, ctx)
	start := e.version(t, ctx)
	runs := 0
	resp, replayed, err := e.idem.Do(ctx, "tenant", "key", []byte("hash"), func(ctx context.Context) Response {
		runs++
		if err := e.addKey(ctx); err != nil {
			t.Fatal(err)
		}
		// The other process commits its run first.
		if _, err := e.store.pool.Exec(ctx, `INSERT INTO idempotency_keys (scope, key, request_hash, status, content_type, body)
			VALUES ('tenant', 'key', 'hash', 201, 'application/json', '{"winner":true}')`); err != nil {
			t.Fatal(err)
		}
		return Response{Status: 201, ContentType: "application/json", Body: []byte(`{"winner":false}`), Final: true}
	})
	if err != nil || !replayed || string(resp.Body) != `{"winner":true}` || runs != 1 {
		t.Fatalf("got %q replayed %v after %d runs, %v; want the winner's answer replayed after 1 run", resp.Body, replayed, runs, err)
	}
	if got := e.version(t, ctx) - start; got != 0 {
		t.Errorf("the loser's appends: %d committed, want none", got)
	}
}

// TestIdempotencyRetriesAStaleDecision: a request whose stream moved on
// while it ran is decided again on fresh state, once, as Execute does; a
// second loss is a transient 409, recorded for no key.
func TestIdempotencyRetriesAStaleDecision(t *testing.T) {
	t.Parallel()
	ctx := testenv.Context(t, 30*time.Second)
	e := newIdempotencyEnv(t, ctx)
	for _, tc := range []struct {
		key        string
		losses     int
		wantErr    bool
		wantEvents int // events appended by the request and its rivals
	}{{"once", 1, false, 2}, {"twice", 2, true, 2}} {
		start, runs := e.version(t, ctx), 0
		resp, _, err := e.idem.Do(ctx, "tenant", tc.key, []byte("hash"), func(rctx context.Context) Response {
			runs++
			if err := e.addKey(rctx); err != nil {
				t.Fatal(err)
			}
			if runs <= tc.losses { // a writer without the request's key commits first
				if err := e.addKey(ctx); err != nil {
					t.Fatal(err)
				}
			}
			return Response{Status: 201, Body: []byte(`{}`), Final: true}
		})
		if tc.wantErr != (err != nil) || (err != nil && domain.ErrorKind(err) != domain.Conflict) {
			t.Fatalf("%s: got %+v, %v; want error %v (a conflict)", tc.key, resp, err, tc.wantErr)
		}
		if got := e.version(t, ctx) - start; runs != 2 || got != tc.wantEvents {
			t.Errorf("%s: %d runs, %d events; want 2 runs and %d events", tc.key, runs, got, tc.wantEvents)
		}
	}
}

// TestIdempotencyInFlight: a second request with a key this process is
// still running is told so, and does not run.
func TestIdempotencyInFlight(t *testing.T) {
	t.Parallel()
	ctx := testenv.Context(t, 30*time.Second)
	e := newIdempotencyEnv(t, ctx)
	_, _, err := e.idem.Do(ctx, "tenant", "key", []byte("hash"), func(ctx context.Context) Response {
		_, _, err := e.idem.Do(ctx, "tenant", "key", []byte("hash"), func(context.Context) Response {
			t.Error("the second request ran")
			return Response{}
		})
		if domain.ErrorKind(err) != domain.Conflict || !strings.Contains(err.Error(), "still being processed") {
			t.Errorf("the second request: got %v, want idempotency_key_in_flight", err)
		}
		return Response{Status: 200, Final: true}
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestIdempotencySealsSecretResponses: a response marked Secret is stored
// sealed (a bearer token in it is not readable from the table), another as
// sent, and both replay as they were sent; a record whose sealing key is
// gone is a conflict, never a second run.
func TestIdempotencySealsSecretResponses(t *testing.T) {
	t.Parallel()
	ctx := testenv.Context(t, 30*time.Second)
	e := newIdempotencyEnv(t, ctx)
	for _, tc := range []struct {
		key        string
		body       string
		secret     bool
		wantSealed bool
	}{
		{"token", `{"accessToken":"eyJhbGciOiJFUzI1NiJ9.secret"}`, true, true},
		{"payment", `{"id":"p1","status":"pending"}`, false, false},
	} {
		for range 2 {
			resp, _, err := e.idem.Do(ctx, "tenant/user", tc.key, []byte("hash"), func(context.Context) Response {
				return Response{Status: 201, ContentType: "application/json", Body: []byte(tc.body), Final: true, Secret: tc.secret}
			})
			if err != nil || string(resp.Body) != tc.body {
				t.Fatalf("%s: got %q, %v; want %q", tc.key, resp.Body, err, tc.body)
			}
		}
		var stored []byte
		if err := e.store.pool.QueryRow(ctx, `SELECT body FROM idempotency_keys WHERE key = $1`, tc.key).Scan(&stored); err != nil {
			t.Fatal(err)
		}
		if sealed := strings.HasPrefix(string(stored), "sealed:v1:") && !bytes.Contains(stored, []byte(tc.body)); sealed != tc.wantSealed {
			t.Errorf("%s: stored as %q, want sealed %v", tc.key, stored, tc.wantSealed)
		}
	}

	if _, err := e.store.pool.Exec(ctx, `UPDATE idempotency_keys SET body = convert_to('sealed:v1:gone:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', 'UTF8')
		WHERE key = 'token'`); err != nil {
		t.Fatal(err)
	}
	ran := false
	_, _, err := e.idem.Do(ctx, "tenant/user", "token", []byte("hash"), func(context.Context) Response {
		ran = true
		return Response{Status: 201, Final: true}
	})
	if ran || domain.ErrorKind(err) != domain.Conflict || !strings.Contains(err.Error(), "cannot be read") {
		t.Errorf("a recorded response that cannot be opened: ran again %v, got %v; want a conflict, not run", ran, err)
	}
}

// mustMasterKeys returns a fresh random master key.
func mustMasterKeys(t testing.TB) *keys.MasterKeys {
	t.Helper()
	kek := make([]byte, 32)
	rand.Read(kek)
	m, err := keys.NewMasterKeys(kek)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
