package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// profileIdle is how long the profile watches the idle server before the
// load, to tell the pollers' background work from the payments'.
const profileIdle = 5 * time.Second

// profileFlush is how long the profile waits after the last delivery is
// recorded before its final readings: Postgres backends report their
// transaction counts to pg_stat_database about once a second once idle.
const profileFlush = 2 * time.Second

// profileReading is every counter the profile reads, at one moment.
type profileReading struct {
	at         time.Time
	pg         pgSnapshot
	xactCommit int64  // pg_stat_database.xact_commit of the benchmark's database
	ledgerdCPU uint64 // ticks
	events     int64  // rows in events: the outbox
	streamLast uint64 // the JetStream stream's last sequence: messages published
	readErr    error
}

// profiler reads the counters of a lifecycle run through a pgCounter.
type profiler struct {
	counter *pgCounter
	pool    *pgxpool.Pool // the benchmark database, directly
	js      jetstream.JetStream
	stream  string
	pid     int // ledgerd's
}

func newProfiler(counter *pgCounter, pool *pgxpool.Pool, nc *nats.Conn, stream string, pid int) (*profiler, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	return &profiler{counter: counter, pool: pool, js: js, stream: stream, pid: pid}, nil
}

func (p *profiler) read(ctx context.Context) profileReading {
	r := profileReading{at: time.Now(), pg: p.counter.snapshot(), ledgerdCPU: readProcCPU(p.pid).ticks}
	// pg_stat_clear_snapshot: a fresh look at the counters, not the ones
	// this session cached earlier.
	if _, err := p.pool.Exec(ctx, `SELECT pg_stat_clear_snapshot()`); err != nil {
		r.readErr = err
		return r
	}
	if err := p.pool.QueryRow(ctx, `SELECT xact_commit, (SELECT count(*) FROM events)
		FROM pg_stat_database WHERE datname = current_database()`).Scan(&r.xactCommit, &r.events); err != nil {
		r.readErr = err
		return r
	}
	s, err := p.js.Stream(ctx, p.stream)
	if err == nil {
		var info *jetstream.StreamInfo
		if info, err = s.Info(ctx); err == nil {
			r.streamLast = info.State.LastSeq
		}
	}
	r.readErr = err
	return r
}

// idle watches the idle server for profileIdle and returns the readings
// at its start and end.
func (p *profiler) idle(ctx context.Context) (profileReading, profileReading) {
	start := p.read(ctx)
	select {
	case <-ctx.Done():
	case <-time.After(profileIdle):
	}
	return start, p.read(ctx)
}

// settle waits until every webhook delivery is recorded (none left in
// webhook_deliveries), then for profileFlush, and returns the final reading.
func (p *profiler) settle(ctx context.Context, limit time.Duration) profileReading {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		var pending bool
		if err := p.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM webhook_deliveries)`).Scan(&pending); err != nil || !pending {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond):
		}
	}
	select {
	case <-ctx.Done():
	case <-time.After(profileFlush):
	}
	return p.read(ctx)
}

// profileCounts is what a settled payment costs, averaged over the
// completed payments of the timed phase (load, drain and settling), net of
// what the idle server did over as long (IdlePerSecond).
type profileCounts struct {
	Payments      int                `json:"payments"`
	WindowSeconds float64            `json:"windowSeconds"`
	PerPayment    profileFigures     `json:"perPayment"`
	IdlePerSecond profileFigures     `json:"idlePerSecond"`
	Statements    []profileStatement `json:"statements"` // per payment, net of idle, most first
	Opaque        int                `json:"opaqueConnections,omitempty"`
	Error         string             `json:"error,omitempty"`
}

type profileFigures struct {
	Transactions  float64 `json:"transactions"` // ended on the wire (ReadyForQuery idle)
	XactCommit    float64 `json:"xactCommit"`   // pg_stat_database
	Statements    float64 `json:"statements"`
	RoundTrips    float64 `json:"roundTrips"`
	LedgerdCPUMs  float64 `json:"ledgerdCpuMs"`
	PostgresCPUMs float64 `json:"postgresCpuMs"` // ledgerd's backends
	Events        float64 `json:"events"`
	Publishes     float64 `json:"publishes"`
}

type profileStatement struct {
	SQL        string  `json:"sql"`
	PerPayment float64 `json:"perPayment"`
}

// deltas returns the figures from a to b, divided by div.
func deltas(a, b profileReading, div float64) profileFigures {
	return profileFigures{
		Transactions:  float64(b.pg.Transactions-a.pg.Transactions) / div,
		XactCommit:    float64(b.xactCommit-a.xactCommit) / div,
		Statements:    float64(b.pg.Statements-a.pg.Statements) / div,
		RoundTrips:    float64(b.pg.RoundTrips-a.pg.RoundTrips) / div,
		LedgerdCPUMs:  float64(b.ledgerdCPU-a.ledgerdCPU) * 1000 / clockTicks / div,
		PostgresCPUMs: float64(b.pg.CPUTicks-a.pg.CPUTicks) * 1000 / clockTicks / div,
		Events:        float64(b.events-a.events) / div,
		Publishes:     float64(b.streamLast-a.streamLast) / div,
	}
}

// profile computes the per-payment counts from the idle window (i0, i1)
// and the timed phase (t0, t1) in which completed payments settled.
func profile(i0, i1, t0, t1 profileReading, completed int) profileCounts {
	pc := profileCounts{Payments: completed, WindowSeconds: t1.at.Sub(t0.at).Seconds(), Opaque: t1.pg.Opaque}
	for _, r := range []profileReading{i0, i1, t0, t1} {
		if r.readErr != nil {
			pc.Error = r.readErr.Error()
		}
	}
	if completed == 0 {
		return pc
	}
	idleSeconds := i1.at.Sub(i0.at).Seconds()
	pc.IdlePerSecond = deltas(i0, i1, idleSeconds)
	whole := deltas(t0, t1, 1)
	idle := pc.IdlePerSecond
	n, w := float64(completed), pc.WindowSeconds
	net := func(total, perSecond float64) float64 { return (total - perSecond*w) / n }
	pc.PerPayment = profileFigures{
		Transactions: net(whole.Transactions, idle.Transactions), XactCommit: net(whole.XactCommit, idle.XactCommit),
		Statements: net(whole.Statements, idle.Statements), RoundTrips: net(whole.RoundTrips, idle.RoundTrips),
		LedgerdCPUMs: net(whole.LedgerdCPUMs, idle.LedgerdCPUMs), PostgresCPUMs: net(whole.PostgresCPUMs, idle.PostgresCPUMs),
		Events: net(whole.Events, idle.Events), Publishes: net(whole.Publishes, idle.Publishes),
	}
	for q, total := range t1.pg.BySQL {
		idleRate := float64(i1.pg.BySQL[q]-i0.pg.BySQL[q]) / idleSeconds
		if per := net(float64(total-t0.pg.BySQL[q]), idleRate); per >= 0.005 {
			pc.Statements = append(pc.Statements, profileStatement{SQL: q, PerPayment: per})
		}
	}
	slices.SortFunc(pc.Statements, func(a, b profileStatement) int {
		return cmp.Or(cmp.Compare(b.PerPayment, a.PerPayment), cmp.Compare(a.SQL, b.SQL))
	})
	return pc
}

// printProfile writes the per-payment counts and the statements behind them.
func printProfile(w io.Writer, pc profileCounts) {
	fmt.Fprintf(w, "\nper settled payment (%d payments, %.1f s, net of the idle server's background):\n", pc.Payments, pc.WindowSeconds)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	p, i := pc.PerPayment, pc.IdlePerSecond
	fmt.Fprintln(tw, "\ttransactions\txact_commit\tstatements\tround trips\tledgerd CPU ms\tPostgres CPU ms\tevents\tpublishes")
	for _, row := range []struct {
		name string
		f    profileFigures
	}{{"per payment", p}, {"idle, per second", i}} {
		fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\n", row.name, row.f.Transactions, row.f.XactCommit,
			row.f.Statements, row.f.RoundTrips, row.f.LedgerdCPUMs, row.f.PostgresCPUMs, row.f.Events, row.f.Publishes)
	}
	tw.Flush()
	fmt.Fprintln(w, "\nstatements per payment:")
	for _, s := range pc.Statements {
		fmt.Fprintf(w, "%6.2f  %s\n", s.PerPayment, shortSQL(s.SQL))
	}
	if pc.Error != "" {
		fmt.Fprintf(w, "profile reading failed: %s\n", pc.Error)
	}
}

// shortSQL shortens a statement for the table, keeping its start and the
// end of its WHERE clause, where statements built on one head differ (the
// JSON report has them whole).
func shortSQL(q string) string {
	if len(q) <= 160 {
		return q
	}
	end := len(q)
	if i := strings.LastIndex(q, " RETURNING "); i > 0 {
		end = i
	}
	return q[:100] + " … " + q[max(100, end-50):end]
}
