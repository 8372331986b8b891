package eventstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"strings"
	"testing"
	"time"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore/keys"
	"github.com/ledger/ledger/eventstore/sealing"
)

// TestIdempotencyKeepsOnlyFinalAnswers: an answer that asks to be retried
// (not final) is not kept for the key, so the retry runs again; a final
// one is replayed.
func TestIdempotencyKeepsOnlyFinalAnswers(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, 30*time.Second)
	pool := mustMigrated(t, 4)
	idem := NewIdempotency(pool, sealing.NewSealer(pool, mustMasterKeys(t)))
	runs := 0
	for i, final := range []bool{false, false, true, true} {
		_, _, body, replayed, err := idem.Do(ctx, "tenant", "key", []byte("hash"),
			func(context.Context) (int, string, []byte, bool) {
				runs++
				return 409, "application/problem+json", []byte{byte('0' + runs)}, final
			})
		if err != nil {
			t.Fatal(err)
		}
		wantRuns, wantReplayed := min(i+1, 3), i == 3
		if runs != wantRuns || replayed != wantReplayed || string(body) != string(rune('0'+wantRuns)) {
			t.Fatalf("call %d: got %d runs, replayed %v, body %q; want %d, %v, %q", i+1, runs, replayed, body,
				wantRuns, wantReplayed, string(rune('0'+wantRuns)))
		}
	}
}

// TestIdempotencySealsRecordedResponses: a recorded response is stored
// sealed (a bearer token in it is not readable from the table) and replays
// as it was sent; one recorded before sealing replays as stored.
func TestIdempotencySealsRecordedResponses(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, 30*time.Second)
	pool := mustMigrated(t, 4)
	idem := NewIdempotency(pool, sealing.NewSealer(pool, mustMasterKeys(t)))
	const answer = `{"token":"eyJhbGciOiJFUzI1NiJ9.secret"}`
	for range 2 {
		_, _, body, _, err := idem.Do(ctx, "tenant/user", "key", []byte("hash"),
			func(context.Context) (int, string, []byte, bool) {
				return 201, "application/json", []byte(answer), true
			})
		if err != nil || string(body) != answer {
			t.Fatalf("got %q, %v; want %q", body, err, answer)
		}
	}
	var stored []byte
	if err := pool.QueryRow(ctx, `SELECT body FROM idempotency_keys WHERE key = 'key'`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(stored, []byte("secret")) || !strings.HasPrefix(string(stored), "sealed:v1:") {
		t.Errorf("the recorded response is stored as %q, want it sealed", stored)
	}

	if _, err := pool.Exec(ctx, `INSERT INTO idempotency_keys (scope, key, request_hash, status, content_type, body)
		VALUES ('tenant/user', 'before sealing', 'hash', 201, 'application/json', '{"id":1}')`); err != nil {
		t.Fatal(err)
	}
	_, _, body, replayed, err := idem.Do(ctx, "tenant/user", "before sealing", []byte("hash"),
		func(context.Context) (int, string, []byte, bool) { return 500, "", nil, false })
	if err != nil || !replayed || string(body) != `{"id":1}` {
		t.Errorf("a response recorded before sealing: got %q, replayed %v, %v", body, replayed, err)
	}

	// A recorded response whose sealing key is gone: never run again, and
	// a clear conflict rather than a 500 a client would retry.
	if _, err := pool.Exec(ctx, `UPDATE idempotency_keys SET body = convert_to('sealed:v1:gone:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', 'UTF8')
		WHERE key = 'key'`); err != nil {
		t.Fatal(err)
	}
	ran := false
	_, _, _, _, err = idem.Do(ctx, "tenant/user", "key", []byte("hash"),
		func(context.Context) (int, string, []byte, bool) {
			ran = true
			return 201, "application/json", []byte(answer), true
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
