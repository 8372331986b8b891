package httpapi

import (
	"fmt"
	"testing"
	"time"
)

func TestLimitersBurstThenWait(t *testing.T) {
	t.Parallel()
	l := newLimiters(RateLimit{Rate: 2, Burst: 3}) // a token every 500 ms
	now := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	for i := range 3 {
		if wait := l.take("lk_a", now); wait != 0 {
			t.Fatalf("request %d of the burst: got wait %v, want 0", i+1, wait)
		}
	}
	if wait := l.take("lk_a", now); wait != 500*time.Millisecond {
		t.Errorf("past the burst: got wait %v, want 500ms", wait)
	}
	if wait := l.take("lk_a", now.Add(200*time.Millisecond)); wait != 300*time.Millisecond {
		t.Errorf("200 ms later: got wait %v, want 300ms (refused requests spend nothing)", wait)
	}
	if wait := l.take("lk_b", now); wait != 0 {
		t.Errorf("another key: got wait %v, want 0", wait)
	}
	if wait := l.take("lk_a", now.Add(500*time.Millisecond)); wait != 0 {
		t.Errorf("after the wait: got %v, want 0", wait)
	}
}

func TestLimitersForgetIdleBuckets(t *testing.T) {
	t.Parallel()
	l := newLimiters(RateLimit{Rate: 10, Burst: 20}) // full again after 2 s
	now := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	for i := range 1000 {
		l.take(fmt.Sprintf("10.0.%d.%d", i/256, i%256), now)
	}
	for range 25 {
		l.take("10.9.9.9", now.Add(1900*time.Millisecond))
	}
	if got := len(l.buckets); got != 1001 {
		t.Fatalf("buckets: got %d, want 1001", got)
	}
	// Two seconds on, the thousand are full again and forgotten; the busy
	// one has refilled one token only, and is kept.
	later := now.Add(2 * time.Second)
	l.take("10.9.9.9", later)
	if wait := l.take("10.9.9.9", later); wait != 100*time.Millisecond {
		t.Errorf("busy key after the sweep: got wait %v, want 100ms (its bucket kept)", wait)
	}
	if got := len(l.buckets); got != 1 {
		t.Errorf("buckets after the sweep: got %d, want 1", got)
	}
}

func TestLimitersZeroLimitsNothing(t *testing.T) {
	t.Parallel()
	l := newLimiters(RateLimit{})
	for range 1000 {
		if wait := l.take("lk_a", time.Now()); wait != 0 {
			t.Fatalf("disabled limiter: got wait %v, want 0", wait)
		}
	}
}
