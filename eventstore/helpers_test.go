package eventstore

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore/testenv"
	"github.com/ledger/ledger/projections"
)

// Helpers shared by the eventstore tests. They talk to the real Postgres and
// NATS servers of testenv; a missing server fails the test.

// mustMigrated returns a pool of at most maxConns connections on a new,
// migrated database of t's own; the pool closes before the database is dropped.
func mustMigrated(t testing.TB, maxConns int32) *pgxpool.Pool {
	t.Helper()
	pool := mustPool(t, testenv.NewDatabase(t), maxConns)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := Migrate(ctx, pool, allMigrations()...); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return pool
}

// allMigrations are the sets ledgerd applies: the event store's and the read models'.
func allMigrations() []MigrationSet {
	return []MigrationSet{Migrations, {Component: "projections", FS: projections.Migrations}}
}

func mustPool(t testing.TB, url string, maxConns int32) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatalf("parse database url: %v", err)
	}
	cfg.MaxConns = maxConns
	NativeUUIDs(cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatalf("open pool: %v", err)
	}
	if err := pool.Ping(ctx); err != nil {
		t.Fatalf("ping %s: %v", url, err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// nopProjector projects nothing: for tests that append to many streams
// without the read models' constraints.
type nopProjector struct{}

func (nopProjector) Project(*pgx.Batch, any, []domain.Record) error { return nil }

// tenantStreams are the two streams a new tenant starts with.
type tenantStreams struct {
	Tenant, Owner domain.StreamRef
	State         domain.Tenant // the tenant stream's state after its first events: what later key events are decided on
}

// newTenant returns the streams and first batches of a new tenant, as the
// operator's create-tenant command writes them: tenant.created and
// tenant.api_key_created on the tenant stream, user.created on its owner's.
func newTenant(t testing.TB) (tenantStreams, []Batch) {
	t.Helper()
	s, batches, err := tenantBatches()
	if err != nil {
		t.Fatalf("decide create tenant: %v", err)
	}
	return s, batches
}

// tenantBatches is newTenant for goroutines other than the test's.
func tenantBatches() (tenantStreams, []Batch, error) {
	id, owner := uuid.New(), uuid.New()
	tenantEvents, ownerEvents, err := domain.DecideCreateTenant(domain.CreateTenant{
		TenantID: id, OwnerUserID: owner, Name: "Tenant " + id.String()[:8],
		OwnerEmail: "owner-" + id.String()[:8] + "@example.com",
		APIKey:     "key-" + uuid.NewString(), SecretHash: strings.Repeat("ab", 32),
	})
	s := tenantStreams{
		Tenant: domain.StreamRef{TenantID: id, Type: "tenant", ID: id},
		Owner:  domain.StreamRef{TenantID: id, Type: "user", ID: owner},
	}
	for _, e := range tenantEvents {
		s.State = domain.ApplyTenant(s.State, e)
	}
	return s, []Batch{{Stream: s.Tenant, Events: tenantEvents}, {Stream: s.Owner, Events: ownerEvents}}, err
}

// mustCreateTenant appends a new tenant's first events.
func mustCreateTenant(t testing.TB, ctx context.Context, store *Store) tenantStreams {
	t.Helper()
	s, batches := newTenant(t)
	if _, err := store.Append(ctx, domain.Metadata{Actor: "operator"}, batches...); err != nil {
		t.Fatalf("create tenant: %v", err)
	}
	return s
}

// newKey is an api_key_created event with a fresh key, so the api_keys read
// model's primary key never collides.
func newKey() domain.Event {
	return domain.APIKeyCreated{APIKey: "key-" + uuid.NewString(), SecretHash: strings.Repeat("cd", 32)}
}

// streamVersions returns the versions stored for a stream, in order.
func streamVersions(t testing.TB, ctx context.Context, pool *pgxpool.Pool, stream uuid.UUID) []int {
	t.Helper()
	rows, err := pool.Query(ctx, `SELECT stream_version FROM events WHERE stream_id = $1 ORDER BY stream_version`, stream)
	if err != nil {
		t.Fatalf("read versions: %v", err)
	}
	versions, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		t.Fatalf("read versions: %v", err)
	}
	return versions
}

// countRows returns the result of a count(*) query.
func countRows(t testing.TB, ctx context.Context, pool *pgxpool.Pool, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(ctx, sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// testLogger sends a component's logs to t's log.
func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// mustJetStream connects to the NATS server at url.
func mustJetStream(t testing.TB, url string, opts ...nats.Option) jetstream.JetStream {
	t.Helper()
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		t.Fatalf("connect to NATS %s: %v", url, err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatalf("jetstream: %v", err)
	}
	return js
}

// runningRelay is a Relay.Run goroutine a test can stop.
type runningRelay struct {
	cancel context.CancelFunc
	done   chan error
}

// startRelay runs r until the returned relay is stopped or t ends.
func startRelay(t testing.TB, r *Relay) *runningRelay {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	rr := &runningRelay{cancel: cancel, done: make(chan error, 1)}
	go func() { rr.done <- r.Run(ctx) }()
	t.Cleanup(func() { rr.stop(t) })
	return rr
}

// stop cancels the relay and waits for Run to return; it may be called again.
func (rr *runningRelay) stop(t testing.TB) {
	t.Helper()
	rr.cancel()
	rr.wait(t, 15*time.Second)
}

// wait waits for Run to return on its own and checks it returned ctx's error.
func (rr *runningRelay) wait(t testing.TB, d time.Duration) {
	t.Helper()
	select {
	case err, ok := <-rr.done:
		if ok {
			close(rr.done)
			if !errors.Is(err, context.Canceled) {
				t.Errorf("relay run: got %v, want %v", err, context.Canceled)
			}
		}
	case <-time.After(d):
		t.Fatalf("relay did not stop within %v", d)
	}
}

// sequencerState is the row of sequencer_state plus the events waiting for
// a position.
type sequencerState struct {
	Last, Published, Events, Unsequenced int64
}

func readSequencerState(ctx context.Context, pool *pgxpool.Pool) (sequencerState, error) {
	var s sequencerState
	err := pool.QueryRow(ctx, `SELECT last_position, published_position,
		(SELECT count(*) FROM events), (SELECT count(*) FROM events WHERE position IS NULL)
		FROM sequencer_state`).Scan(&s.Last, &s.Published, &s.Events, &s.Unsequenced)
	return s, err
}

// waitPublished waits until every event is sequenced and published_position
// has reached last_position, and returns the event ids in position order.
func waitPublished(t testing.TB, ctx context.Context, pool *pgxpool.Pool, d time.Duration) []string {
	t.Helper()
	deadline := time.Now().Add(d)
	var s sequencerState
	var err error
	for {
		s, err = readSequencerState(ctx, pool)
		if err == nil && s.Unsequenced == 0 && s.Last == s.Events && s.Published == s.Last {
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("events not all published within %v: got %+v (err %v), want published = last = events", d, s, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	rows, err := pool.Query(ctx, `SELECT id::text FROM events ORDER BY position`)
	if err != nil {
		t.Fatalf("read event ids: %v", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatalf("read event ids: %v", err)
	}
	return ids
}

// publishedMsg is one message of the JetStream stream.
type publishedMsg struct {
	Seq     uint64
	Subject string
	MsgID   string // Nats-Msg-Id header
	Event   domain.CloudEvent
	Data    map[string]any // Event.Data decoded
}

// readPublished returns every message of a JetStream stream, in stream order.
func readPublished(t testing.TB, ctx context.Context, js jetstream.JetStream, name string) []publishedMsg {
	t.Helper()
	stream, err := js.Stream(ctx, name)
	if err != nil {
		t.Fatalf("stream %s: %v", name, err)
	}
	info, err := stream.Info(ctx)
	if err != nil {
		t.Fatalf("stream %s info: %v", name, err)
	}
	var msgs []publishedMsg
	for seq := info.State.FirstSeq; seq > 0 && seq <= info.State.LastSeq; seq++ {
		m, err := stream.GetMsg(ctx, seq)
		if err != nil {
			t.Fatalf("get message %d of %s: %v", seq, name, err)
		}
		p := publishedMsg{Seq: seq, Subject: m.Subject, MsgID: m.Header.Get(jetstream.MsgIDHeader)}
		if err := json.Unmarshal(m.Data, &p.Event); err != nil {
			t.Fatalf("decode message %d: %v", seq, err)
		}
		if err := json.Unmarshal(p.Event.Data, &p.Data); err != nil {
			t.Fatalf("decode data of message %d: %v", seq, err)
		}
		msgs = append(msgs, p)
	}
	return msgs
}

// checkExactlyOnceInOrder checks that the stream holds exactly the events
// wantIDs (ids in position order), each once, in position order, with every
// stream's versions increasing.
func checkExactlyOnceInOrder(t testing.TB, msgs []publishedMsg, wantIDs []string) {
	t.Helper()
	count := map[string]int{}
	for _, m := range msgs {
		count[m.MsgID]++
		if m.Event.ID != m.MsgID {
			t.Errorf("message %d: got CloudEvent id %s, want its Nats-Msg-Id %s", m.Seq, m.Event.ID, m.MsgID)
		}
	}
	var dups, missing int
	for _, n := range count {
		dups += n - 1
	}
	want := map[string]bool{}
	for _, id := range wantIDs {
		want[id] = true
		if count[id] == 0 {
			missing++
		}
	}
	var foreign int
	for id := range count {
		if !want[id] {
			foreign++
		}
	}
	if dups != 0 || missing != 0 || foreign != 0 {
		t.Fatalf("stream holds %d messages for %d events: got %d duplicates, %d missing, %d unknown; want 0, 0, 0",
			len(msgs), len(wantIDs), dups, missing, foreign)
	}
	lastVersion := map[string]int{}
	for i, m := range msgs {
		if m.MsgID != wantIDs[i] || m.Event.Position != int64(i+1) {
			t.Fatalf("message %d: got event %s at position %d, want %s at position %d", m.Seq, m.MsgID, m.Event.Position, wantIDs[i], i+1)
		}
		if v := lastVersion[m.Event.StreamID]; m.Event.StreamVersion <= v {
			t.Fatalf("stream %s: got version %d after %d, want increasing versions", m.Event.StreamID, m.Event.StreamVersion, v)
		}
		lastVersion[m.Event.StreamID] = m.Event.StreamVersion
	}
}
