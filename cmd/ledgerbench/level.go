package main

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/jackc/pgx/v5/pgxpool"
)

// level measures one concurrency level: appends (with the relay behind),
// then raw INSERTs, each on c workers for the configured duration.
func (b *appendBench) level(ctx context.Context, c int) (level, error) {
	a, err := newAppender(ctx, b.store, b.meta, c, &b.appended)
	if err != nil {
		return level{}, err
	}
	var before relayMetrics
	if b.relay != nil { // the setup's events, and any backlog, must not count as this level's lag
		_, ok, err := b.relay.waitFor(ctx, b.appended.Load(), b.cfg.relayWait)
		if err != nil {
			return level{}, err
		}
		if !ok {
			fmt.Fprintf(b.stderr, "ledgerbench: relay still behind after %v; concurrency %d starts anyway\n", b.cfg.relayWait, c)
		}
		b.relay.take()
		a.committed = b.relay.committed
		if before, err = b.relay.metrics(); err != nil {
			return level{}, err
		}
	}
	b.checkpoint(ctx)
	ap, err := runClosedLoop(ctx, c, b.cfg.duration, a.op)
	if err != nil {
		return level{}, fmt.Errorf("append phase: %w", err)
	}
	l := level{Concurrency: c, Append: newThroughput(ap)}
	if b.relay != nil {
		if l.Relay, err = b.levelRelay(ctx, before); err != nil {
			return level{}, err
		}
	}
	b.checkpoint(ctx)
	raw, err := runClosedLoop(ctx, c, b.cfg.duration, rawInsert(b.pool, b.payload))
	if err != nil {
		return level{}, fmt.Errorf("raw insert phase: %w", err)
	}
	l.Raw = newThroughput(raw)
	if l.Raw.PerSecond > 0 {
		l.AppendRawRatio = l.Append.PerSecond / l.Raw.PerSecond
	}
	return l, nil
}

// levelRelay waits for the relay to publish the level's events and
// summarises their lag. The raw phase starts only after that, so the
// baseline never shares the machine with a relay still catching up.
func (b *appendBench) levelRelay(ctx context.Context, before relayMetrics) (*levelRelay, error) {
	drain, ok, err := b.relay.waitFor(ctx, b.appended.Load(), b.cfg.relayWait)
	if err != nil {
		return nil, err
	}
	after, err := b.relay.metrics()
	if err != nil {
		return nil, err
	}
	lags, fromCommit := b.relay.take()
	b.lags = append(b.lags, lags)
	s, c, d := summarise(lags), summarise(fromCommit), after.since(before)
	return &levelRelay{Received: s.N, Published: d.Published,
		LagP50Ms: ms(s.P50), LagP99Ms: ms(s.P99), LagMaxMs: ms(s.Max),
		FromCommitP50Ms: ms(c.P50), FromCommitP99Ms: ms(c.P99),
		AckLagP50Ms: msOrNil(d.Histograms["ledger_relay_lag_seconds"].quantile(0.50)),
		AckLagP99Ms: msOrNil(d.Histograms["ledger_relay_lag_seconds"].quantile(0.99)),
		DrainMs:     ms(drain), CaughtUp: ok, Rounds: newRelayRounds(d.Histograms)}, nil
}

// newRelayRounds summarises a level's relay round histograms.
func newRelayRounds(h map[string]histogram) relayRounds {
	events := h["ledger_relay_round_events"]
	r := relayRounds{Busy: events.Count}
	if events.Count > 0 {
		r.EventsPerRound = events.Sum / float64(events.Count)
	}
	for name, into := range map[string]*[2]*float64{
		"ledger_relay_round_interval_seconds": &r.IntervalMs,
		"ledger_relay_sequence_seconds":       &r.SequenceMs,
		"ledger_relay_publish_seconds":        &r.PublishMs,
	} {
		into[0], into[1] = msOrNil(h[name].quantile(0.50)), msOrNil(h[name].quantile(0.99))
	}
	return r
}

// finalRelay checks, against the events table itself, that the relay
// published every event of the run.
func (b *appendBench) finalRelay(ctx context.Context) (*relayRun, error) {
	var stored int64
	if err := b.pool.QueryRow(ctx, `SELECT count(*) FROM events`).Scan(&stored); err != nil {
		return nil, fmt.Errorf("count events: %w", err)
	}
	_, ok, err := b.relay.waitFor(ctx, stored, b.cfg.relayWait)
	if err != nil {
		return nil, err
	}
	m, err := b.relay.metrics()
	if err != nil {
		return nil, err
	}
	all := summarise(slices.Concat(b.lags...))
	return &relayRun{Appended: stored, Published: m.Published, Received: b.relay.received.Load(), BadMessages: b.relay.badMessages(),
		KeptUp:   ok && stored == b.appended.Load() && int64(m.Published) == stored,
		LagP50Ms: ms(all.P50), LagP99Ms: ms(all.P99)}, nil
}

// checkpoint flushes dirty pages before a timed phase, so neither phase
// pays for the WAL and full-page writes the previous one left behind. It
// needs superuser or pg_checkpoint; without it the run goes on, noisier.
func (b *appendBench) checkpoint(ctx context.Context) { checkpoint(ctx, b.pool, b.stderr) }

// checkpoint runs CHECKPOINT on pool's server, warning on stderr when it
// cannot (see appendBench.checkpoint).
func checkpoint(ctx context.Context, pool *pgxpool.Pool, stderr io.Writer) {
	if _, err := pool.Exec(ctx, "CHECKPOINT"); err != nil {
		fmt.Fprintf(stderr, "ledgerbench: checkpoint before phase: %v (continuing)\n", err)
	}
}
