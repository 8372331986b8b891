package projections

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore"
	"github.com/ledger/ledger/eventstore/testenv"
)

// fixture is a migrated database of the test's own with the event store
// and read models as ledgerd plugs them in. The rebuild's tests have a
// larger one of their own (projections/rebuild).
type fixture struct {
	t        *testing.T
	ctx      context.Context
	pool     *pgxpool.Pool
	store    *eventstore.Store
	versions map[uuid.UUID]int // streams appended by append, and their versions
	states   map[uuid.UUID]any // and their states
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	pool, err := pgxpool.New(ctx, testenv.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := eventstore.Migrate(ctx, pool, eventstore.Migrations,
		eventstore.MigrationSet{Component: "projections", FS: Migrations}); err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, ctx: ctx, pool: pool, store: eventstore.New(pool, Projector{}, nil),
		versions: map[uuid.UUID]int{}, states: map[uuid.UUID]any{}}
}

var testMeta = domain.Metadata{Actor: "test:projections"}

// append appends events to a stream this fixture writes alone, at the
// version it remembers.
func (f *fixture) append(ref domain.StreamRef, events ...domain.Event) []domain.Record {
	f.t.Helper()
	v := f.versions[ref.ID]
	recs, err := f.store.Append(f.ctx, testMeta, eventstore.Batch{Stream: ref, Expected: v, Events: events, State: f.states[ref.ID]})
	if err != nil {
		f.t.Fatalf("append %T to %s: %v", events[0], ref.Type, err)
	}
	if f.states[ref.ID], err = FoldStream(f.states[ref.ID], recs); err != nil {
		f.t.Fatal(err)
	}
	f.versions[ref.ID] = v + len(events)
	return recs
}
