package eventstore

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore/testenv"
	"github.com/ledger/ledger/projections"
)

// appendTenants appends n new tenants (three events each).
func appendTenants(t *testing.T, ctx context.Context, store *Store, n int) {
	t.Helper()
	for range n {
		mustCreateTenant(t, ctx, store)
	}
}

// relayEnv is a migrated database, a store on it, and a JetStream stream of
// the test's own, on the local NATS server or an embedded one.
type relayEnv struct {
	pool   *pgxpool.Pool
	store  *Store
	js     jetstream.JetStream
	stream testenv.Stream
	cfg    RelayConfig
}

func newRelayEnv(t *testing.T) relayEnv {
	t.Helper()
	return newRelayEnvOn(t, localNATS)
}

// The NATS servers relay tests can run against: the local one (testenv) and
// this module's embedded nats-server. Their versions differ in the order they
// check a message's expected last sequence and its de-duplication, which
// matters to a relay recovering from a crash, so those tests run on both.
const (
	localNATS    = "local"
	embeddedNATS = "embedded"
)

func newRelayEnvOn(t *testing.T, server string) relayEnv {
	t.Helper()
	var url string
	var stream testenv.Stream
	switch server {
	case localNATS:
		url, stream = testenv.NATSURL(), testenv.NewStream(t)
	case embeddedNATS:
		url = startNATS(t, -1, t.TempDir()).ClientURL()
		stream = testenv.Stream{Name: testenv.Name("LEDGER_T"), SubjectPrefix: testenv.Name("ledgert")}
	default:
		t.Fatalf("unknown NATS server %q", server)
	}
	pool := mustMigrated(t, 8)
	return relayEnv{
		pool: pool, store: New(pool, projections.Projector{}, nil),
		js: mustJetStream(t, url), stream: stream,
		cfg: RelayConfig{Stream: stream.Name, SubjectPrefix: stream.SubjectPrefix},
	}
}

func (e relayEnv) newRelay(t *testing.T, reg prometheus.Registerer) *Relay {
	return NewRelay(e.pool, e.js, e.cfg, testLogger(t), reg)
}

// newWatchedRelay is newRelay whose log is also kept in lines.
func (e relayEnv) newWatchedRelay(t *testing.T, lines *logLines) *Relay {
	return NewRelay(e.pool, e.js, e.cfg, slog.New(slog.NewTextHandler(io.MultiWriter(testWriter{t}, lines), nil)), nil)
}

// logLines keeps what a logger writes.
type logLines struct {
	mu   sync.Mutex
	text strings.Builder
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.text.Write(p)
}

// checkNoPublishRefused fails t if the relay logged a publish JetStream
// refused: a relay taking over must go on from the stream's last message,
// not send what does not follow it and count on JetStream to refuse it
// (a clustered stream of nats-server 2.15 takes such a message and then
// stops taking any).
func (l *logLines) checkNoPublishRefused(t *testing.T) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	if strings.Contains(l.text.String(), "publish failed") {
		t.Errorf("the relay had a publish refused; want it to reconcile with the stream first:\n%s", l.text.String())
	}
}

// checkStream waits until everything is published and checks the stream
// holds each event exactly once, in position order.
func (e relayEnv) checkStream(t *testing.T, ctx context.Context, within time.Duration) []publishedMsg {
	t.Helper()
	ids := waitPublished(t, ctx, e.pool, within)
	msgs := readPublished(t, ctx, e.js, e.stream.Name)
	checkExactlyOnceInOrder(t, msgs, ids)
	return msgs
}

// crashAfterPublish runs a relay that dies between publishing its first
// batch and marking it published, and checks that it did.
func (e relayEnv) crashAfterPublish(t *testing.T, ctx context.Context, duplicates time.Duration) {
	t.Helper()
	crashing := e.newRelay(t, nil)
	if duplicates > 0 {
		crashing.cfg.Duplicates = duplicates
	}
	rr := &runningRelay{done: make(chan error, 1)}
	runCtx, cancel := context.WithCancel(ctx)
	rr.cancel = cancel
	var once sync.Once
	crashing.afterPublish = func() { once.Do(cancel) } // the marking UPDATE then fails: the process "died"
	go func() { rr.done <- crashing.Run(runCtx) }()
	t.Cleanup(func() { rr.stop(t) })
	rr.wait(t, 30*time.Second)

	s, err := readSequencerState(ctx, e.pool)
	if err != nil {
		t.Fatalf("read sequencer state: %v", err)
	}
	if s.Last != s.Events || s.Published != 0 {
		t.Fatalf("after the crash: got %+v, want every event sequenced and none marked published", s)
	}
	if got := len(readPublished(t, ctx, e.js, e.stream.Name)); int64(got) != s.Last {
		t.Fatalf("after the crash: got %d messages in the stream, want all %d published", got, s.Last)
	}
}

// TestRelayCrashBetweenPublishAndMark: a relay publishes a batch and dies
// before it records that; the next relay must not publish anything twice.
func TestRelayCrashBetweenPublishAndMark(t *testing.T) {
	t.Parallel()
	for _, server := range []string{localNATS, embeddedNATS} {
		t.Run(server, func(t *testing.T) {
			t.Parallel()
			testRelayCrashBetweenPublishAndMark(t, newRelayEnvOn(t, server))
		})
	}
}

func testRelayCrashBetweenPublishAndMark(t *testing.T, e relayEnv) {
	ctx := testenv.Context(t, 60*time.Second)
	appendTenants(t, ctx, e.store, 5)
	e.crashAfterPublish(t, ctx, 0)

	appendTenants(t, ctx, e.store, 3) // more events while no relay runs
	var lines logLines
	startRelay(t, e.newWatchedRelay(t, &lines))
	msgs := e.checkStream(t, ctx, 20*time.Second)
	if len(msgs) != 8*3 {
		t.Errorf("got %d messages, want %d", len(msgs), 8*3)
	}

	appendTenants(t, ctx, e.store, 2) // and it goes on publishing
	e.checkStream(t, ctx, 20*time.Second)

	// published_position reset under the running relay: no event twice.
	if _, err := e.pool.Exec(ctx, `UPDATE sequencer_state SET published_position = 0`); err != nil {
		t.Fatalf("reset published position: %v", err)
	}
	msgs = e.checkStream(t, ctx, 20*time.Second)
	if len(msgs) != 10*3 {
		t.Errorf("got %d messages, want %d", len(msgs), 10*3)
	}
	lines.checkNoPublishRefused(t)
}

// TestRelayReconcilesAfterDedupWindow covers a restart after JetStream's
// de-duplication window has expired: re-sent messages are no longer dropped
// as duplicates, so the relay must learn from the stream how far it got. The
// expiry is real: the relays' window is cut to the server's minimum range and
// the test waits it out.
func TestRelayReconcilesAfterDedupWindow(t *testing.T) {
	t.Parallel()
	for _, server := range []string{localNATS, embeddedNATS} {
		t.Run(server, func(t *testing.T) {
			t.Parallel()
			testRelayReconcilesAfterDedupWindow(t, newRelayEnvOn(t, server))
		})
	}
}

func testRelayReconcilesAfterDedupWindow(t *testing.T, e relayEnv) {
	const window = 250 * time.Millisecond
	ctx := testenv.Context(t, 60*time.Second)
	appendTenants(t, ctx, e.store, 5)
	e.crashAfterPublish(t, ctx, window)
	time.Sleep(4 * window) // the server forgets the message ids

	appendTenants(t, ctx, e.store, 3)
	var lines logLines
	relay := e.newWatchedRelay(t, &lines)
	relay.cfg.Duplicates = window
	startRelay(t, relay)
	e.checkStream(t, ctx, 20*time.Second)

	// An operator (or a restore) moves published_position back under the
	// running relay, after the window: it must reconcile, not re-send.
	time.Sleep(4 * window)
	if _, err := e.pool.Exec(ctx, `UPDATE sequencer_state SET published_position = 0`); err != nil {
		t.Fatalf("reset published position: %v", err)
	}
	appendTenants(t, ctx, e.store, 1)
	msgs := e.checkStream(t, ctx, 20*time.Second)
	if len(msgs) != 9*3 {
		t.Errorf("got %d messages, want %d", len(msgs), 9*3)
	}
	lines.checkNoPublishRefused(t)
}

// TestRelayTwoInstances runs two relays on one database and stream: one
// leads, everything is published once, and when the leader stops the other
// takes over within a few seconds.
func TestRelayTwoInstances(t *testing.T) {
	t.Parallel()
	ctx := testenv.Context(t, 60*time.Second)
	e := newRelayEnv(t)
	regs := []*prometheus.Registry{prometheus.NewRegistry(), prometheus.NewRegistry()}
	standingBy := []chan struct{}{make(chan struct{}, 1), make(chan struct{}, 1)}
	relays := make([]*runningRelay, len(regs))
	for i, reg := range regs {
		r := e.newRelay(t, reg)
		r.standingBy = func() {
			select {
			case standingBy[i] <- struct{}{}:
			default:
			}
		}
		relays[i] = startRelay(t, r)
	}

	appendTenants(t, ctx, e.store, 10)
	e.checkStream(t, ctx, 20*time.Second)
	leader := waitLeader(t, regs, -1, 5*time.Second)
	standby := 1 - leader
	// Leadership stays put while both run: the standby tries again (after
	// its retry interval) and stands by once more, and only the leader
	// publishes.
	for range 2 {
		select {
		case <-standingBy[standby]:
		case <-ctx.Done():
			t.Fatalf("relay %d never tried to lead again while relay %d led", standby, leader)
		}
	}
	if got := leaders(t, regs); len(got) != 1 || got[0] != leader {
		t.Fatalf("leaders: got %v, want only relay %d", got, leader)
	}
	if got := metricValue(t, regs[leader], "ledger_relay_published_total"); got != 30 {
		t.Errorf("leader's published count: got %v, want 30", got)
	}
	if got := metricValue(t, regs[standby], "ledger_relay_published_total"); got != 0 {
		t.Errorf("standby's published count: got %v, want 0", got)
	}

	start := time.Now()
	relays[leader].stop(t)
	waitLeader(t, regs, standby, 5*time.Second)
	appendTenants(t, ctx, e.store, 5)
	e.checkStream(t, ctx, 10*time.Second)
	if got := metricValue(t, regs[standby], "ledger_relay_published_total"); got < 15 {
		t.Errorf("new leader's published count: got %v, want at least 15", got)
	}
	t.Logf("relay %d took over and published in %v", standby, time.Since(start).Round(time.Millisecond))
}

// leaders returns the relays whose ledger_relay_leader gauge is 1.
func leaders(t *testing.T, regs []*prometheus.Registry) []int {
	t.Helper()
	var got []int
	for i, reg := range regs {
		if metricValue(t, reg, "ledger_relay_leader") == 1 {
			got = append(got, i)
		}
	}
	return got
}

// metricValue returns the value of an unlabelled gauge or counter.
func metricValue(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	m := metricOf(t, reg, name)
	return m.GetGauge().GetValue() + m.GetCounter().GetValue()
}

// metricOf returns the one metric of an unlabelled family.
func metricOf(t *testing.T, reg *prometheus.Registry, name string) *dto.Metric {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather metrics: %v", err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0]
		}
	}
	t.Fatalf("metric %s not registered", name)
	return nil
}

// waitLeader waits until exactly one relay leads (want, or any when want is
// -1) and returns it.
func waitLeader(t *testing.T, regs []*prometheus.Registry, want int, within time.Duration) int {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		got := leaders(t, regs)
		if len(got) == 1 && (want < 0 || got[0] == want) {
			return got[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("leaders after %v: got %v, want exactly relay %d", within, got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestRelayPublishesPublicData checks what subscribers get: the stored
// CloudEvent with its private fields left out of data, still carrying the
// stored event's hash.
func TestRelayPublishesPublicData(t *testing.T) {
	t.Parallel()
	ctx := testenv.Context(t, 60*time.Second)
	e := newRelayEnv(t)
	s := mustCreateTenant(t, ctx, e.store)
	startRelay(t, e.newRelay(t, nil))
	msgs := e.checkStream(t, ctx, 20*time.Second)

	stored := map[string]domain.Record{}
	for _, stream := range []domain.StreamRef{s.Tenant, s.Owner} {
		recs, err := e.store.Load(ctx, stream)
		if err != nil {
			t.Fatalf("load: %v", err)
		}
		for _, r := range recs {
			stored[r.ID.String()] = r
		}
	}
	private := map[string][]string{
		"tenant.created":         {"ownerEmail"},
		"tenant.api_key_created": {"secretHash"},
		"user.created":           {"email", "name"},
	}
	kept := map[string][]string{
		"tenant.created":         {"tenantId", "name", "ownerUserId"},
		"tenant.api_key_created": {"apiKey"},
		"user.created":           {"userId", "role"},
	}
	seen := map[string]int{}
	for _, m := range msgs {
		r, ok := stored[m.MsgID]
		if !ok {
			t.Fatalf("message %s: not a stored event", m.MsgID)
		}
		seen[r.Type]++
		var storedData map[string]any
		if err := json.Unmarshal(r.Data, &storedData); err != nil {
			t.Fatalf("decode stored data: %v", err)
		}
		for _, f := range private[r.Type] {
			if _, ok := m.Data[f]; ok {
				t.Errorf("%s published: got field %q in data, want it left out", r.Type, f)
			}
			if _, ok := storedData[f]; !ok {
				t.Errorf("%s stored: field %q missing, want it kept", r.Type, f)
			}
		}
		for _, f := range kept[r.Type] {
			if m.Data[f] != storedData[f] {
				t.Errorf("%s published %s: got %v, want %v", r.Type, f, m.Data[f], storedData[f])
			}
		}
		if m.Event.Hash == "" || m.Event.Hash != r.Hash || m.Event.PrevHash != r.PrevHash {
			t.Errorf("%s published hash/prevhash: got %s/%s, want the stored %s/%s", r.Type, m.Event.Hash, m.Event.PrevHash, r.Hash, r.PrevHash)
		}
		if h, err := Hash(r.PrevHash, r); err != nil || h != m.Event.Hash {
			t.Errorf("%s published hash: got %s, want %s (recomputed from the stored event, %v)", r.Type, m.Event.Hash, h, err)
		}
		want := domain.Envelope(r)
		got := m.Event
		got.Data, want.Data = nil, nil
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s published envelope: got %+v, want %+v", r.Type, got, want)
		}
		if wantSubject := e.cfg.SubjectPrefix + "." + r.TenantID.String() + "." + r.StreamType + "." + r.StreamID.String() + "." + r.Type[len(r.StreamType)+1:]; m.Subject != wantSubject {
			t.Errorf("subject: got %s, want %s", m.Subject, wantSubject)
		}
	}
	for typ := range private {
		if seen[typ] != 1 {
			t.Errorf("%s: got %d messages, want 1", typ, seen[typ])
		}
	}
}

// TestRelayWakesOnCommit checks that a relay waiting while idle is woken
// by an append of its own process (Store.OnCommit wired to Wake), while
// another writer's append waits for the end of the relay's wait.
func TestRelayWakesOnCommit(t *testing.T) {
	t.Parallel()
	e := newRelayEnv(t)
	// No idle wait ends within the test: only Wake can end the one below.
	e.cfg.MaxIdleWait = time.Hour
	ctx := testenv.Context(t, time.Minute)
	r := e.newRelay(t, nil)
	idling := make(chan struct{}, 1)
	r.idling = func() {
		select {
		case idling <- struct{}{}:
		default:
		}
	}
	e.store.OnCommit(r.Wake)
	startRelay(t, r)
	select { // its first round found nothing: it waits
	case <-idling:
	case <-ctx.Done():
		t.Fatal("the relay never began an idle wait")
	}

	// The relay is in an idle wait that only Wake ends, and another
	// process's store does not wake it: its append stays unpublished.
	other := New(e.pool, projections.Projector{}, nil)
	mustCreateTenant(t, ctx, other)
	s, err := readSequencerState(ctx, e.pool)
	if err != nil {
		t.Fatalf("read sequencer state: %v", err)
	}
	if s.Published == s.Events || s.Unsequenced == 0 {
		t.Fatalf("another writer's append was sequenced during an idle wait: got %+v, want it unsequenced", s)
	}

	start := time.Now()
	mustCreateTenant(t, ctx, e.store)
	e.checkStream(t, ctx, 2*time.Second)
	t.Logf("own append woke the relay: everything published after %v", time.Since(start).Round(time.Millisecond))
}

// TestRelayRoundMetrics checks the metrics that break the relay's lag into
// its parts: every sequenced event is counted in exactly one busy round,
// and rounds that follow each other while appends go on have an interval.
func TestRelayRoundMetrics(t *testing.T) {
	t.Parallel()
	e := newRelayEnv(t)
	ctx := testenv.Context(t, time.Minute)
	reg := prometheus.NewRegistry()
	startRelay(t, e.newRelay(t, reg))
	appendTenants(t, ctx, e.store, 1)
	e.checkStream(t, ctx, 20*time.Second) // one round, alone: no interval yet
	if got := histogramCount(t, reg, "ledger_relay_round_interval_seconds"); got != 0 {
		t.Fatalf("interval observations after one busy round: got %d, want 0", got)
	}

	for end := time.Now().Add(time.Second); time.Now().Before(end); { // appends while the relay works
		appendTenants(t, ctx, e.store, 1)
	}
	e.checkStream(t, ctx, 20*time.Second)
	s, err := readSequencerState(ctx, e.pool)
	if err != nil {
		t.Fatalf("read sequencer state: %v", err)
	}
	if got := histogramSum(t, reg, "ledger_relay_round_events"); int64(got) != s.Events {
		t.Fatalf("events counted in rounds: got %v, want every event sequenced, %d", got, s.Events)
	}
	rounds := histogramCount(t, reg, "ledger_relay_sequence_seconds")
	if rounds < 2 || rounds != histogramCount(t, reg, "ledger_relay_round_events") {
		t.Fatalf("busy rounds: got %d sequencing transactions and %d event counts, want the same number, at least 2",
			rounds, histogramCount(t, reg, "ledger_relay_round_events"))
	}
	if got := histogramCount(t, reg, "ledger_relay_publish_seconds"); got != rounds {
		t.Fatalf("publish observations: got %d, want one per busy round (%d)", got, rounds)
	}
	if got := histogramCount(t, reg, "ledger_relay_round_interval_seconds"); got == 0 || got >= rounds {
		t.Fatalf("interval observations: got %d, want at least one and fewer than the %d busy rounds", got, rounds)
	}
}

// histogramCount and histogramSum read an unlabelled histogram.
func histogramCount(t *testing.T, reg *prometheus.Registry, name string) uint64 {
	return histogramOf(t, reg, name).GetSampleCount()
}

func histogramSum(t *testing.T, reg *prometheus.Registry, name string) float64 {
	return histogramOf(t, reg, name).GetSampleSum()
}

func histogramOf(t *testing.T, reg *prometheus.Registry, name string) *dto.Histogram {
	t.Helper()
	return metricOf(t, reg, name).GetHistogram()
}

// A stream that loses its messages while the relay has nothing to publish
// (here deleted; JetStream's tail lost in a crash is the same) is made
// whole again without waiting for the next append: an idle relay checks
// the stream's end every StreamCheck, and publishes every event again.
func TestRelayRepublishesToAStreamThatLostItsMessages(t *testing.T) {
	t.Parallel()
	e := newRelayEnv(t)
	e.cfg.StreamCheck = 100 * time.Millisecond
	ctx := testenv.Context(t, 60*time.Second)
	appendTenants(t, ctx, e.store, 3)
	startRelay(t, e.newRelay(t, nil))
	e.checkStream(t, ctx, 20*time.Second)
	if err := e.js.DeleteStream(ctx, e.stream.Name); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if s, err := e.js.Stream(ctx, e.stream.Name); err == nil {
			if info, err := s.Info(ctx); err == nil && info.State.Msgs == 9 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the deleted stream did not get its 9 events again within 20 s")
		}
	}
	e.checkStream(t, ctx, 20*time.Second)
}

// TestRelayGoesOnWhenTheLastMessageIsGone: the stream's last message is
// gone (the stream denies purges, but an operator may recreate it starting
// after the old sequence, or a limit may drop messages); a relay taking
// over has nothing to reconcile with and publishes on after
// published_position, not stalling.
func TestRelayGoesOnWhenTheLastMessageIsGone(t *testing.T) {
	t.Parallel()
	for _, server := range []string{localNATS, embeddedNATS} {
		t.Run(server, func(t *testing.T) {
			t.Parallel()
			e := newRelayEnvOn(t, server)
			ctx := testenv.Context(t, 60*time.Second)
			appendTenants(t, ctx, e.store, 2)
			first := startRelay(t, e.newRelay(t, nil))
			e.checkStream(t, ctx, 20*time.Second)
			first.stop(t)
			stream, err := e.js.Stream(ctx, e.stream.Name)
			if err != nil {
				t.Fatal(err)
			}
			info, err := stream.Info(ctx)
			if err != nil {
				t.Fatal(err)
			}
			// nats-server removes an account's streams directory in a
			// goroutine once its last stream is deleted, and a stream
			// created meanwhile fails ("could not create storage
			// directory"). The embedded server holds only this test's
			// stream, so a second one keeps that directory.
			second := e.stream.Name + "_KEEP"
			if _, err := e.js.CreateStream(ctx, jetstream.StreamConfig{Name: second,
				Subjects: []string{e.stream.SubjectPrefix + "keep.>"}}); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if err := e.js.DeleteStream(context.Background(), second); err != nil {
					t.Errorf("delete the second stream: %v", err)
				}
			})
			if err := e.js.DeleteStream(ctx, e.stream.Name); err != nil {
				t.Fatal(err)
			}
			// The stream as a purge would leave it: empty, its last sequence
			// the old one. A stream without the deny flags can still be
			// purged, and the relay adds them when it takes over.
			plain, err := e.js.CreateStream(ctx, jetstream.StreamConfig{Name: e.stream.Name,
				Subjects: []string{e.stream.SubjectPrefix + ".>"}, FirstSeq: info.State.LastSeq})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.js.Publish(ctx, e.stream.SubjectPrefix+".lost", []byte("{}")); err != nil {
				t.Fatal(err)
			}
			if err := plain.Purge(ctx); err != nil {
				t.Fatalf("purge: %v", err)
			}

			appendTenants(t, ctx, e.store, 1)
			startRelay(t, e.newRelay(t, nil))
			ids := waitPublished(t, ctx, e.pool, 20*time.Second)
			var got []string
			for _, m := range readPublished(t, ctx, e.js, e.stream.Name) {
				got = append(got, m.MsgID)
			}
			if want := ids[len(ids)-3:]; !reflect.DeepEqual(got, want) {
				t.Fatalf("after the loss: got messages %v, want the new tenant's events %v", got, want)
			}
		})
	}
}

// TestRelayLeaderConnectionProbesItsPeer: the session holding the relay
// lock has the server probe its socket, so a leader whose host vanished
// loses the lock in some 25 s, not after the kernel's two idle hours.
func TestRelayLeaderConnectionProbesItsPeer(t *testing.T) {
	t.Parallel()
	e := newRelayEnv(t)
	ctx := testenv.Context(t, 20*time.Second)
	conn, err := pgx.ConnectConfig(ctx, leaderConnConfig(e.pool))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for name, want := range map[string]string{"tcp_keepalives_idle": "10", "tcp_keepalives_interval": "5", "tcp_keepalives_count": "3"} {
		var got string
		if err := conn.QueryRow(ctx, `SELECT current_setting($1)`, name).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s: got %s on the leader's session, want %s", name, got, want)
		}
	}
}

// TestRelayStreamDeniesDeleteAndPurge: the stream's messages can be
// neither deleted nor purged, also when the stream existed before without
// those flags.
func TestRelayStreamDeniesDeleteAndPurge(t *testing.T) {
	t.Parallel()
	e := newRelayEnv(t)
	ctx := testenv.Context(t, 20*time.Second)
	if _, err := e.js.CreateStream(ctx, jetstream.StreamConfig{Name: e.stream.Name,
		Subjects: []string{e.stream.SubjectPrefix + ".>"}}); err != nil {
		t.Fatal(err)
	}
	stream, err := e.newRelay(t, nil).EnsureStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if cfg := stream.CachedInfo().Config; !cfg.DenyDelete || !cfg.DenyPurge {
		t.Fatalf("got deny delete %v, deny purge %v; want both", cfg.DenyDelete, cfg.DenyPurge)
	}
	if _, err := e.js.Publish(ctx, e.stream.SubjectPrefix+".t.tenant.a.created", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if err := stream.DeleteMsg(ctx, 1); err == nil {
		t.Error("delete a message: got nil, want it refused")
	}
	if err := stream.Purge(ctx); err == nil {
		t.Error("purge: got nil, want it refused")
	}
	if info, err := stream.Info(ctx); err != nil || info.State.Msgs != 1 {
		t.Errorf("got %v messages (%v), want the one published", info.State.Msgs, err)
	}
}
