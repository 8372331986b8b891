package eventstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
)

// Group commit: appends made on their own (outside a request's
// transaction) that arrive while earlier ones are still being committed
// wait, and are then sent together, as one pipeline in one transaction.
//
// Why: most of an append's cost is not its statements but its transaction:
// the commit's WAL flush and fsync wait, the round trip, and the wake-ups
// of client and backend on both ends. Sharing one among many appends is
// what lets the write path keep up with raw single-row inserts. Nothing is
// delayed to form a group: an append that finds a free slot (fewer than
// maxLeaders groups in flight) is sent at once, alone if nothing waits, so
// a quiet service pays no latency for it; under load the groups grow by
// themselves with the queue.
//
// What it keeps: each append is still all or nothing, with the same
// errors. A group whose transaction fails on a statement (a version
// conflict, a unique key, a deadlock) commits nothing; the append whose
// statement failed is set aside, the others are sent again as a group,
// and it is run alone after them (send, sendGroup), so each gets exactly
// the answer it would have had alone. A group whose connection fails
// gives every member that error: their outcome is unknown together, as
// one append's is when its connection breaks.
//
// Deadlocks: every row an append locks belongs to its own stream (its
// events, its read-model row, its deliveries), so sending a group's appends
// in stream-id order gives every group, in every process, the same lock
// order, and two groups cannot wait on each other in a cycle.
//
// Who sends: no goroutine of its own. The caller that takes a free slot
// leads: it sends the queue's head as a group, again until its own append
// is done, then passes the slot to the first waiter not yet offered one
// (or frees it). So every goroutine works only until its own append is
// committed, and a waiter is never left without a leader.

// Defaults of the group commit: groups in flight at once (each holds one
// connection for one round trip) and appends per group. With two in
// flight the CPUs idled while both waited for their commit's fsync; four
// keep them busy during it (docs/performance.md, "Append").
const (
	defaultGroupLeaders = 4
	defaultGroupSize    = 64
)

// pendingAppend is one append waiting to be committed, alone or in a group.
type pendingAppend struct {
	ctx     context.Context
	queries []*pgx.QueuedQuery // its statements; only SQL and Arguments are read
	appends int                // how many of the leading queries insert events
	stream  uuid.UUID          // the lock-order key: its (first) stream
	result  chan error         // buffered: the leader never waits on it
	lead    chan struct{}      // buffered: a slot passed to this waiter
	offered bool               // p has a slot: taken on arrival, or sent on lead; guarded by groupCommit.mu
}

func newPendingAppend(ctx context.Context, queries []*pgx.QueuedQuery, appends int, stream uuid.UUID) *pendingAppend {
	return &pendingAppend{ctx: ctx, queries: queries, appends: appends, stream: stream,
		result: make(chan error, 1), lead: make(chan struct{}, 1)}
}

// queueOn queues p's statements on b. A fresh QueuedQuery each time: pgx
// binds a sent one to the statement descriptions of its connection.
func (p *pendingAppend) queueOn(b *pgx.Batch) {
	for _, q := range p.queries {
		b.Queue(q.SQL, q.Arguments...)
	}
}

// groupCommit queues appends and sends them in groups through pool.
type groupCommit struct {
	pool       *pgxpool.Pool
	maxLeaders int
	maxGroup   int
	sizes      prometheus.Histogram

	mu      sync.Mutex
	queue   []*pendingAppend
	leaders int // slots taken: groups being sent, and slots offered but not yet taken up
}

func newGroupCommit(pool *pgxpool.Pool) *groupCommit {
	return &groupCommit{pool: pool, maxLeaders: defaultGroupLeaders, maxGroup: defaultGroupSize,
		sizes: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "ledger_append_group_size", Help: "Appends committed together in one transaction.",
			Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 128},
		})}
}

// commit commits p, alone or with others, and returns p's own outcome.
func (g *groupCommit) commit(p *pendingAppend) error {
	leading := g.arrive(p)
	done := p.ctx.Done()
	for !leading {
		select {
		case err := <-p.result:
			g.mu.Lock()
			if p.offered { // a slot reached p after another leader took it: pass it on
				g.handOffLocked()
			}
			g.mu.Unlock()
			return err
		case <-p.lead:
			leading = true
		case <-done:
			if g.withdraw(p) {
				return p.ctx.Err()
			}
			done = nil // already sent: its outcome is the group's, so wait for it
		}
	}
	for {
		group := g.take()
		if len(group) == 0 { // p is in a group another leader is sending
			g.release()
			return <-p.result
		}
		g.send(group)
		select {
		case err := <-p.result:
			g.release()
			return err
		default: // the queue was longer than a group: lead the next one
		}
	}
}

// arrive queues p and takes a free slot for it, if there is one. A leader
// stays queued until a group takes it, so it counts as offered: a slot
// handed on meanwhile would otherwise reach it too, and never be used or
// passed on (one slot fewer for good; with every slot lost so, no append
// would be sent again).
func (g *groupCommit) arrive(p *pendingAppend) (leading bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.queue = append(g.queue, p)
	if g.leaders < g.maxLeaders {
		g.leaders++
		p.offered = true
		return true
	}
	return false
}

// withdraw takes p out of the queue if it has not been sent yet, passing on
// a slot offered to it, and reports whether it did.
func (g *groupCommit) withdraw(p *pendingAppend) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	i := slices.Index(g.queue, p)
	if i < 0 {
		return false
	}
	g.queue = slices.Delete(g.queue, i, i+1)
	if p.offered {
		g.handOffLocked()
	}
	return true
}

// take removes and returns the queue's first group.
func (g *groupCommit) take() []*pendingAppend {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := min(len(g.queue), g.maxGroup)
	group := slices.Clone(g.queue[:n])
	g.queue = slices.Delete(g.queue, 0, n)
	return group
}

// release gives up a leader's slot.
func (g *groupCommit) release() {
	g.mu.Lock()
	g.handOffLocked()
	g.mu.Unlock()
}

// handOffLocked passes a slot to the first waiter not yet offered one, or
// frees it when every waiter has one coming.
func (g *groupCommit) handOffLocked() {
	for _, q := range g.queue {
		if !q.offered {
			q.offered = true
			q.lead <- struct{}{}
			return
		}
	}
	g.leaders--
}

// send commits group and gives each member its outcome.
func (g *groupCommit) send(group []*pendingAppend) {
	live := make([]*pendingAppend, 0, len(group)) // sorted below: not group itself
	for _, p := range group {
		if err := p.ctx.Err(); err != nil { // given up on before it was sent
			p.result <- err
			continue
		}
		live = append(live, p)
	}
	if len(live) == 0 {
		return
	}
	g.sizes.Observe(float64(len(live)))
	ctx, cancel := groupContext(live)
	defer cancel()
	slices.SortStableFunc(live, func(a, b *pendingAppend) int { return bytes.Compare(a.stream[:], b.stream[:]) })
	var refused []*pendingAppend
	for len(live) > 1 {
		failed := g.sendGroup(ctx, live)
		if failed == nil {
			break
		}
		live = slices.DeleteFunc(live, func(p *pendingAppend) bool { return p == failed })
		refused = append(refused, failed)
	}
	if len(live) == 1 {
		live[0].result <- g.sendAlone(ctx, live[0])
	}
	for _, p := range refused {
		p.result <- g.sendAlone(ctx, p)
	}
}

// sendGroup commits live in one transaction and gives each member its
// outcome, except when the server refuses a statement: then nothing is
// committed, and sendGroup returns the member whose statement it was, for
// the caller to send the others again as a group and that one alone, after
// them, so it gets exactly the answer it would have had alone. A version
// conflict spoils one member, not the whole group's round trip. A refusal
// no member's statement explains (at the commit) sends every member alone.
func (g *groupCommit) sendGroup(ctx context.Context, live []*pendingAppend) (refused *pendingAppend) {
	b := &pgx.Batch{}
	ends := make([]int, len(live)) // ends[i]: statements queued through member i
	for i, p := range live {
		p.queueOn(b)
		ends[i] = b.Len()
	}
	failed, err := readGroupResults(g.pool.SendBatch(ctx, b), b.Len())
	var pgErr *pgconn.PgError
	switch {
	case err == nil:
		for _, p := range live {
			p.result <- nil
		}
	case errors.As(err, &pgErr): // nothing committed
		if failed < b.Len() {
			i, _ := slices.BinarySearch(ends, failed+1)
			return live[i]
		}
		for _, p := range live { // refused at the commit
			p.result <- g.sendAlone(ctx, p)
		}
	default: // the connection failed: the outcome is unknown for all alike
		for _, p := range live {
			p.result <- fmt.Errorf("append: %w", err)
		}
	}
	return nil
}

// sendAlone commits p in a transaction of its own.
func (g *groupCommit) sendAlone(ctx context.Context, p *pendingAppend) error {
	b := &pgx.Batch{}
	p.queueOn(b)
	return readResults(g.pool.SendBatch(ctx, b), b, p.appends)
}

// readGroupResults reads n results and the implicit commit, and returns
// the first error with the index of the statement that failed (n when it
// was the commit).
func readGroupResults(br pgx.BatchResults, n int) (failed int, err error) {
	for failed = range n {
		if _, err = br.Exec(); err != nil {
			_ = br.Close()
			return failed, err
		}
	}
	return n, br.Close()
}

// groupContext is the context a group is sent under: cancelled by no
// member (the others still want their appends), with the latest of their
// deadlines, or none if one has none.
func groupContext(group []*pendingAppend) (context.Context, context.CancelFunc) {
	base := context.WithoutCancel(group[0].ctx)
	var latest time.Time
	for _, p := range group {
		d, ok := p.ctx.Deadline()
		if !ok {
			return context.WithCancel(base)
		}
		if d.After(latest) {
			latest = d
		}
	}
	return context.WithDeadline(base, latest)
}
