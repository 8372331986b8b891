package eventstore

import (
	"context"
	"sync"

	"github.com/google/uuid"
)

// streamLocks lets one writer of a stream at a time in this process read,
// decide and append (ExecuteFrom). Correctness never depends on it: the
// version check still settles races between processes, and with a keyed
// request's appends, which commit after the lock is let go
// (request_appends.go). What it
// saves is the races inside one process (a payment's lifecycle step and
// its JetStream message at once), each of which cost a failed transaction,
// a retry, and, because pgx forgets the prepared statements of a batch that
// failed, the re-preparing and re-planning of every statement of that batch
// on that connection.
//
// An append holds the lock of one stream only, and only while no
// transaction of its own is open for longer than its one round trip, so no
// writer waits for a lock while holding a Postgres lock another waits on.
type streamLocks struct {
	mu    sync.Mutex
	locks map[uuid.UUID]*streamLock
}

type streamLock struct {
	held    chan struct{} // full while held; a channel so that waiting honours ctx
	waiters int           // holders and waiters: the entry goes when it drops to 0
}

func newStreamLocks() *streamLocks {
	return &streamLocks{locks: map[uuid.UUID]*streamLock{}}
}

// lock waits for stream's lock and returns its unlock, or ctx's error.
func (l *streamLocks) lock(ctx context.Context, stream uuid.UUID) (func(), error) {
	l.mu.Lock()
	sl := l.locks[stream]
	if sl == nil {
		sl = &streamLock{held: make(chan struct{}, 1)}
		l.locks[stream] = sl
	}
	sl.waiters++
	l.mu.Unlock()
	select {
	case sl.held <- struct{}{}:
		return func() { <-sl.held; l.release(stream, sl) }, nil
	case <-ctx.Done():
		l.release(stream, sl)
		return nil, ctx.Err()
	}
}

func (l *streamLocks) release(stream uuid.UUID, sl *streamLock) {
	l.mu.Lock()
	if sl.waiters--; sl.waiters == 0 {
		delete(l.locks, stream)
	}
	l.mu.Unlock()
}
