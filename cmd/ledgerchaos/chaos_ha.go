package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// failOver is the cluster scenario's disruption: one fault at a time, each
// repaired before the next, a quarter of -duration apart: the Postgres
// primary crashes (Patroni promotes the synchronous standby; the old
// primary rejoins as its standby), the NATS server leading the stream
// crashes and comes back, a ledgerd crashes and comes back, and every
// ledgerd is restarted in turn. For each it notes the write pause: the
// longest time in which no write was acknowledged.
func failOver(ctx context.Context, r *chaosRun) ([]window, error) {
	gap := max(r.cfg.duration/4, 3*time.Second)
	bg := context.WithoutCancel(ctx)
	var windows []window
	faults := []struct {
		name   string
		inject func() error
	}{
		{"PostgresPrimaryKilled", func() error {
			from := time.Now()
			// A 2xx answered while the primary is away is recorded on the
			// new one. But a claim commits without waiting for its WAL
			// flush, and a standby receives only flushed WAL: a delivery
			// claimed in the moments before the crash is unclaimed on the
			// promoted standby, so another ledgerd may send it again even
			// though its first sender got a 2xx, which came at most an
			// attempt's timeout (10 s) after the claim.
			windows = append(windows, window{from: from.Add(-lostClaims), to: from.Add(10*time.Second + lostClaims)})
			return killPostgresPrimary(bg, r)
		}},
		{"NATSStreamLeaderKilled", func() error { return killNATSStreamLeader(bg, r) }},
		{"LedgerdKilled", func() error {
			i := rand.IntN(len(r.cluster.nodes))
			r.cluster.kill(i)
			sleepCtx(bg, time.Second)
			return r.cluster.restart(bg, i)
		}},
		{"RollingRestart", func() error {
			for i, n := range r.cluster.nodes {
				if err := r.cluster.stopGracefully(i); err != nil {
					return fmt.Errorf("SIGTERM %s: %w", n.name, err)
				}
				if err := r.cluster.restart(bg, i); err != nil {
					return err
				}
				// HAProxy takes it back after two good health checks.
				sleepCtx(bg, time.Second)
			}
			return nil
		}},
	}
	for _, f := range faults {
		if !sleepCtx(ctx, gap) {
			return windows, nil
		}
		from := time.Now()
		if err := f.inject(); err != nil {
			return windows, fmt.Errorf("%s: %w", f.name, err)
		}
		repaired := time.Now()
		fmt.Fprintf(r.log, "ledgerchaos: cluster: %s from %s to %s\n", f.name, from.Format(time.TimeOnly+".000"), repaired.Format(time.TimeOnly+".000"))
		r.note("repairMs"+f.name, int(repaired.Sub(from).Milliseconds()))
		// Writes resume within seconds of the repair at the latest.
		sleepCtx(bg, 3*time.Second)
		r.note("writePauseMs"+f.name, int(r.client.writePause(from, time.Now()).Milliseconds()))
	}
	return windows, nil
}

// lostClaims is how long before a crash a delivery's claim may have
// committed and still be lost with it: the WAL writer flushes an
// asynchronous commit within a few of its 200 ms rounds, more on a busy
// machine.
const lostClaims = 5 * time.Second

// killPostgresPrimary crashes the primary, waits for Patroni to promote
// the standby, then starts the old primary again and waits until it is the
// new primary's synchronous standby.
func killPostgresPrimary(ctx context.Context, r *chaosRun) error {
	ha := r.cluster.ha
	old, err := ha.primary(ctx)
	if err != nil {
		return err
	}
	from := time.Now()
	if err := ha.pg[old].kill(); err != nil {
		return err
	}
	standby := ha.pg[1-old]
	if err := waitFor(ctx, 3*patroniTTL, "Patroni to promote the standby", func() bool { return standby.is(ctx, "primary") }); err != nil {
		return err
	}
	r.note("promotedMs", int(time.Since(from).Milliseconds()))
	if err := ha.pg[old].proc.start(); err != nil {
		return err
	}
	return waitFor(ctx, 5*time.Minute, "the old primary to rejoin as synchronous standby", func() bool { return ha.pg[old].is(ctx, "sync") })
}

// killNATSStreamLeader crashes the NATS server that leads the ledger's
// stream, so that its replicas elect another, and starts it again.
func killNATSStreamLeader(ctx context.Context, r *chaosRun) error {
	leader, err := streamLeader(ctx, r.cluster.natsURL, "LEDGER")
	if err != nil {
		return err
	}
	for _, s := range r.cluster.ha.nats {
		if s.node.Name != leader {
			continue
		}
		s.proc.signal(syscall.SIGKILL, 10*time.Second)
		sleepCtx(ctx, 5*time.Second)
		if err := s.proc.start(); err != nil {
			return err
		}
		// Catching up replays what the stream took meanwhile: on a machine
		// the load and other work keep busy that took over a minute once
		// (its time is noted as the repair, not judged).
		return waitFor(ctx, 3*time.Minute, s.node.Name+" to catch up", func() bool { return s.ready(ctx) })
	}
	return fmt.Errorf("the stream's leader %q is none of the cluster's servers", leader)
}

// streamLeader names the server leading stream.
func streamLeader(ctx context.Context, natsURL, stream string) (string, error) {
	nc, err := nats.Connect(natsURL, nats.Name("ledgerchaos"))
	if err != nil {
		return "", err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return "", err
	}
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return "", err
	}
	info, err := s.Info(ctx)
	if err != nil {
		return "", err
	}
	if info.Cluster == nil || info.Cluster.Leader == "" {
		return "", fmt.Errorf("stream %s has no leader", stream)
	}
	return info.Cluster.Leader, nil
}
