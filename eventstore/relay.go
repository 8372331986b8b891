package eventstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore/eventrow"
	"github.com/ledger/ledger/eventstore/pguuid"
)

// The events table is the transactional outbox: an event row is written in
// the same transaction as the state change, and the relay publishes every
// sequenced row after sequencer_state.published_position, in position order,
// then moves published_position on. Because positions are gap-free and only
// assigned by the sequencer (sequencer.go), "after published_position" is a
// safe cursor, unlike a bigserial one.
//
// A round is cheap (lead): the sequencing transaction is two pipelined round
// trips and also writes the published_position JetStream acknowledged in the
// previous rounds; the events it just sequenced are published straight from
// memory when everything before them is published (from the table
// otherwise: catching up after a restart, a NATS outage or a reconcile), and
// their acknowledgements are collected after the next round's sequencing.
// published_position therefore trails JetStream by up to two rounds, which
// the chaining below makes safe: a restart re-sends at most those, and
// JetStream drops or rejects them.
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
		// when appends saturate the machine: at 500 the relay fell behind 64
		// writers on 2 CPUs and its lag grew to seconds. A round only grows
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
		// events per round: ledgerbench append at concurrency 64 appended
		// 3-9% more in three interleaved pairs, for a relay lag p99 of 50-62
		// ms instead of 40-54.
		c.BusyRound = 15 * time.Millisecond
	}
	if c.MaxIdleWait < c.PollInterval {
		// An idle relay polled 200 times a second, a sequencing transaction
		// each: 7% of a CPU for ledgerd and 4% for Postgres with nothing to
		// do. Backing off to 50 ms costs nothing for this process's own
		// appends (Wake starts a round at once); another process's wait at
		// most that long to be sequenced when nothing else is going on.
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

	seq          *sequencer // while leading: the sequencer, with its chain-head cache
	pubPos       int64      // the position JetStream has acknowledged up to (>= markedPos); -1: not known yet
	markedPos    int64      // published_position as stored; pubPos > markedPos is a mark still to write
	lastID       string     // id of the event at lastPos, the next message's expected last id
	lastPos      int64      // the position lastID belongs to; -1: not known yet
	lastSeq      uint64     // the stream's last sequence, which the next message must follow (0: empty stream)
	streamReady  bool       // the stream exists with our configuration
	inflight     *inflight  // messages sent whose acknowledgements are still to collect
	afterPublish func()     // test hook: runs after publishing, before marking
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

// lead takes the relay lock on a dedicated connection and, if it gets it,
// sequences and publishes until ctx ends or the connection fails. The lock
// dies with the connection, so a crashed leader is replaced at once.
func (r *Relay) lead(ctx context.Context) error {
	conn, err := pgx.ConnectConfig(ctx, leaderConnConfig(r.pool))
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	pguuid.Register(conn.TypeMap())
	defer conn.Close(context.WithoutCancel(ctx))
	var got bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, int64(relayLockKey)).Scan(&got); err != nil {
		return fmt.Errorf("relay lock: %w", err)
	}
	if !got {
		return nil
	}
	r.leader.Set(1)
	r.log.Info("relay: this process is now the sequencer and relay")
	r.lastID, r.lastPos, r.lastSeq, r.streamReady = "", -1, 0, false
	r.seq, r.pubPos, r.markedPos = newSequencer(), -1, -1
	var natsRetry time.Time // no publishing before this, after a NATS failure
	natsBackoff := 100 * time.Millisecond
	var nextGauge time.Time
	nextCheck := time.Now().Add(r.cfg.StreamCheck)
	var lastBusy time.Time        // start of the previous round, if it sequenced events
	idleWait := r.cfg.MaxIdleWait // nothing done yet: as backed off as an idle relay gets
	r.inflight = nil
	for ctx.Err() == nil {
		start := time.Now()
		// A round sequences, then waits for the acknowledgements of what the
		// previous round published (they arrive while it sequences), then
		// publishes what is next without waiting. At most one round's
		// messages are in flight, and they are always awaited, and marked,
		// before anything after them is sent.
		//
		// What JetStream acknowledged is marked in the next sequencing
		// transaction, under the row lock, only if published_position is still
		// what this relay stored: if it moved under the relay (an operator
		// reset, a restore), the relay starts over from there instead.
		var m *mark
		expected := r.markedPos
		if r.pubPos > r.markedPos && r.markedPos >= 0 {
			m = &mark{from: r.markedPos, to: r.pubPos}
			expected = r.pubPos
		}
		rd, err := r.seq.sequence(ctx, conn, r.cfg.BatchSize, m)
		if err != nil {
			return fmt.Errorf("sequence: %w", err)
		}
		lastBusy = r.rounds.sequenced(start, lastBusy, len(rd.recs))
		if rd.published != expected { // first round, or moved under the relay
			if r.inflight != nil {
				r.inflight.stale = true // its acknowledgements no longer say where to go on from
			}
			r.pubPos, r.lastPos = rd.published, -1 // the stream says where to go on from (send)
			r.streamReady = false
		}
		r.markedPos = rd.published
		var acked, sent int
		if r.inflight != nil {
			acked, err = r.finish(ctx, conn)
		}
		if err == nil && r.pubPos < rd.last() && time.Now().After(natsRetry) {
			sendStart := time.Now()
			sent, err = r.send(ctx, conn, rd)
			if sent > 0 {
				r.rounds.publish.Observe(time.Since(sendStart).Seconds())
			}
		}
		var pgErr pgxError
		var unpublishable unpublishableError
		switch {
		case err == nil:
			if acked > 0 {
				natsBackoff = 100 * time.Millisecond
			}
		case errors.As(err, &pgErr), errors.As(err, &unpublishable):
			return err
		default:
			r.log.Warn("relay: publish failed; retrying", "err", err, "in", natsBackoff)
			r.streamReady = false
			natsRetry = time.Now().Add(natsBackoff)
			natsBackoff = min(natsBackoff*2, 5*time.Second)
		}
		if time.Now().After(nextGauge) {
			r.updatePending(ctx, conn)
			nextGauge = time.Now().Add(time.Second)
		}
		if err == nil && r.inflight == nil && r.pubPos >= rd.last() && time.Now().After(nextCheck) {
			nextCheck = time.Now().Add(r.cfg.StreamCheck)
			if err := r.checkStream(ctx, conn); err != nil {
				if errors.As(err, &pgErr) {
					return err
				}
				r.log.Warn("relay: check the stream", "err", err)
				r.streamReady = false
			}
		}
		// An idle round waits, longer while rounds stay idle (MaxIdleWait),
		// or until Wake; one that did work, or left acknowledgements to
		// collect or a mark to write, goes on BusyRound after it began, so
		// marking stays prompt when appends stop.
		if len(rd.recs) == 0 && acked == 0 && sent == 0 && r.inflight == nil && r.pubPos == r.markedPos {
			// Only a relay that has backed off is woken: the first wait after
			// work gathers the commits of those few milliseconds into one
			// round, where waking on each would run a round per append (8%
			// fewer payments per second at one client, measured).
			wake := r.wake
			if idleWait <= r.cfg.PollInterval {
				wake = nil
			}
			select {
			case <-ctx.Done():
			case <-wake:
				idleWait = r.cfg.PollInterval
			case <-time.After(idleWait):
				idleWait = min(2*idleWait, r.cfg.MaxIdleWait)
			}
		} else {
			idleWait = r.cfg.PollInterval
			select {
			case <-ctx.Done():
			case <-time.After(time.Until(start.Add(r.cfg.BusyRound))):
			}
		}
	}
	return nil
}

// checkStream reconciles with the stream when it no longer ends where this
// relay left it: fewer messages (JetStream lost acknowledged ones), more
// (something else published), or none at all (deleted): published_position
// then goes back to the stream's last event, and the next round publishes
// again whatever the stream lacks.
func (r *Relay) checkStream(ctx context.Context, conn *pgx.Conn) error {
	if !r.streamReady || r.lastPos != r.pubPos {
		return nil // the next publish reconciles anyway
	}
	stream, err := r.js.Stream(ctx, r.cfg.Stream) // one STREAM.INFO request, kept as its CachedInfo
	var lastSeq uint64
	if err == nil {
		lastSeq = stream.CachedInfo().State.LastSeq
	}
	switch {
	case errors.Is(err, jetstream.ErrStreamNotFound):
	case err != nil:
		return fmt.Errorf("stream info: %w", err)
	case lastSeq == r.lastSeq:
		return nil
	}
	r.log.Warn("relay: the stream no longer ends where it was left; reconciling", "stream", r.cfg.Stream,
		"lastSeq", lastSeq, "expected", r.lastSeq, "err", err)
	return r.reconcile(ctx, conn)
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

func (r *Relay) updatePending(ctx context.Context, conn *pgx.Conn) {
	var n int64
	err := conn.QueryRow(ctx, `SELECT (SELECT last_position - published_position FROM sequencer_state)
		+ (SELECT count(*) FROM events WHERE position IS NULL)`).Scan(&n)
	if err == nil {
		r.pending.Set(float64(n))
	}
}

// inflight is a round's messages sent to JetStream whose acknowledgements
// the relay has not collected yet.
type inflight struct {
	recs    []domain.Record // in position order; futures[i] is recs[i]'s
	futures []jetstream.PubAckFuture
	sendErr error // why sending stopped before the end of recs
	stale   bool  // published_position moved under the relay since: only wait for it
}

// send publishes the next batch of sequenced events after pubPos, without
// waiting for JetStream's acknowledgements: finish, in the next round,
// collects them. When everything before the round rd was published, those
// are the records rd just sequenced, sent straight from memory; otherwise
// (catching up after a restart, a NATS outage or a reconcile) they are read
// from the events table. It returns how many messages it sent.
func (r *Relay) send(ctx context.Context, conn *pgx.Conn, rd round) (int, error) {
	if !r.streamReady || r.lastPos != r.pubPos {
		// The first publish of a leadership, or after a failed publish, or
		// after published_position moved under the relay: the stream's
		// last message says where to go on from, not published_position,
		// which trails JetStream by up to two rounds (and JetStream may
		// have lost its tail, or the stream been made anew), and its last
		// message's id and sequence are what the next one follows. Sending from
		// published_position and counting on JetStream to refuse what does
		// not follow the stream's last message is not enough: a clustered
		// stream of nats-server 2.15 takes such a message, fails it on
		// every replica when they apply it, and then takes nothing more.
		if err := r.reconcile(ctx, conn); err != nil {
			return 0, err
		}
		r.streamReady = true
	}
	published := r.pubPos
	recs := rd.recs
	if published != rd.prevLast || len(recs) == 0 {
		rows, err := conn.Query(ctx, `SELECT `+recordColumns+` FROM events WHERE position > $1 ORDER BY position LIMIT $2`,
			published, r.cfg.BatchSize)
		if err != nil {
			return 0, pgxError{fmt.Errorf("read events to publish: %w", err)}
		}
		if recs, err = pgx.CollectRows(rows, eventrow.Scan); err != nil {
			return 0, pgxError{err}
		}
	}
	if len(recs) == 0 {
		return 0, nil
	}
	fl := &inflight{recs: recs, futures: make([]jetstream.PubAckFuture, 0, len(recs))}
	expected := r.lastID // "": nothing published yet, or the stream ends with a foreign message
	for i, rec := range recs {
		msg, err := r.message(rec)
		if err != nil {
			return 0, unpublishableError{err}
		}
		opts := []jetstream.PublishOpt{jetstream.WithMsgID(rec.ID.String()), jetstream.WithExpectStream(r.cfg.Stream),
			jetstream.WithExpectLastSequence(r.lastSeq + uint64(i))}
		if expected != "" {
			opts = append(opts, jetstream.WithExpectLastMsgID(expected))
		}
		f, err := r.js.PublishMsgAsync(msg, opts...)
		if err != nil {
			fl.sendErr = err
			break
		}
		fl.futures = append(fl.futures, f)
		expected = rec.ID.String()
	}
	r.inflight = fl
	return len(fl.futures), nil
}

// finish waits for the acknowledgements of the messages in flight and moves
// pubPos to the last of the leading messages JetStream stored; the next
// sequencing transaction marks it. It returns how many were acknowledged.
func (r *Relay) finish(ctx context.Context, conn *pgx.Conn) (int, error) {
	fl := r.inflight
	r.inflight = nil
	acked, ackedSeq, ackErr := r.awaitAcks(ctx, fl.futures, fl.recs)
	if r.afterPublish != nil {
		r.afterPublish()
	}
	if acked > 0 {
		r.published.Add(float64(acked))
	}
	if fl.stale { // published_position was moved under the relay: go on from there, not from these
		return acked, nil
	}
	if acked > 0 {
		last := fl.recs[acked-1]
		r.pubPos, r.lastID, r.lastPos, r.lastSeq = last.Position, last.ID.String(), last.Position, ackedSeq
	}
	if err := errors.Join(ackErr, fl.sendErr); err != nil {
		if isWrongLast(err) {
			if rerr := r.reconcile(ctx, conn); rerr != nil {
				return acked, rerr
			}
		}
		return acked, err
	}
	return acked, nil
}

// awaitAcks waits for the futures in order and returns how many leading
// messages JetStream stored (or already had) and the stream sequence of the
// last of them, with the first error.
func (r *Relay) awaitAcks(ctx context.Context, futures []jetstream.PubAckFuture, recs []domain.Record) (acked int, seq uint64, err error) {
	timeout := time.After(10 * time.Second)
	for i, f := range futures {
		select {
		case ack := <-f.Ok():
			if acked == i {
				acked++
				seq = ack.Sequence
				r.lag.Observe(time.Since(recs[i].RecordedAt).Seconds())
			}
		case err := <-f.Err():
			if acked == i {
				return acked, seq, fmt.Errorf("publish %s: %w", recs[i].ID, err)
			}
		case <-timeout:
			return acked, seq, errors.New("publish: timed out waiting for JetStream acknowledgements")
		case <-ctx.Done():
			return acked, seq, ctx.Err()
		}
	}
	return acked, seq, nil
}

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

// isWrongLast reports whether JetStream rejected a message because the
// stream's last message was not the one expected: by id or by sequence.
func isWrongLast(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) &&
		(apiErr.ErrorCode == 10070 || // JSStreamWrongLastMsgIDErrF
			apiErr.ErrorCode == 10071) // JSStreamWrongLastSequenceErrF
}

// reconcile resets published_position to the event that is really the
// stream's last message: forward after a crash between publish and marking,
// backward if JetStream lost acknowledged messages (Postgres is the source of
// truth, so they are published again). A new, empty stream gets everything.
func (r *Relay) reconcile(ctx context.Context, conn *pgx.Conn) error {
	stream, err := r.EnsureStream(ctx)
	if err != nil {
		return err
	}
	info, err := stream.Info(ctx)
	if err != nil {
		return fmt.Errorf("stream info: %w", err)
	}
	var position int64
	lastID := ""
	if info.State.LastSeq > 0 {
		msg, err := stream.GetMsg(ctx, info.State.LastSeq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			// Purged or deleted by an operator: nothing to compare with.
			// Postgres's published_position stands, and the next message
			// expects the stream's last sequence, so none slips in between.
			r.log.Warn("relay: the stream's last message is gone; publishing on after published_position",
				"stream", r.cfg.Stream, "seq", info.State.LastSeq, "publishedPosition", r.pubPos)
			r.lastID, r.lastSeq, r.lastPos = "", info.State.LastSeq, r.pubPos
			return nil
		}
		if err != nil {
			return fmt.Errorf("read stream's last message: %w", err)
		}
		lastID = msg.Header.Get(jetstream.MsgIDHeader)
		id, perr := uuid.Parse(lastID)
		err = perr
		if perr == nil {
			err = conn.QueryRow(ctx, `SELECT position FROM events WHERE id = $1 AND position IS NOT NULL`, id).Scan(&position)
		}
		if perr != nil || errors.Is(err, pgx.ErrNoRows) {
			r.log.Error("relay: the stream's last message is not a ledger event; publishing on after it",
				"stream", r.cfg.Stream, "msgId", lastID, "seq", info.State.LastSeq)
			r.lastID, r.lastSeq, r.lastPos = "", info.State.LastSeq, r.pubPos // send expects that sequence
			return nil
		}
		if err != nil {
			return pgxError{fmt.Errorf("find stream's last event: %w", err)}
		}
	}
	if _, err := conn.Exec(ctx, `UPDATE sequencer_state SET published_position = $1 WHERE id = 1`, position); err != nil {
		return pgxError{fmt.Errorf("reset published position: %w", err)}
	}
	level := slog.LevelInfo // the usual takeover: published_position was where the stream ends
	if position != r.pubPos {
		level = slog.LevelWarn
	}
	r.log.Log(ctx, level, "relay: reconciled with the stream", "publishedPosition", position, "was", r.pubPos, "lastMsgId", lastID)
	r.lastID, r.lastPos, r.lastSeq = lastID, position, info.State.LastSeq
	r.pubPos, r.markedPos = position, position
	return nil
}
