package eventstore

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
)

// TestStreamLocksSerialiseOneStream: writers of one stream take turns (the
// race detector sees the unguarded counter otherwise), writers of another
// stream do not wait for them, a waiter gives up with its context, and no
// entry is left once every holder has gone.
func TestStreamLocksSerialiseOneStream(t *testing.T) {
	t.Parallel()
	l := newStreamLocks()
	a, b := uuid.New(), uuid.New()
	ctx := context.Background()

	var count int
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				unlock, err := l.lock(ctx, a)
				if err != nil {
					t.Error(err)
					return
				}
				count++
				unlock()
			}
		}()
	}
	wg.Wait()
	if count != 800 {
		t.Errorf("count: got %d, want 800", count)
	}

	unlockA, err := l.lock(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	quick, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	unlockB, err := l.lock(quick, b)
	if err != nil {
		t.Fatalf("another stream waited for a held one: %v", err)
	}
	unlockB()
	short, cancelShort := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancelShort()
	if _, err := l.lock(short, a); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("waiting on a held stream: got %v, want the context's deadline", err)
	}
	unlockA()
	if n := len(l.locks); n != 0 {
		t.Errorf("%d lock entries left after every holder and waiter went", n)
	}
}
