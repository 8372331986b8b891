package eventstore

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestSignInAttemptsInParallelRespectTheLimit: 40 attempts at one address
// at once, against a limit of 5: exactly 5 are admitted (each recorded as
// failed until cleared), and after a success clears them a new one is.
func TestSignInAttemptsInParallelRespectTheLimit(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, 30*time.Second)
	th := NewSignInThrottle(mustMigrated(t, 16))
	now := time.Now()
	var admitted atomic.Int32
	var wg sync.WaitGroup
	for range 40 {
		wg.Go(func() {
			ok, err := th.ReserveSignInAttempt(ctx, "ops@acme.test", now.Add(-15*time.Minute), now, 5)
			if err != nil {
				t.Error(err)
			}
			if ok {
				admitted.Add(1)
			}
		})
	}
	wg.Wait()
	if got := admitted.Load(); got != 5 {
		t.Fatalf("admitted %d of 40 parallel attempts, want 5", got)
	}
	if ok, err := th.ReserveSignInAttempt(ctx, "other@acme.test", now.Add(-15*time.Minute), now, 5); err != nil || !ok {
		t.Fatalf("another address: got %v, %v, want admitted", ok, err)
	}
	if err := th.ClearSignInFailures(ctx, "ops@acme.test"); err != nil {
		t.Fatal(err)
	}
	if ok, err := th.ReserveSignInAttempt(ctx, "ops@acme.test", now.Add(-15*time.Minute), now, 5); err != nil || !ok {
		t.Fatalf("after a success cleared them: got %v, %v, want admitted", ok, err)
	}
}
