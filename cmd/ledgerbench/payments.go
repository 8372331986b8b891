package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledger/ledger/cmd/internal/benchkit"
	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore"
	"github.com/ledger/ledger/projections"
)

// paymentsConfig is the payments mode's flags.
type paymentsConfig struct {
	server      ledgerdSpec // -database-url, -nats-url, -db-max-conns, -ledgerd, -ledgerctl, -ready-timeout, -keep
	concurrency []int
	duration    time.Duration
	partners    int
	keyed       bool // an Idempotency-Key on every POST
	compareKeys bool // a second payments phase per level with keyed flipped
	relayWait   time.Duration
	out         string
}

func parsePaymentsFlags(args []string, stderr io.Writer) (paymentsConfig, error) {
	var c paymentsConfig
	fs := flag.NewFlagSet("ledgerbench payments", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `usage: ledgerbench payments [flags]

Starts a real ledgerd on a database ledgerbench_<random> and a JetStream stream
LEDGERBENCH_<RANDOM> of its own, sets up -partners tenants (ledgerctl tenant
create, POST /token, POST /merchants with a South African bank merchant), then
per concurrency level runs POST /payments (Lightning-funded, to that merchant,
each with a fresh Idempotency-Key unless -idempotency-key=false) for
-duration, with -compare-keys the same load again with keys the other way,
and raw single-row INSERTs of a payment.created-sized row for -duration. It
reports requests/s, latency, ledgerd's RSS (VmRSS polled every 100 ms, VmHWM
at the end), CPU busy share, payments/raw and, with -compare-keys, keyed ÷
plain. Everything it created is removed at the end unless -keep.

flags:
`)
		fs.PrintDefaults()
	}
	ledgerdFlags(fs, &c.server)
	levels := fs.String("concurrency", "1,16,64", "comma-separated concurrency levels (workers sending requests back to back)")
	fs.DurationVar(&c.duration, "duration", 10*time.Second, "length of each timed phase (payments, then raw INSERTs) per level")
	fs.IntVar(&c.partners, "partners", 8, "simulated partners (tenants, each with a token and a merchant); worker w pays as partner w % partners")
	fs.BoolVar(&c.keyed, "idempotency-key", true, "send a fresh Idempotency-Key on every POST, as a careful partner does; false for the plain figure")
	fs.BoolVar(&c.compareKeys, "compare-keys", false,
		"per level, run the payments phase a second time with -idempotency-key the other way, back to back, and report keyed ÷ plain")
	fs.DurationVar(&c.relayWait, "relay-wait", 30*time.Second,
		"longest wait for ledgerd's relay to publish every event before a phase, so the baseline does not share the machine with it")
	fs.StringVar(&c.out, "out", "bench-payments.json", "JSON report path")
	err := fs.Parse(args)
	if err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if c.concurrency, err = parseLevels(*levels); err != nil {
		return c, err
	}
	if c.duration <= 0 {
		return c, errors.New("-duration must be positive")
	}
	if c.partners < 1 || c.server.DBMaxConns < 1 {
		return c, errors.New("-partners and -db-max-conns must be positive")
	}
	return c, nil
}

// paymentsBench holds what every level of the payments mode shares.
type paymentsBench struct {
	cfg     paymentsConfig
	pool    *pgxpool.Pool // the benchmark database, for the baseline and the relay check
	server  *benchkit.Ledgerd
	load    *paymentLoad
	payload string // raw INSERT row: one stored payment.created event as a CloudEvent
	stderr  io.Writer
}

// runPayments is the payments mode: it measures, prints the table and
// writes the JSON report.
func runPayments(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parsePaymentsFlags(args, stderr)
	if err != nil {
		return err
	}
	rep, err := measurePayments(ctx, cfg, stderr)
	if rep == nil {
		return err
	}
	printPaymentsTable(stdout, *rep)
	if werr := benchkit.WriteJSON(cfg.out, rep); werr != nil {
		return errors.Join(err, werr)
	}
	fmt.Fprintf(stdout, "\nreport written to %s\n", cfg.out)
	return err
}

// measurePayments runs ledgerd serving POST /payments at each concurrency
// level, against raw INSERTs on the same Postgres. The report is nil when
// the run stopped before it was complete; with a complete report, err is a
// failed cleanup.
func measurePayments(ctx context.Context, cfg paymentsConfig, stderr io.Writer) (_ *paymentsReport, err error) {
	lg, err := startBenchLedgerd(ctx, cfg.server, stderr)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, lg.close()) }()
	server, dbName, stream, prefix := lg.Server, lg.DBName, lg.Stream, lg.Prefix

	maxLevel := slices.Max(cfg.concurrency)
	maxConns := int32(maxLevel + 1) // a worker each, one for CHECKPOINT and the relay check; no spare: ledgerd shares max_connections
	pool, err := benchkit.OpenPool(ctx, cfg.server.DatabaseURL, dbName, maxConns)
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	warnConnections(ctx, pool, cfg.server.DBMaxConns, int(maxConns), stderr)
	if _, err := pool.Exec(ctx, createRawTable); err != nil {
		return nil, fmt.Errorf("create raw_inserts: %w", err)
	}
	mach, err := describeMachine(ctx, pool, lg.NC)
	if err != nil {
		return nil, err
	}

	client := benchkit.NewHTTPClient(maxLevel)
	defer client.CloseIdleConnections()
	partners, err := lg.setupPartners(ctx, client, cfg.partners)
	if err != nil {
		return nil, err
	}
	b := &paymentsBench{cfg: cfg, pool: pool, server: server, stderr: stderr,
		load: &paymentLoad{client: client, baseURL: server.BaseURL, partners: partners, keyed: cfg.keyed}}
	responseBytes, err := b.probe(ctx)
	if err != nil {
		return nil, err
	}

	rep := paymentsReport{Mode: "payments", StartedAt: time.Now().UTC(), Machine: mach, Params: paymentsParams{
		DatabaseServer: pool.Config().ConnConfig.Host + ":" + strconv.Itoa(int(pool.Config().ConnConfig.Port)),
		Database:       dbName, Kept: cfg.server.Keep, NATSURL: cfg.server.NATSURL, Stream: stream, SubjectPrefix: prefix,
		Concurrency: cfg.concurrency, DurationSeconds: cfg.duration.Seconds(), RelayWaitSecs: cfg.relayWait.Seconds(),
		Partners: cfg.partners, IdempotencyKey: cfg.keyed, CompareKeys: cfg.compareKeys, LedgerdDBMaxConns: cfg.server.DBMaxConns, PoolMaxConns: maxConns,
		RawPayloadBytes: len(b.payload), ResponseBytes: responseBytes,
	}}
	for _, c := range cfg.concurrency {
		fmt.Fprintf(stderr, "ledgerbench: concurrency %d\n", c)
		l, err := b.level(ctx, c)
		if err != nil {
			return nil, fmt.Errorf("concurrency %d: %w", c, err)
		}
		rep.Levels = append(rep.Levels, l)
	}
	rep.Server = serverMemory{PID: server.PID()}
	if m, err := readProcMemory(server.PID()); err == nil {
		rss, hwm := megabytes(m.RSS), megabytes(m.HWM)
		rep.Server.RSSEndMB, rep.Server.VmHWMMB = &rss, &hwm
	}
	rep.Targets = paymentsTargets(rep)
	return &rep, nil
}

// probe creates one payment per partner before anything is timed: every
// partner's path works (an error here stops the run before it starts), and
// the first payment's stored payment.created event, as the CloudEvent the
// store keeps, becomes the baseline's row, so the raw INSERTs write rows as
// large as the payments phase's events. It returns the size of a POST
// /payments answer.
func (b *paymentsBench) probe(ctx context.Context) (int, error) {
	var first []byte
	for i, p := range b.load.partners {
		body, err := b.load.create(ctx, p)
		if err != nil {
			return 0, fmt.Errorf("first payment of partner %d: %w", i, err)
		}
		if i == 0 {
			first = body
		}
	}
	var created struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(first, &created); err != nil {
		return 0, fmt.Errorf("POST /payments answer %q: %w", first, err)
	}
	id, err := uuid.Parse(created.ID)
	if err != nil {
		return 0, fmt.Errorf("POST /payments answer %q: id: %w", first, err)
	}
	tenant, err := uuid.Parse(b.load.partners[0].TenantID)
	if err != nil {
		return 0, fmt.Errorf("ledgerctl tenant id: %w", err)
	}
	store := eventstore.New(b.pool, projections.Projector{}, nil)
	recs, err := store.Load(ctx, domain.StreamRef{TenantID: tenant, Type: "payment", ID: id})
	if err != nil {
		return 0, err
	}
	createdType := domain.PaymentCreated{}.EventType()
	for _, r := range recs {
		if r.Type == createdType {
			env, err := json.Marshal(domain.Envelope(r))
			if err != nil {
				return 0, fmt.Errorf("raw payload: %w", err)
			}
			b.payload = string(env)
			return len(first), nil
		}
	}
	return 0, fmt.Errorf("payment %s has no %s event in the store (%d events)", id, createdType, len(recs))
}

// level measures one concurrency level: POST /payments on c workers for the
// duration, then raw INSERTs on c workers for the duration, sampling
// ledgerd's RSS throughout.
func (b *paymentsBench) level(ctx context.Context, c int) (paymentsLevel, error) {
	if _, ok, err := b.waitRelay(ctx); err != nil {
		return paymentsLevel{}, err
	} else if !ok {
		fmt.Fprintf(b.stderr, "ledgerbench: relay still behind after %v; concurrency %d starts anyway\n", b.cfg.relayWait, c)
	}
	rss := sampleRSS(b.server.PID(), 100*time.Millisecond)
	checkpoint(ctx, b.pool, b.stderr)
	pay, err := runClosedLoop(ctx, c, b.cfg.duration, b.load.op)
	if err != nil {
		rss.finish()
		return paymentsLevel{}, fmt.Errorf("payments phase: %w", err)
	}
	l := paymentsLevel{Concurrency: c, Payments: newThroughput(pay)}
	drain, ok, err := b.waitRelay(ctx)
	if err != nil {
		rss.finish()
		return paymentsLevel{}, err
	}
	l.RelayDrainMs, l.RelayCaughtUp = ms(drain), ok
	if b.cfg.compareKeys {
		if l.Keys, err = b.compareKeys(ctx, c, l.Payments); err != nil {
			rss.finish()
			return paymentsLevel{}, err
		}
	}
	checkpoint(ctx, b.pool, b.stderr)
	if err := warmPool(ctx, b.pool, c, 30*time.Second); err != nil {
		rss.finish()
		return paymentsLevel{}, fmt.Errorf("raw insert phase: %w", err)
	}
	raw, err := runClosedLoop(ctx, c, b.cfg.duration, rawInsert(b.pool, b.payload))
	b.pool.Reset() // give the connections back before ledgerd's next phase needs its own
	peak, sampled := rss.finish()
	if err != nil {
		return paymentsLevel{}, fmt.Errorf("raw insert phase: %w", err)
	}
	l.Raw = newThroughput(raw)
	if l.Raw.PerSecond > 0 {
		l.PaymentsRawRatio = l.Payments.PerSecond / l.Raw.PerSecond
	}
	if sampled {
		mb := megabytes(peak)
		l.ServerRSSPeakMB = &mb
	}
	return l, nil
}

// compareKeys runs the payments phase again on c workers with keys the
// other way from the one just measured (main), then waits for the relay
// again, and pairs the two: both ran on the same server minutes apart,
// which is what makes their ratio mean something.
func (b *paymentsBench) compareKeys(ctx context.Context, c int, main throughput) (*keyComparison, error) {
	checkpoint(ctx, b.pool, b.stderr)
	other := &paymentLoad{client: b.load.client, baseURL: b.load.baseURL, partners: b.load.partners, keyed: !b.load.keyed}
	pay, err := runClosedLoop(ctx, c, b.cfg.duration, other.op)
	if err != nil {
		return nil, fmt.Errorf("payments phase with -idempotency-key=%t: %w", other.keyed, err)
	}
	if _, ok, err := b.waitRelay(ctx); err != nil {
		return nil, err
	} else if !ok {
		fmt.Fprintf(b.stderr, "ledgerbench: relay still behind after %v; the raw INSERTs of concurrency %d start anyway\n", b.cfg.relayWait, c)
	}
	if b.load.keyed {
		return newKeyComparison(main, newThroughput(pay)), nil
	}
	return newKeyComparison(newThroughput(pay), main), nil
}

// warmPool opens n connections of pool before a timed phase, so the phase
// measures INSERTs rather than connection setup. ledgerd keeps up to
// -db-max-conns connections open beside them, and the Postgres server may be
// shared: a server at max_connections ("too many clients", 53300) is waited
// for up to limit before the run gives up.
func warmPool(ctx context.Context, pool *pgxpool.Pool, n int, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	conns := make([]*pgxpool.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Release()
		}
	}()
	for len(conns) < n {
		c, err := pool.Acquire(ctx)
		if err != nil {
			var pgErr *pgconn.PgError
			if errors.As(err, &pgErr) && pgErr.Code == "53300" && time.Now().Before(deadline) {
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(200 * time.Millisecond):
				}
				continue
			}
			return fmt.Errorf("open %d connections (have %d): %w", n, len(conns), err)
		}
		conns = append(conns, c)
	}
	return nil
}

// warnConnections says so when the run cannot fit in the server's
// max_connections even with nobody else on it: ledgerd's pool and the
// baseline's at the highest level, plus ledgerd's sequencer connection.
func warnConnections(ctx context.Context, pool *pgxpool.Pool, ledgerdConns, rawConns int, stderr io.Writer) {
	var limit int
	if err := pool.QueryRow(ctx, "SELECT current_setting('max_connections')::int").Scan(&limit); err != nil {
		return
	}
	if need := ledgerdConns + rawConns + 1; need > limit {
		fmt.Fprintf(stderr, "ledgerbench: warning: up to %d connections needed (ledgerd %d, baseline %d, sequencer 1), "+
			"max_connections is %d; lower -db-max-conns or the highest -concurrency\n", need, ledgerdConns, rawConns, limit)
	}
}

// outboxPending is ledgerd's ledger_outbox_pending, read from the database:
// events not yet sequenced plus sequenced ones not yet published.
const outboxPending = `SELECT (SELECT last_position - published_position FROM sequencer_state)
	+ (SELECT count(*) FROM events WHERE position IS NULL)`

// waitRelay waits up to -relay-wait for ledgerd's sequencer and relay to
// publish every event, so that neither the next level nor the baseline
// shares the machine with a relay catching up. It returns how long that
// took and whether it happened.
func (b *paymentsBench) waitRelay(ctx context.Context) (time.Duration, bool, error) {
	return waitRelay(ctx, b.pool, b.cfg.relayWait)
}

// waitRelay waits up to limit for ledgerd's outbox on the database of pool
// to be empty (outboxPending), and returns how long that took and whether
// it happened.
func waitRelay(ctx context.Context, pool *pgxpool.Pool, limit time.Duration) (time.Duration, bool, error) {
	start := time.Now()
	for {
		var pending int64
		if err := pool.QueryRow(ctx, outboxPending).Scan(&pending); err != nil {
			return 0, false, fmt.Errorf("outbox pending: %w", err)
		}
		if pending <= 0 {
			return time.Since(start), true, nil
		}
		if time.Since(start) >= limit {
			return time.Since(start), false, nil
		}
		select {
		case <-ctx.Done():
			return time.Since(start), false, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// paymentsTargets are the payments mode's acceptance targets, at
// concurrency 64: payments at least 35% of the raw INSERT rate, p99 under
// 50 ms, ledgerd's RSS under 300 MB and, with -compare-keys, keyed
// requests at least 90% of the plain rate: a key costs a read, not a
// commit of its own.
func paymentsTargets(r paymentsReport) []target {
	var ts []target
	for _, l := range r.Levels {
		if l.Concurrency != 64 {
			continue
		}
		ts = append(ts,
			target{Name: "payments/raw at concurrency 64", Want: ">= 0.35", Got: l.PaymentsRawRatio, Met: l.PaymentsRawRatio >= 0.35},
			target{Name: "POST /payments p99 ms at concurrency 64", Want: "< 50", Got: l.Payments.P99Ms, Met: l.Payments.P99Ms < 50})
		if l.ServerRSSPeakMB != nil {
			ts = append(ts, target{Name: "ledgerd RSS peak MB at concurrency 64", Want: "< 300",
				Got: *l.ServerRSSPeakMB, Met: *l.ServerRSSPeakMB < 300})
		}
		if l.Keys != nil {
			ts = append(ts, target{Name: "keyed / plain POST /payments at concurrency 64", Want: ">= 0.90",
				Got: l.Keys.KeyedPlainRatio, Met: l.Keys.KeyedPlainRatio >= 0.90})
		}
	}
	return ts
}
