package eventstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ledger/ledger/eventstore/pguuid"
)

// natsBackoffStart is the first wait before publishing again after a NATS
// failure; it doubles on each failure up to natsBackoffMax.
const (
	natsBackoffStart = 100 * time.Millisecond
	natsBackoffMax   = 5 * time.Second
)

// leadership is one term as the relay: what this process knows of the stream
// and of published_position, and its round timers. Each term starts knowing
// nothing, since another process may have led in between. It embeds the
// Relay for its configuration, JetStream context, log and metrics.
type leadership struct {
	*Relay
	conn *pgx.Conn // holds the relay lock; sequences, reads and marks

	seq         *sequencer // the sequencer, with its chain-head cache
	pubPos      int64      // the position JetStream has acknowledged up to (>= markedPos); -1: not known yet
	markedPos   int64      // published_position as stored; pubPos > markedPos is a mark still to write
	lastID      string     // id of the event at lastPos, the next message's expected last id
	lastPos     int64      // the position lastID belongs to; -1: not known yet
	lastSeq     uint64     // the stream's last sequence, which the next message must follow (0: empty stream)
	streamReady bool       // the stream exists with our configuration
	inflight    *inflight  // messages sent whose acknowledgements are still to collect

	natsRetry   time.Time     // no publishing before this, after a NATS failure
	natsBackoff time.Duration // the wait after the next NATS failure
	nextGauge   time.Time     // when the outbox gauge is next updated
	nextCheck   time.Time     // when an idle relay next checks the stream's end
	lastBusy    time.Time     // start of the previous round, if it sequenced events
	idleWait    time.Duration // the next idle wait
}

func newLeadership(r *Relay, conn *pgx.Conn) *leadership {
	return &leadership{
		Relay: r, conn: conn,
		seq: newSequencer(), pubPos: -1, markedPos: -1, lastPos: -1,
		natsBackoff: natsBackoffStart,
		nextCheck:   time.Now().Add(r.cfg.StreamCheck),
		idleWait:    r.cfg.MaxIdleWait, // nothing done yet: as backed off as an idle relay gets
	}
}

// lead takes the relay lock on a dedicated connection and, if it gets it,
// sequences and publishes until ctx ends or the connection fails. The lock
// dies with the connection, so a crashed leader is replaced at once.
func (r *Relay) lead(ctx context.Context) error {
	conn, err := r.takeLead(ctx)
	if conn == nil {
		if err == nil && r.standingBy != nil {
			r.standingBy()
		}
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	r.leader.Set(1)
	r.log.Info("relay: this process is now the sequencer and relay")
	l := newLeadership(r, conn)
	for ctx.Err() == nil {
		if err := l.round(ctx); err != nil {
			return err
		}
	}
	return nil
}

// takeLead connects and tries the relay lock. It returns the connection
// holding the lock, or nil (and closes it) when another process holds it or
// something failed.
func (r *Relay) takeLead(ctx context.Context) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, leaderConnConfig(r.pool))
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	pguuid.Register(conn.TypeMap())
	var got bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, int64(relayLockKey)).Scan(&got); err != nil || !got {
		conn.Close(context.WithoutCancel(ctx))
		if err != nil {
			return nil, fmt.Errorf("relay lock: %w", err)
		}
		return nil, nil
	}
	return conn, nil
}

// round sequences, then waits for the acknowledgements of what the previous
// round published (they arrive while it sequences), then publishes what is
// next without waiting, and waits for the next round. At most one round's
// messages are in flight, and they are always awaited, and marked, before
// anything after them is sent. An error ends leadership.
func (l *leadership) round(ctx context.Context) error {
	start := time.Now()
	rd, err := l.sequence(ctx, start)
	if err != nil {
		return err
	}
	acked, sent, pubErr := l.publish(ctx, rd)
	if err := l.backOff(pubErr, acked); err != nil {
		return err
	}
	if err := l.watch(ctx, rd, pubErr == nil); err != nil {
		return err
	}
	idle := len(rd.recs) == 0 && acked == 0 && sent == 0 && l.inflight == nil && l.pubPos == l.markedPos
	l.wait(ctx, start, idle)
	return nil
}

// sequence runs the round's sequencing transaction, which also marks what
// JetStream acknowledged: under the row lock, and only if
// published_position is still what this relay stored. If it moved under
// the relay (an operator reset, a restore), or on the term's first round,
// the relay starts over from there instead.
func (l *leadership) sequence(ctx context.Context, start time.Time) (round, error) {
	var m *mark
	expected := l.markedPos
	if l.pubPos > l.markedPos && l.markedPos >= 0 {
		m = &mark{from: l.markedPos, to: l.pubPos}
		expected = l.pubPos
	}
	rd, err := l.seq.sequence(ctx, l.conn, l.cfg.BatchSize, m)
	if err != nil {
		return round{}, fmt.Errorf("sequence: %w", err)
	}
	l.lastBusy = l.rounds.sequenced(start, l.lastBusy, len(rd.recs))
	if rd.published != expected { // first round, or moved under the relay
		if l.inflight != nil {
			l.inflight.stale = true // its acknowledgements no longer say where to go on from
		}
		l.pubPos, l.lastPos = rd.published, -1 // the stream says where to go on from (send)
		l.streamReady = false
	}
	l.markedPos = rd.published
	return rd, nil
}

// publish collects the acknowledgements of the previous round's messages,
// then sends what rd leaves unpublished, unless NATS failed within the
// back-off. It returns how many messages were acknowledged and sent.
func (l *leadership) publish(ctx context.Context, rd round) (acked, sent int, err error) {
	if l.inflight != nil {
		acked, err = l.finish(ctx)
	}
	if err == nil && l.pubPos < rd.last() && time.Now().After(l.natsRetry) {
		sendStart := time.Now()
		sent, err = l.send(ctx, rd)
		if sent > 0 {
			l.rounds.publish.Observe(time.Since(sendStart).Seconds())
		}
	}
	return acked, sent, err
}

// backOff returns a publishing error that ends leadership (a database
// failure, an event this version cannot publish); a NATS failure instead
// holds publishing back, longer on each failure until an acknowledgement.
func (l *leadership) backOff(err error, acked int) error {
	var pgErr pgxError
	var unpublishable unpublishableError
	switch {
	case err == nil:
		if acked > 0 {
			l.natsBackoff = natsBackoffStart
		}
	case errors.As(err, &pgErr), errors.As(err, &unpublishable):
		return err
	default:
		l.log.Warn("relay: publish failed; retrying", "err", err, "in", l.natsBackoff)
		l.streamReady = false
		l.natsRetry = time.Now().Add(l.natsBackoff)
		l.natsBackoff = min(l.natsBackoff*2, natsBackoffMax)
	}
	return nil
}

// watch updates the outbox gauge every second and, every StreamCheck while
// everything is published, checks that the stream still ends where this
// relay left it. Only a database failure is returned.
func (l *leadership) watch(ctx context.Context, rd round, published bool) error {
	if time.Now().After(l.nextGauge) {
		l.updatePending(ctx)
		l.nextGauge = time.Now().Add(time.Second)
	}
	if !published || l.inflight != nil || l.pubPos < rd.last() || !time.Now().After(l.nextCheck) {
		return nil
	}
	l.nextCheck = time.Now().Add(l.cfg.StreamCheck)
	if err := l.checkStream(ctx); err != nil {
		var pgErr pgxError
		if errors.As(err, &pgErr) {
			return err
		}
		l.log.Warn("relay: check the stream", "err", err)
		l.streamReady = false
	}
	return nil
}

// wait ends the round. An idle round waits, longer while rounds stay idle
// (MaxIdleWait), or until Wake; one that did work, or left acknowledgements
// to collect or a mark to write, goes on BusyRound after it began, so
// marking stays prompt when appends stop.
func (l *leadership) wait(ctx context.Context, start time.Time, idle bool) {
	if !idle {
		l.idleWait = l.cfg.PollInterval
		select {
		case <-ctx.Done():
		case <-time.After(time.Until(start.Add(l.cfg.BusyRound))):
		}
		return
	}
	// Only a relay that has backed off is woken: the first wait after
	// work gathers the commits of those few milliseconds into one
	// round, where waking on each would run a round, and pay its fixed
	// cost, per append (docs/performance.md, "Append").
	wake := l.wake
	if l.idleWait <= l.cfg.PollInterval {
		wake = nil
	} else if l.idling != nil {
		l.idling()
	}
	select {
	case <-ctx.Done():
	case <-wake:
		l.idleWait = l.cfg.PollInterval
	case <-time.After(l.idleWait):
		l.idleWait = min(2*l.idleWait, l.cfg.MaxIdleWait)
	}
}

// updatePending sets the outbox gauge: events committed and not yet
// published, sequenced or not.
func (l *leadership) updatePending(ctx context.Context) {
	var n int64
	err := l.conn.QueryRow(ctx, `SELECT (SELECT last_position - published_position FROM sequencer_state)
		+ (SELECT count(*) FROM events WHERE position IS NULL)`).Scan(&n)
	if err == nil {
		l.pending.Set(float64(n))
	}
}
