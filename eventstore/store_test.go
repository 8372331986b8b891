package eventstore

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore/testenv"
	"github.com/ledger/ledger/projections"
)

// TestAppendOneWinnerPerVersion lines 50 writers up on the same version of one
// stream, round after round: in every round exactly one append wins and the
// other 49 get ErrVersionConflict.
func TestAppendOneWinnerPerVersion(t *testing.T) {
	t.Parallel()
	const writers, rounds = 50, 5
	ctx := testenv.Context(t, 60*time.Second)
	pool := mustMigrated(t, 20)
	store := New(pool, projections.Projector{}, nil)
	s := mustCreateTenant(t, ctx, store)

	for round := range rounds {
		_, version, err := Fold(ctx, store, s.Tenant, domain.ApplyTenant)
		if err != nil {
			t.Fatalf("fold: %v", err)
		}
		start := make(chan struct{})
		var wins, conflicts atomic.Int32
		var wg sync.WaitGroup
		for range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, err := store.Append(ctx, domain.Metadata{}, Batch{Stream: s.Tenant, State: s.State, Expected: version, Events: []domain.Event{newKey()}})
				switch {
				case err == nil:
					wins.Add(1)
				case errors.Is(err, ErrVersionConflict):
					conflicts.Add(1)
				default:
					t.Errorf("append: got %v, want nil or ErrVersionConflict", err)
				}
			}()
		}
		close(start)
		wg.Wait()
		if got := wins.Load(); got != 1 {
			t.Errorf("round %d at version %d: got %d successful appends, want 1", round, version, got)
		}
		if got := conflicts.Load(); got != writers-1 {
			t.Errorf("round %d at version %d: got %d conflicts, want %d", round, version, got, writers-1)
		}
	}
	checkContiguous(t, ctx, store, s.Tenant, 2+rounds) // tenant.created, api_key_created, one per round
}

// TestAppendConcurrentWritersContiguous has 50 writers each fold the stream
// and append at the version they saw, retrying on conflict until each has
// appended its share. Every version is won exactly once and the stream ends
// without gap or duplicate, its read model at the same version.
func TestAppendConcurrentWritersContiguous(t *testing.T) {
	t.Parallel()
	const writers, perWriter = 50, 2
	ctx := testenv.Context(t, 90*time.Second)
	pool := mustMigrated(t, 20)
	store := New(pool, projections.Projector{}, nil)
	s := mustCreateTenant(t, ctx, store)

	var mu sync.Mutex
	winner := map[int]int{} // version -> writer that appended it
	var conflicts atomic.Int64
	start := make(chan struct{})
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for done := 0; done < perWriter; {
				_, version, err := Fold(ctx, store, s.Tenant, domain.ApplyTenant)
				if err != nil {
					t.Errorf("fold: %v", err)
					return
				}
				recs, err := store.Append(ctx, domain.Metadata{}, Batch{Stream: s.Tenant, State: s.State, Expected: version, Events: []domain.Event{newKey()}})
				if errors.Is(err, ErrVersionConflict) {
					conflicts.Add(1)
					continue
				}
				if err != nil {
					t.Errorf("append: %v", err)
					return
				}
				if len(recs) != 1 || recs[0].StreamVersion != version+1 {
					t.Errorf("append at %d: got records %+v, want one at version %d", version, recs, version+1)
				}
				mu.Lock()
				if prev, dup := winner[version+1]; dup {
					t.Errorf("version %d: appended by writer %d and writer %d, want one writer", version+1, prev, w)
				}
				winner[version+1] = w
				mu.Unlock()
				done++
			}
		}()
	}
	close(start)
	wg.Wait()
	if t.Failed() {
		return
	}
	if got, want := len(winner), writers*perWriter; got != want {
		t.Errorf("got %d successful appends, want %d", got, want)
	}
	if conflicts.Load() == 0 {
		t.Errorf("got 0 version conflicts among %d concurrent writers, want some (the writers did not race)", writers)
	}
	want := 2 + writers*perWriter
	checkContiguous(t, ctx, store, s.Tenant, want)
	var projected int
	if err := pool.QueryRow(ctx, `SELECT version FROM tenants WHERE id = $1`, s.Tenant.ID).Scan(&projected); err != nil {
		t.Fatalf("read tenant: %v", err)
	}
	if projected != want {
		t.Errorf("tenants.version: got %d, want %d", projected, want)
	}
	if got := countRows(t, ctx, pool, `SELECT count(*) FROM api_keys WHERE tenant_id = $1`, s.Tenant.TenantID); got != 1+writers*perWriter {
		t.Errorf("api keys: got %d, want %d", got, 1+writers*perWriter)
	}
	t.Logf("%d appends, %d conflicts", len(winner), conflicts.Load())
}

// checkContiguous checks that a stream holds versions 1..want, each once,
// both as Load returns them and in the table.
func checkContiguous(t *testing.T, ctx context.Context, store *Store, stream domain.StreamRef, want int) {
	t.Helper()
	versions := streamVersions(t, ctx, store.Pool(), stream.ID)
	if len(versions) != want {
		t.Errorf("stream %s: got %d events, want %d", stream.ID, len(versions), want)
	}
	for i, v := range versions {
		if v != i+1 {
			t.Fatalf("stream %s: got version %d at index %d, want %d (versions %v)", stream.ID, v, i, i+1, versions)
		}
	}
	recs, err := store.Load(ctx, stream)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if len(recs) != want {
		t.Errorf("load: got %d records, want %d", len(recs), want)
	}
}

// TestAppendStaleVersion checks that an append whose expected version is
// behind or ahead of the stream writes nothing, read models included.
func TestAppendStaleVersion(t *testing.T) {
	t.Parallel()
	ctx := testenv.Context(t, 30*time.Second)
	pool := mustMigrated(t, 4)
	store := New(pool, projections.Projector{}, nil)
	s := mustCreateTenant(t, ctx, store) // tenant stream at version 2
	if _, err := store.Append(ctx, domain.Metadata{}, Batch{Stream: s.Tenant, State: s.State, Expected: 2, Events: []domain.Event{newKey()}}); err != nil {
		t.Fatalf("append at 2: %v", err)
	}
	// One event and several go through different statements (appendEvent, appendEvents).
	for _, events := range [][]domain.Event{{newKey()}, {newKey(), newKey()}} {
		for _, expected := range []int{0, 1, 2, 4, 10} {
			recs, err := store.Append(ctx, domain.Metadata{}, Batch{Stream: s.Tenant, State: s.State, Expected: expected, Events: events})
			if !errors.Is(err, ErrVersionConflict) {
				t.Errorf("append of %d at %d to a stream at 3: got %v, want %v", len(events), expected, err, ErrVersionConflict)
			}
			if recs != nil {
				t.Errorf("append of %d at %d: got %d records, want none", len(events), expected, len(recs))
			}
		}
	}
	checkContiguous(t, ctx, store, s.Tenant, 3)
	if got := countRows(t, ctx, pool, `SELECT count(*) FROM api_keys`); got != 2 {
		t.Errorf("api keys: got %d, want 2", got)
	}
	var projected int
	if err := pool.QueryRow(ctx, `SELECT version FROM tenants WHERE id = $1`, s.Tenant.ID).Scan(&projected); err != nil {
		t.Fatalf("read tenant: %v", err)
	}
	if projected != 3 {
		t.Errorf("tenants.version: got %d, want 3", projected)
	}
	// A new stream must be appended at 0.
	fresh := domain.StreamRef{TenantID: s.Tenant.TenantID, Type: "tenant", ID: uuid.New()}
	if _, err := store.Append(ctx, domain.Metadata{}, Batch{Stream: fresh, State: s.State, Expected: 1, Events: []domain.Event{newKey()}}); !errors.Is(err, ErrVersionConflict) {
		t.Errorf("append at 1 to a new stream: got %v, want %v", err, ErrVersionConflict)
	}
	if got := streamVersions(t, ctx, pool, fresh.ID); len(got) != 0 {
		t.Errorf("new stream: got versions %v, want none", got)
	}
}

// TestAppendBatchesAllOrNothing checks that when one batch of an append
// conflicts, no batch is written, wherever the conflicting batch stands.
func TestAppendBatchesAllOrNothing(t *testing.T) {
	t.Parallel()
	ctx := testenv.Context(t, 30*time.Second)
	pool := mustMigrated(t, 4)
	store := New(pool, projections.Projector{}, nil)
	existing := mustCreateTenant(t, ctx, store) // tenant stream at version 2

	for _, conflictFirst := range []bool{false, true} {
		s, batches := newTenant(t)
		stale := Batch{Stream: existing.Tenant, State: existing.State, Expected: 1, Events: []domain.Event{newKey()}}
		if conflictFirst {
			batches = append([]Batch{stale}, batches...)
		} else {
			batches = append(batches, stale)
		}
		recs, err := store.Append(ctx, domain.Metadata{}, batches...)
		if !errors.Is(err, ErrVersionConflict) {
			t.Errorf("conflict first %v: got %v, want %v", conflictFirst, err, ErrVersionConflict)
		}
		if recs != nil {
			t.Errorf("conflict first %v: got %d records, want none", conflictFirst, len(recs))
		}
		for _, stream := range []domain.StreamRef{s.Tenant, s.Owner} {
			if got := streamVersions(t, ctx, pool, stream.ID); len(got) != 0 {
				t.Errorf("conflict first %v: %s stream: got versions %v, want none", conflictFirst, stream.Type, got)
			}
		}
		if got := countRows(t, ctx, pool, `SELECT count(*) FROM tenants WHERE id = $1`, s.Tenant.ID); got != 0 {
			t.Errorf("conflict first %v: got %d tenant rows, want 0", conflictFirst, got)
		}
		if got := countRows(t, ctx, pool, `SELECT count(*) FROM users WHERE id = $1`, s.Owner.ID); got != 0 {
			t.Errorf("conflict first %v: got %d user rows, want 0", conflictFirst, got)
		}
	}
	checkContiguous(t, ctx, store, existing.Tenant, 2)
	if got := countRows(t, ctx, pool, `SELECT count(*) FROM events`); got != 3 {
		t.Errorf("events: got %d, want 3", got)
	}
}

// TestAppendReturnsRecords checks what Append returns and Load reads back,
// and that a stream of another tenant reads as empty.
func TestAppendReturnsRecords(t *testing.T) {
	t.Parallel()
	ctx := testenv.Context(t, 30*time.Second)
	pool := mustMigrated(t, 4)
	store := New(pool, projections.Projector{}, nil)
	s, batches := newTenant(t)
	meta := domain.Metadata{Actor: "operator", RequestID: "req-1", CorrelationID: "corr-1"}
	recs, err := store.Append(ctx, meta, batches...)
	if err != nil {
		t.Fatalf("append: %v", err)
	}
	if len(recs) != 3 {
		t.Fatalf("got %d records, want 3", len(recs))
	}
	wantTypes := []string{"tenant.created", "tenant.api_key_created", "user.created"}
	wantVersions := []int{1, 2, 1}
	for i, r := range recs {
		if r.Type != wantTypes[i] || r.StreamVersion != wantVersions[i] {
			t.Errorf("record %d: got %s v%d, want %s v%d", i, r.Type, r.StreamVersion, wantTypes[i], wantVersions[i])
		}
		if r.Meta != meta {
			t.Errorf("record %d metadata: got %+v, want %+v", i, r.Meta, meta)
		}
	}
	loaded, err := store.Load(ctx, s.Tenant)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if len(loaded) != 2 {
		t.Fatalf("load: got %d records, want 2", len(loaded))
	}
	for i, r := range loaded {
		if r.ID != recs[i].ID || r.Type != recs[i].Type || r.Meta != meta || !r.RecordedAt.Equal(recs[i].RecordedAt) {
			t.Errorf("loaded record %d: got %+v, want %+v", i, r, recs[i])
		}
		if r.Position != 0 || r.Hash != "" {
			t.Errorf("loaded record %d before sequencing: got position %d hash %q, want 0 and none", i, r.Position, r.Hash)
		}
	}
	tenant, version, err := Fold(ctx, store, s.Tenant, domain.ApplyTenant)
	if err != nil {
		t.Fatalf("fold: %v", err)
	}
	if version != 2 || tenant.ID != s.Tenant.ID || len(tenant.APIKeys) != 1 {
		t.Errorf("fold: got %+v at %d, want tenant %s with one key at 2", tenant, version, s.Tenant.ID)
	}
	other := s.Tenant
	other.TenantID = uuid.New()
	if got, err := store.Load(ctx, other); err != nil || len(got) != 0 {
		t.Errorf("load as another tenant: got %d records, %v; want none, nil", len(got), err)
	}
}

// TestExecuteRetriesOnceThenConflict makes another writer append between
// Execute's load and its append: once is retried, twice is a 409.
func TestExecuteRetriesOnceThenConflict(t *testing.T) {
	t.Parallel()
	pool := mustMigrated(t, 4)
	store := New(pool, projections.Projector{}, nil)

	for _, tc := range []struct {
		name      string
		interfere int // decide calls on which another writer appends first
		wantErr   bool
	}{
		{"no interference", 0, false},
		{"one conflict is retried", 1, false},
		{"two conflicts give up", 2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// The subtest's own deadline: parallel subtests may wait for a
			// slot long after the parent started.
			ctx := testenv.Context(t, 30*time.Second)
			s := mustCreateTenant(t, ctx, store)
			key := "key-" + uuid.NewString()
			calls := 0
			decide := func(tenant domain.Tenant) ([]domain.Event, error) {
				calls++
				if calls <= tc.interfere {
					// Another request appends to the same stream after this
					// one has loaded it.
					_, v, err := Fold(ctx, store, s.Tenant, domain.ApplyTenant)
					if err != nil {
						t.Fatalf("fold: %v", err)
					}
					if _, err := store.Append(ctx, domain.Metadata{}, Batch{Stream: s.Tenant, State: s.State, Expected: v, Events: []domain.Event{newKey()}}); err != nil {
						t.Fatalf("interfering append: %v", err)
					}
				}
				return domain.DecideCreateAPIKey(tenant, key, "ef")
			}
			tenant, err := Execute(ctx, store, s.Tenant, domain.Metadata{}, domain.ApplyTenant, decide)
			wantCalls := min(tc.interfere+1, 2)
			if calls != wantCalls {
				t.Errorf("decide calls: got %d, want %d", calls, wantCalls)
			}
			if tc.wantErr {
				var derr *domain.Error
				if !errors.As(err, &derr) || derr.Kind != domain.Conflict {
					t.Fatalf("execute: got %v, want a *domain.Error of kind Conflict", err)
				}
				if !errors.Is(err, ErrVersionConflict) {
					t.Errorf("execute error cause: got %v, want %v", errors.Unwrap(err), ErrVersionConflict)
				}
				if tenant.ID != uuid.Nil {
					t.Errorf("state on conflict: got %+v, want the zero state", tenant)
				}
				checkContiguous(t, ctx, store, s.Tenant, 2+tc.interfere)
				return
			}
			if err != nil {
				t.Fatalf("execute: %v", err)
			}
			if !tenant.APIKeys[key] || len(tenant.APIKeys) != 2+tc.interfere {
				t.Errorf("state: got keys %v, want %s among %d", tenant.APIKeys, key, 2+tc.interfere)
			}
			checkContiguous(t, ctx, store, s.Tenant, 3+tc.interfere)
		})
	}
}

// TestCreateSnapshotRefusesAnExistingStream: a create on a new stream
// appends version 1 without loading; on a stream that already has events
// it is a 409 and appends nothing.
func TestCreateSnapshotRefusesAnExistingStream(t *testing.T) {
	t.Parallel()
	ctx := testenv.Context(t, 30*time.Second)
	store := New(mustMigrated(t, 4), projections.Projector{}, nil)
	s, batches := newTenant(t)
	first := batches[0]
	decide := func(domain.Tenant) ([]domain.Event, error) { return first.Events, nil }
	snap, err := CreateSnapshot(ctx, store, s.Tenant, domain.Metadata{}, domain.ApplyTenant, decide)
	if err != nil || snap.Version != len(first.Events) || snap.State.ID != s.Tenant.ID || snap.CreatedAt.IsZero() {
		t.Fatalf("create: got %+v, %v; want version %d of tenant %s", snap, err, len(first.Events), s.Tenant.ID)
	}
	_, err = CreateSnapshot(ctx, store, s.Tenant, domain.Metadata{}, domain.ApplyTenant, decide)
	var derr *domain.Error
	if !errors.As(err, &derr) || derr.Kind != domain.Conflict || !errors.Is(err, ErrVersionConflict) {
		t.Fatalf("create again: got %v, want a Conflict caused by ErrVersionConflict", err)
	}
	checkContiguous(t, ctx, store, s.Tenant, len(first.Events))
}

// BenchmarkAppend appends single events to random streams from parallel
// writers, through the real read-model projection.
func BenchmarkAppend(b *testing.B) {
	const streams = 256
	ctx := testenv.Context(b, 10*time.Minute)
	pool := mustMigrated(b, 16)
	store := New(pool, projections.Projector{}, nil)
	type slot struct {
		mu      sync.Mutex
		stream  domain.StreamRef
		state   domain.Tenant
		version int
	}
	slots := make([]*slot, streams)
	for i := range slots {
		s := mustCreateTenant(b, ctx, store)
		slots[i] = &slot{stream: s.Tenant, state: s.State, version: 2}
	}
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			s := slots[rand.IntN(streams)]
			s.mu.Lock()
			_, err := store.Append(ctx, domain.Metadata{}, Batch{Stream: s.stream, State: s.state, Expected: s.version, Events: []domain.Event{newKey()}})
			if err == nil {
				s.version++
			}
			s.mu.Unlock()
			if err != nil {
				b.Errorf("append: %v", err)
				return
			}
		}
	})
}

// TestAppendInRequestIsHeld: a keyed request's appends are held, and
// commit together with its record, the later ones deciding on the earlier
// (their inserts go before every projection's statement).
func TestAppendInRequestIsHeld(t *testing.T) {
	t.Parallel()
	ctx := testenv.Context(t, 30*time.Second)
	pool := mustMigrated(t, 4)
	store := New(pool, projections.Projector{}, nil)
	s := mustCreateTenant(t, ctx, store) // tenant stream at version 2, one API key

	held := &requestAppends{}
	rctx := withRequestAppends(ctx, held)
	state := s.State
	for version := 2; version < 4; version++ {
		key := newKey()
		if _, err := store.Append(rctx, domain.Metadata{}, Batch{Stream: s.Tenant, State: state, Expected: version, Events: []domain.Event{key}}); err != nil {
			t.Fatalf("append at %d: %v", version, err)
		}
		state = domain.ApplyTenant(state, key)
	}
	if got := countRows(t, ctx, pool, `SELECT count(*) FROM api_keys`); got != 1 {
		t.Errorf("api keys before the request's commit: got %d, want 1", got)
	}
	if err := store.commitRequest(ctx, held, &pgx.QueuedQuery{SQL: `SELECT 1`}); err != nil {
		t.Fatalf("commit: %v", err)
	}
	checkContiguous(t, ctx, store, s.Tenant, 4)
	if got := countRows(t, ctx, pool, `SELECT count(*) FROM api_keys`); got != 3 {
		t.Errorf("api keys: got %d, want 3", got)
	}
}

// TestAppendStoresTheDomainsText checks that an event's data and metadata
// are stored as the text the domain wrote (migration 0010), and that an
// older process's append, whose statement passes jsonb, still stores
// through the assignment cast.
func TestAppendStoresTheDomainsText(t *testing.T) {
	t.Parallel()
	ctx := testenv.Context(t, 30*time.Second)
	pool := mustMigrated(t, 2)
	store := New(pool, projections.Projector{}, nil)
	s, batches := newTenant(t)
	recs, err := store.Append(ctx, domain.Metadata{Actor: "operator", RequestID: "req-text"}, batches...)
	if err != nil {
		t.Fatalf("append: %v", err)
	}
	stored := func(id uuid.UUID) (data, meta string) {
		t.Helper()
		if err := pool.QueryRow(ctx, `SELECT data::text, metadata::text FROM events WHERE id = $1`, id).Scan(&data, &meta); err != nil {
			t.Fatalf("read event %s: %v", id, err)
		}
		return data, meta
	}
	for _, r := range recs {
		data, meta := stored(r.ID)
		wantMeta, _ := json.Marshal(r.Meta)
		if data != string(r.Data) || meta != string(wantMeta) {
			t.Errorf("%s: stored data %s metadata %s, want %s and %s", r.Type, data, meta, r.Data, wantMeta)
		}
	}

	older := strings.Replace(appendEvents, "::json[]", "::jsonb[]", 2)
	if older == appendEvents {
		t.Fatal("appendEvents no longer passes json arrays: update this test")
	}
	rec, err := domain.NewRecord(s.Tenant, 3, newKey(), domain.Metadata{Actor: "older"}, uuid.Must(uuid.NewV7()), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var c eventColumns
	if err := c.add(rec); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, older, s.Tenant.TenantID, s.Tenant.Type, s.Tenant.ID, 2, rec.RecordedAt,
		c.ids, c.versions, c.types, c.schemas, c.datas, c.metas); err != nil {
		t.Fatalf("append through jsonb: %v", err)
	}
	data, _ := stored(rec.ID)
	var got, want any
	if err := json.Unmarshal([]byte(data), &got); err != nil {
		t.Fatalf("stored data %s: %v", data, err)
	}
	json.Unmarshal(rec.Data, &want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("appended through jsonb: stored %s, want %s", data, rec.Data)
	}
}
