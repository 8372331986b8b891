package poll

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// A step runs at once, then an interval after the previous one ended (a
// slow step is not followed at once by the next), and none after ctx ends.
func TestEveryRunsAtOnceThenAnIntervalAfterEachStep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		start := time.Now()
		var at []time.Duration
		done := make(chan struct{})
		go func() {
			defer close(done)
			Every(ctx, time.Second, func() {
				at = append(at, time.Since(start))
				time.Sleep(3 * time.Second) // a slow step
			})
		}()
		time.Sleep(9 * time.Second)
		cancel()
		<-done
		want := []time.Duration{0, 4 * time.Second, 8 * time.Second}
		if len(at) != len(want) {
			t.Fatalf("steps at %v, want %v", at, want)
		}
		for i := range want {
			if at[i] != want[i] {
				t.Fatalf("steps at %v, want %v", at, want)
			}
		}
	})
}
