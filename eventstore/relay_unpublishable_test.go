package eventstore

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ledger/ledger/eventstore/testenv"
)

// A stored event this binary cannot publish (here a type no version
// registers; in a rolling upgrade, one of a newer version) stops publishing
// at it, in order: the relay publishes everything before it, lets go of
// the lead, and stands by for UnpublishableStandby rather than taking the
// lead back every LeaderRetry, so that a newer process leads.
func TestRelayStandsByAfterAnEventItCannotPublish(t *testing.T) {
	t.Parallel()
	ctx := testenv.Context(t, time.Minute)
	e := newRelayEnv(t)
	e.cfg.LeaderRetry, e.cfg.UnpublishableStandby = 20*time.Millisecond, time.Minute
	appendTenants(t, ctx, e.store, 2) // positions 1-6
	stream := uuid.New()
	if _, err := e.pool.Exec(ctx, `INSERT INTO events (id, tenant_id, stream_type, stream_id, stream_version, type,
		schema_version, data, metadata, recorded_at) VALUES ($1, $2, 'future', $3, 1, 'future.thing_happened', 1, '{}', '{}', now())`,
		uuid.New(), uuid.New(), stream); err != nil {
		t.Fatal(err)
	}
	appendTenants(t, ctx, e.store, 1)
	reg := prometheus.NewRegistry()
	startRelay(t, e.newRelay(t, reg))

	// It leads, publishes the six events before the unknown one, and lets go.
	led := false
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		leading := metricValue(t, reg, "ledger_relay_leader") == 1
		led = led || leading
		if led && !leading {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 20 s: led %v, leading %v; want it to lead, then let go", led, leading)
		}
	}
	rows, err := e.pool.Query(ctx, `SELECT id::text FROM events WHERE position <= 6 ORDER BY position`)
	if err != nil {
		t.Fatal(err)
	}
	before, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(before) != 6 {
		t.Fatalf("events before the unknown one: got %d (%v), want 6", len(before), err)
	}
	checkExactlyOnceInOrder(t, readPublished(t, ctx, e.js, e.cfg.Stream), before)
	// Fifty LeaderRetry intervals later, it still stands by.
	for end := time.Now().Add(50 * e.cfg.LeaderRetry); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if metricValue(t, reg, "ledger_relay_leader") == 1 {
			t.Fatal("it took the lead back within its standby")
		}
	}
}
