package eventstore

import (
	"context"
	"testing"
	"time"
)

// TestIdempotencyKeepsOnlyFinalAnswers: an answer that asks to be retried
// (not final) is not kept for the key, so the retry runs again; a final
// one is replayed.
func TestIdempotencyKeepsOnlyFinalAnswers(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, 30*time.Second)
	idem := NewIdempotency(mustMigrated(t, 4))
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
