package eventstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ledger/ledger/domain"
)

// The events table is the transactional outbox: an event row is written in
// the same transaction as the state change, and the relay publishes every
// sequenced row after sequencer_state.published_position, in position order,
// then moves published_position on. Because positions are gap-free and only
// assigned by the sequencer (sequencer.go), "after published_position" is a
// safe cursor, unlike a bigserial one.
//
// A round is cheap (leadership.round): the sequencing transaction is two
// pipelined round trips and also writes the published_position JetStream
// acknowledged in the previous rounds; the events it just sequenced are
// published straight from memory when everything before them is published
// (from the table otherwise: catching up after a restart, a NATS outage or a
// reconcile), and their acknowledgements are collected after the next round's
// sequencing. published_position therefore trails JetStream by up to two
// rounds, which the chaining below makes safe: a restart re-sends at most
// those, and JetStream drops or rejects them.
//
// Exactly once, in order, across crashes: each message carries Nats-Msg-Id =
// event id, Nats-Expected-Last-Msg-Id = the previous event's id, and
// Nats-Expected-Last-Sequence = the stream sequence that event has (the n-th
// message of a round follows the stream's last sequence plus n - 1; the very
// first event expects 0, an empty stream). JetStream drops a re-sent
// message whose id it has seen within the Duplicates window, and rejects
// one whose predecessor is not the stream's last message, so a failed
// publish also fails everything after it (no reordering), and after a crash
// between publish and marking the relay learns from the stream's last
// message how far it really got (reconcile), even beyond the dedup window.
//
// Both expectations, because each alone fails somewhere. By id alone: a
// clustered stream of nats-server 2.15 checks the expected id only when its
// replicas apply a message, and a message that fails it there stops the
// stream for good (it takes nothing more); a leader change in the middle of
// a round, whose earlier messages the old leader dropped, did that. The
// expected sequence is checked before a message enters the log and a
// mismatch is refused cleanly, so those later messages are refused
// instead. By sequence alone: a message someone else published on the
// stream's subjects shifts the sequence by one, and the message after a
// refused one would then be taken, leaving its predecessor out; the
// expected id refuses it (on a clustered stream by stopping it, as before:
// only the relay may publish there).

// RelayConfig configures the relay and the JetStream stream it writes.
type RelayConfig struct {
	Stream        string        // JetStream stream name, "LEDGER"
	SubjectPrefix string        // first subject token, "ledger"
	Duplicates    time.Duration // JetStream de-duplication window, at least 2 minutes
	Replicas      int           // stream replicas (3 in a production cluster)
	BatchSize     int           // events per sequencing and publishing round
	PollInterval  time.Duration // wait after a round that found nothing to do
	BusyRound     time.Duration // least time from one busy round's start to the next's
	MaxIdleWait   time.Duration // the wait doubles while rounds stay idle, up to this
	LeaderRetry   time.Duration // how often a standby tries to become the relay
	// StreamCheck is how often a relay with nothing to publish checks that
	// the stream still ends where it left it.
	StreamCheck time.Duration
	// UnpublishableStandby is how long a process that found a stored event
	// it cannot publish stands by before it tries to lead again.
	UnpublishableStandby time.Duration
}

func (c RelayConfig) withDefaults() RelayConfig {
	if c.Stream == "" {
		c.Stream = "LEDGER"
	}
	if c.SubjectPrefix == "" {
		c.SubjectPrefix = "ledger"
	}
	if c.Duplicates < 2*time.Minute {
		c.Duplicates = 2 * time.Minute
	}
	if c.Replicas == 0 {
		c.Replicas = 1
	}
	if c.BatchSize == 0 {
		// Large enough that a round's fixed cost (two round trips to
		// sequence, one wait for acknowledgements) is spread over many events
		// when appends saturate the machine: with small rounds the relay
		// falls behind the writers and its lag grows without bound
		// (docs/performance.md, "Append"). A round only grows
		// this large while there is a backlog, and stays below JetStream's
		// 4,000 asynchronous publishes in flight (one round is in flight).
		c.BatchSize = 2000
	}
	if c.PollInterval == 0 {
		c.PollInterval = 5 * time.Millisecond
	}
	if c.BusyRound == 0 {
		// Under load a round that did work was followed at once by the next,
		// a few events each: every round's fixed cost (two round trips to
		// sequence, a commit and its fsync, a publish batch) was paid again
		// for them. Waiting out 15 ms from a busy round's start gathers more
		// events per round, so the fixed cost is paid once for many: more
		// appends for a somewhat longer relay lag (docs/performance.md,
		// "Append").
		c.BusyRound = 15 * time.Millisecond
	}
	if c.MaxIdleWait < c.PollInterval {
		// An idle relay polling every PollInterval runs a sequencing
		// transaction each time: a steady share of a CPU for ledgerd and for
		// Postgres with nothing to do. Backing off to 50 ms costs nothing
		// for this process's own appends (Wake starts a round at once);
		// another process's wait at most that long to be sequenced when
		// nothing else is going on.
		c.MaxIdleWait = max(50*time.Millisecond, c.PollInterval)
	}
	if c.LeaderRetry == 0 {
		c.LeaderRetry = time.Second
	}
	if c.StreamCheck == 0 {
		// A relay re-reads the stream's end only before publishing, so a
		// stream that lost acknowledged messages (JetStream's tail after a
		// crash, an operator who deleted the stream) would otherwise wait
		// for the next append to be made whole again. One stream info
		// request every 30 s while idle bounds that wait.
		c.StreamCheck = 30 * time.Second
	}
	if c.UnpublishableStandby == 0 {
		// An event this binary cannot publish (a type or schema version of a
		// newer version, during a rolling upgrade) stops the relay wherever
		// it leads, since events are published in order: it lets go, and
		// waits long enough for a newer process, trying every LeaderRetry,
		// to take the lead first. Were every process older (a rollback),
		// each would still sequence a round this often.
		c.UnpublishableStandby = 10 * time.Second
	}
	return c
}

// Subject is the NATS subject of a record:
// <prefix>.<tenantId>.<aggregate>.<aggregateId>.<eventName>.
func (c RelayConfig) Subject(r domain.Record) string {
	name := r.Type[strings.IndexByte(r.Type, '.')+1:]
	return c.withDefaults().SubjectPrefix + "." + r.TenantID.String() + "." + r.StreamType + "." + r.StreamID.String() + "." + name
}

// relayLockKey is the advisory lock held by the one process that sequences and relays.
const relayLockKey = 0x6c65646765720002

// leaderConnConfig is the configuration of the connection that holds the
// relay lock. The lock lasts as long as Postgres's session: when the
// leader's process dies its socket closes and another process leads at
// once, but when its host vanishes (a crash, a partition) nothing closes
// the socket, and with the kernel's default TCP keepalive (two hours idle)
// no event would be sequenced or published meanwhile. The server probes
// the leader's socket after 10 s idle, every 5 s, and ends the session
// after 3 unanswered probes. (Settings the server ignores on a Unix socket.)
func leaderConnConfig(pool *pgxpool.Pool) *pgx.ConnConfig {
	cfg := pool.Config().ConnConfig.Copy()
	cfg.RuntimeParams["tcp_keepalives_idle"] = "10"
	cfg.RuntimeParams["tcp_keepalives_interval"] = "5"
	cfg.RuntimeParams["tcp_keepalives_count"] = "3"
	return cfg
}

// Relay sequences committed events and publishes them to JetStream. Every
// ledgerd runs one; the one holding the advisory lock works, the others stand
// by and take over within LeaderRetry when its connection dies.
type Relay struct {
	pool *pgxpool.Pool
	js   jetstream.JetStream
	cfg  RelayConfig
	log  *slog.Logger

	afterPublish func() // test hook: runs after publishing, before marking
	idling       func() // test hook: runs when an idle wait that Wake can end begins
	standingBy   func() // test hook: runs when another process holds the relay lock
	wake         chan struct{}

	leader    prometheus.Gauge
	published prometheus.Counter
	lag       prometheus.Histogram
	pending   prometheus.Gauge
	rounds    roundMetrics
}

// NewRelay returns a relay; metrics are registered on reg when it is not nil.
func NewRelay(pool *pgxpool.Pool, js jetstream.JetStream, cfg RelayConfig, log *slog.Logger, reg prometheus.Registerer) *Relay {
	r := &Relay{pool: pool, js: js, cfg: cfg.withDefaults(), log: log, wake: make(chan struct{}, 1),
		leader: prometheus.NewGauge(prometheus.GaugeOpts{Name: "ledger_relay_leader",
			Help: "1 while this process is the sequencer and relay."}),
		published: prometheus.NewCounter(prometheus.CounterOpts{Name: "ledger_relay_published_total",
			Help: "Events published to JetStream by this process."}),
		lag: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "ledger_relay_lag_seconds",
			Help:    "Time from an event's append to its acknowledged publication on JetStream.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 16)}),
		pending: prometheus.NewGauge(prometheus.GaugeOpts{Name: "ledger_outbox_pending",
			Help: "Committed events not yet published to JetStream (outbox lag), as seen by the relay."}),
		rounds: newRoundMetrics(),
	}
	if reg != nil {
		reg.MustRegister(r.leader, r.published, r.lag, r.pending)
		r.rounds.register(reg)
	}
	return r
}

// Wake tells the relay that events were committed in this process: an
// idle relay starts its next round at once rather than at the end of its
// wait. It never blocks; wire it to Store.OnCommit and Idempotency.OnCommit.
func (r *Relay) Wake() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// EnsureStream creates or updates the JetStream stream. Its messages can
// be neither deleted nor purged (an existing stream gets the flags too, and
// the server never takes them back): the stream is the partners' copy of
// the ledger's history. Only deleting the whole stream remains, and the
// relay then publishes every event again (reconcile).
func (r *Relay) EnsureStream(ctx context.Context) (jetstream.Stream, error) {
	s, err := r.js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:        r.cfg.Stream,
		Description: "Ledger events (CloudEvents 1.0 JSON), published from the Postgres event store.",
		Subjects:    []string{r.cfg.SubjectPrefix + ".>"},
		Storage:     jetstream.FileStorage,
		Replicas:    r.cfg.Replicas,
		Duplicates:  r.cfg.Duplicates,
		Retention:   jetstream.LimitsPolicy,
		DenyDelete:  true,
		DenyPurge:   true,
	})
	if err != nil {
		return nil, fmt.Errorf("create stream %s: %w", r.cfg.Stream, err)
	}
	return s, nil
}

// Run works as the relay whenever this process holds the relay lock, until
// ctx ends. It only returns ctx's error.
func (r *Relay) Run(ctx context.Context) error {
	for {
		err := r.lead(ctx)
		r.leader.Set(0)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		wait := r.cfg.LeaderRetry
		var unpublishable unpublishableError
		switch {
		case errors.As(err, &unpublishable):
			wait = r.cfg.UnpublishableStandby
			r.log.Error("relay: stepping down: a stored event cannot be published by this version; standing by so that a newer process leads",
				"err", err, "for", wait)
		case err != nil:
			r.log.Warn("relay: stepping down", "err", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
}

// pgxError marks a database failure during publishing, which ends leadership
// (the connection may be gone), unlike a NATS failure, which is retried.
type pgxError struct{ err error }

func (e pgxError) Error() string { return e.err.Error() }
func (e pgxError) Unwrap() error { return e.err }

// unpublishableError is a stored event this process cannot encode for
// publication (domain.PublicData: an event type or schema version it does
// not know). Publishing stops there, in order; leadership ends, and this
// process stands by for UnpublishableStandby.
type unpublishableError struct{ err error }

func (e unpublishableError) Error() string { return e.err.Error() }
func (e unpublishableError) Unwrap() error { return e.err }

// message builds the published form of rec: its CloudEvent with the private
// fields left out of data. Its hash still refers to the stored event.
func (r *Relay) message(rec domain.Record) (*nats.Msg, error) {
	env := domain.Envelope(rec)
	data, err := domain.PublicData(rec)
	if err != nil {
		return nil, err
	}
	env.Data = data
	body, err := json.Marshal(env)
	if err != nil {
		return nil, fmt.Errorf("encode event %s: %w", rec.ID, err)
	}
	msg := nats.NewMsg(r.cfg.Subject(rec))
	msg.Data = body
	msg.Header.Set("Content-Type", "application/cloudevents+json")
	return msg, nil
}
