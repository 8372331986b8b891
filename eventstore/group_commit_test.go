package eventstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore/testenv"
	"github.com/ledger/ledger/projections"
)

// pending returns the group commit's form of an append of events to
// stream at expected, without sending it.
func pending(t *testing.T, ctx context.Context, store *Store, tenant tenantStreams, expected int, events ...domain.Event) *pendingAppend {
	t.Helper()
	recs, b, appends, err := store.prepareAppend(domain.Metadata{Actor: "test"}, time.Now(),
		[]Batch{{Stream: tenant.Tenant, State: tenant.State, Expected: expected, Events: events}})
	if err != nil {
		t.Fatalf("prepare append: %v", err)
	}
	return newPendingAppend(ctx, b.QueuedQueries, appends, recs[0].StreamID)
}

// TestGroupCommitKeepsEachAppendsOutcome sends one group whose appends
// include a stale version, a second writer of a stream already written in
// the same group, and an event of a stream that is behind: each gets the
// answer it would have had alone, and the good ones are all stored.
func TestGroupCommitKeepsEachAppendsOutcome(t *testing.T) {
	t.Parallel()
	ctx := testenv.Context(t, 30*time.Second)
	pool := mustMigrated(t, 4)
	store := New(pool, projections.Projector{}, nil)
	a, b, c := mustCreateTenant(t, ctx, store), mustCreateTenant(t, ctx, store), mustCreateTenant(t, ctx, store)

	group := []*pendingAppend{
		pending(t, ctx, store, a, 2, newKey()),           // good
		pending(t, ctx, store, b, 1, newKey()),           // stale: b is at 2
		pending(t, ctx, store, c, 2, newKey(), newKey()), // good
		pending(t, ctx, store, a, 2, newKey()),           // a's version 3 is the first one's
		pending(t, ctx, store, c, 7, newKey()),           // c has no version 7
	}
	store.group.send(group)
	want := []error{nil, ErrVersionConflict, nil, ErrVersionConflict, ErrVersionConflict}
	for i, p := range group {
		if err := <-p.result; !errors.Is(err, want[i]) || (want[i] == nil && err != nil) {
			t.Errorf("append %d: got %v, want %v", i, err, want[i])
		}
	}
	checkContiguous(t, ctx, store, a.Tenant, 3)
	checkContiguous(t, ctx, store, b.Tenant, 2)
	checkContiguous(t, ctx, store, c.Tenant, 4)
	if got := countRows(t, ctx, pool, `SELECT count(*) FROM api_keys`); got != 3+3 {
		t.Errorf("api keys: got %d, want 6 (3 tenants' first ones and 3 appended)", got)
	}
	// The refused appends were set aside and the two good ones committed
	// together, in one transaction, rather than each alone.
	if got := countRows(t, ctx, pool, `SELECT count(DISTINCT xmin::text) FROM events WHERE stream_id = ANY($1) AND stream_version >= 3`,
		[]uuid.UUID{a.Tenant.ID, c.Tenant.ID}); got != 1 {
		t.Errorf("the good appends committed in %d transactions, want 1", got)
	}
}

// TestGroupCommitUnderLoad has many writers append at once, some giving up
// while they wait: every append returns, every one that succeeded is
// stored with its projection, every stream stays contiguous, appends were
// committed in groups, and the group commit ends with no slot taken and
// nobody queued. An append given up on may still commit (its group was
// already sent), so the writer reads its stream's version again after one.
func TestGroupCommitUnderLoad(t *testing.T) {
	t.Parallel()
	ctx := testenv.Context(t, 2*time.Minute)
	pool := mustMigrated(t, 8)
	reg := prometheus.NewRegistry()
	store := New(pool, projections.Projector{}, reg)
	const writers, appendsEach = 48, 15
	tenants := make([]tenantStreams, writers)
	for w := range tenants {
		tenants[w] = mustCreateTenant(t, ctx, store)
	}

	var wg sync.WaitGroup
	succeeded, gaveUp := make([]int, writers), make([]int, writers) // each written by its writer only
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, retry := 2, false
			for range appendsEach {
				actx, cancel := ctx, context.CancelFunc(func() {})
				if rand.IntN(5) == 0 { // some callers give up at once, or soon
					actx, cancel = context.WithTimeout(ctx, time.Duration(rand.IntN(300))*time.Microsecond)
				}
				_, err := store.Append(actx, domain.Metadata{Actor: "test"}, Batch{Stream: tenants[w].Tenant, State: tenants[w].State, Expected: v, Events: []domain.Event{newKey()}})
				cancel()
				switch {
				case err == nil:
					v, retry = v+1, false
					succeeded[w]++
				case actx.Err() != nil && ctx.Err() == nil,
					retry && errors.Is(err, ErrVersionConflict): // a given-up append committed after the read
					gaveUp[w]++
					v, retry = len(streamVersions(t, ctx, pool, tenants[w].Tenant.ID)), true
				default:
					t.Errorf("writer %d: %v", w, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	g := store.group
	for range 100 { // appends given up on may still be committing
		g.mu.Lock()
		idle := g.leaders == 0 && len(g.queue) == 0
		g.mu.Unlock()
		if idle {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}

	keys := writers
	for w, ts := range tenants {
		n := len(streamVersions(t, ctx, pool, ts.Tenant.ID))
		checkContiguous(t, ctx, store, ts.Tenant, n)
		if extra := n - 2 - succeeded[w]; extra < 0 || extra > gaveUp[w] {
			t.Errorf("writer %d: %d events appended, %d succeeded and %d given up", w, n-2, succeeded[w], gaveUp[w])
		}
		keys += n - 2
	}
	if got := countRows(t, ctx, pool, `SELECT count(*) FROM api_keys`); got != keys {
		t.Errorf("api keys: got %d, want one per api_key_created event, %d", got, keys)
	}
	groups, members := groupSizes(t, reg)
	if members <= groups {
		t.Errorf("%d appends in %d groups: none was committed with another", members, groups)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.leaders != 0 || len(g.queue) != 0 {
		t.Errorf("after the load: %d slots taken, %d queued; want none", g.leaders, len(g.queue))
	}
	t.Logf("%d appends in %d groups of %.1f on average", members, groups, float64(members)/float64(groups))
}

// groupSizes returns how many groups were sent and how many appends they held.
func groupSizes(t *testing.T, reg *prometheus.Registry) (groups, members int) {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather metrics: %v", err)
	}
	for _, f := range families {
		if f.GetName() == "ledger_append_group_size" && f.GetType() == dto.MetricType_HISTOGRAM {
			h := f.GetMetric()[0].GetHistogram()
			return int(h.GetSampleCount()), int(h.GetSampleSum())
		}
	}
	t.Fatal(fmt.Errorf("no ledger_append_group_size metric"))
	return 0, 0
}

// TestGroupCommitLeaderIsOfferedNoSecondSlot: an append that took a free
// slot on arrival is still queued until a group takes it; a slot another
// leader gives up meanwhile must not be offered to it (it would never be
// used nor passed on, and the group commit would have one slot fewer for
// good), but freed.
func TestGroupCommitLeaderIsOfferedNoSecondSlot(t *testing.T) {
	g := &groupCommit{maxLeaders: 2, maxGroup: defaultGroupSize}
	other := &pendingAppend{lead: make(chan struct{}, 1)}
	if !g.arrive(other) {
		t.Fatal("the first append found no free slot")
	}
	g.take() // the other leader sends its group
	p := &pendingAppend{lead: make(chan struct{}, 1)}
	if !g.arrive(p) {
		t.Fatal("the second append found no free slot")
	}
	g.release() // the other leader is done while p is still queued
	if len(p.lead) != 0 {
		t.Error("the queued leader was offered a second slot")
	}
	if g.leaders != 1 {
		t.Errorf("after one of two leaders released: %d slots taken, want 1", g.leaders)
	}
	g.take()
	g.release()
	if g.leaders != 0 {
		t.Errorf("after both released: %d slots taken, want 0", g.leaders)
	}
}
