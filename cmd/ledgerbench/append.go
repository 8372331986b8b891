package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledger/ledger/cmd/internal/benchkit"
	"github.com/ledger/ledger/cmd/internal/gcsettings"
	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore"
	"github.com/ledger/ledger/projections"
)

// appendConfig is the append mode's flags.
type appendConfig struct {
	databaseURL string
	natsURL     string
	concurrency []int
	duration    time.Duration
	relayWait   time.Duration
	out         string
	keep        bool
	relay       bool
	relayBatch  int           // eventstore.RelayConfig.BatchSize; 0: its default
	relayPoll   time.Duration // eventstore.RelayConfig.PollInterval; 0: its default
	relayBusy   time.Duration // eventstore.RelayConfig.BusyRound; 0: its default
}

func parseAppendFlags(args []string, stderr io.Writer) (appendConfig, error) {
	var c appendConfig
	fs := flag.NewFlagSet("ledgerbench append", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.databaseURL, "database-url", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable",
		"Postgres server to benchmark; a database ledgerbench_<random> is created on it")
	fs.StringVar(&c.natsURL, "nats-url", nats.DefaultURL, "NATS server with JetStream for the relay")
	levels := fs.String("concurrency", "1,16,64", "comma-separated concurrency levels")
	fs.DurationVar(&c.duration, "duration", 10*time.Second, "length of each timed phase (append, then raw INSERTs) per level")
	fs.DurationVar(&c.relayWait, "relay-wait", 30*time.Second, "longest wait for the relay to publish everything after a phase")
	fs.StringVar(&c.out, "out", "bench-append.json", "JSON report path")
	fs.BoolVar(&c.keep, "keep", false, "keep the database and the JetStream stream for inspection")
	fs.BoolVar(&c.relay, "relay", true, "run the relay while appending (false: measure the write path alone)")
	fs.IntVar(&c.relayBatch, "relay-batch", 0, "events per relay round (0: the relay's default)")
	fs.DurationVar(&c.relayPoll, "relay-poll", 0, "relay's idle wait between rounds (0: the relay's default)")
	fs.DurationVar(&c.relayBusy, "relay-busy-round", 0, "relay's least time from one busy round's start to the next's (0: the relay's default)")
	err := fs.Parse(args)
	if err != nil {
		return c, err
	}
	if c.concurrency, err = parseLevels(*levels); err != nil {
		return c, err
	}
	if c.duration <= 0 {
		return c, errors.New("-duration must be positive")
	}
	return c, nil
}

// appendBench holds what every level of the append mode shares.
type appendBench struct {
	cfg      appendConfig
	pool     *pgxpool.Pool
	store    *eventstore.Store
	relay    *relayWatch // nil with -relay=false
	meta     domain.Metadata
	payload  string
	appended atomic.Int64
	lags     [][]time.Duration // subscriber lags of every level, for the run's figures
	stderr   io.Writer
}

// runAppend is the append mode: it measures, prints the table and writes
// the JSON report.
func runAppend(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseAppendFlags(args, stderr)
	if err != nil {
		return err
	}
	rep, err := measureAppend(ctx, cfg, stderr)
	if rep == nil {
		return err
	}
	printTable(stdout, *rep)
	if werr := benchkit.WriteJSON(cfg.out, rep); werr != nil {
		return errors.Join(err, werr)
	}
	fmt.Fprintf(stdout, "\nreport written to %s\n", cfg.out)
	return err
}

// measureAppend runs the append mode's phases: for each concurrency level,
// appends for -duration with the relay publishing behind, waits for the
// relay to drain, then runs raw INSERTs for -duration. The report is nil
// when the run stopped before it was complete; with a complete report, err
// is a failed cleanup.
func measureAppend(ctx context.Context, cfg appendConfig, stderr io.Writer) (_ *report, err error) {
	suffix := randomHex(6)
	dbName := "ledgerbench_" + suffix
	relayCfg := eventstore.RelayConfig{Stream: "LEDGERBENCH_" + strings.ToUpper(suffix), SubjectPrefix: "ledgerbench" + suffix,
		BatchSize: cfg.relayBatch, PollInterval: cfg.relayPoll, BusyRound: cfg.relayBusy}
	cleanup := context.WithoutCancel(ctx) // cleanup runs after Ctrl-C too
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	// The Store and the relay run here as they run in ledgerd, under its
	// collector setting; the raw INSERTs share it, so the two phases stay
	// comparable.
	restoreGC, _ := gcsettings.WithService(os.Getenv)
	defer restoreGC()

	if err := createDatabase(ctx, cfg.databaseURL, dbName); err != nil {
		return nil, err
	}
	if !cfg.keep {
		defer func() { err = errors.Join(err, dropDatabase(cleanup, cfg.databaseURL, dbName)) }()
	}
	maxConns := int32(slices.Max(cfg.concurrency) + 4)
	pool, err := openBenchPool(ctx, cfg.databaseURL, dbName, maxConns)
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	nc, err := nats.Connect(cfg.natsURL, nats.Name("ledgerbench"))
	if err != nil {
		return nil, fmt.Errorf("connect to nats: %w", err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	mach, err := describeMachine(ctx, pool, nc)
	if err != nil {
		return nil, err
	}

	b := &appendBench{cfg: cfg, pool: pool, store: eventstore.New(pool, projections.Projector{}, nil),
		meta: domain.Metadata{Actor: "system:ledgerbench"}, stderr: stderr}
	if b.payload, err = rawPayload(b.meta); err != nil {
		return nil, err
	}
	if cfg.relay {
		if !cfg.keep {
			defer func() { err = errors.Join(err, deleteStream(cleanup, js, relayCfg.Stream)) }()
		}
		if b.relay, err = startRelay(ctx, pool, js, relayCfg, log); err != nil {
			return nil, err
		}
		defer b.relay.close()
		b.store.OnCommit(b.relay.relay.Wake) // as ledgerd wires them
	}

	rep := report{Mode: "append", StartedAt: time.Now().UTC(), Machine: mach, Params: params{
		DatabaseServer: pool.Config().ConnConfig.Host + ":" + strconv.Itoa(int(pool.Config().ConnConfig.Port)),
		Database:       dbName, Kept: cfg.keep, NATSURL: cfg.natsURL, Concurrency: cfg.concurrency,
		DurationSeconds: cfg.duration.Seconds(), RelayWaitSecs: cfg.relayWait.Seconds(), PoolMaxConns: maxConns,
		EventType: domain.APIKeyCreated{}.EventType(), RawPayloadBytes: len(b.payload),
	}}
	if cfg.relay {
		rep.Params.Stream, rep.Params.SubjectPrefix = relayCfg.Stream, relayCfg.SubjectPrefix
	}
	for _, c := range cfg.concurrency {
		l, err := b.level(ctx, c)
		if err != nil {
			return nil, fmt.Errorf("concurrency %d: %w", c, err)
		}
		rep.Levels = append(rep.Levels, l)
	}
	if b.relay != nil {
		if rep.Relay, err = b.finalRelay(ctx); err != nil {
			return nil, err
		}
	}
	rep.Targets = targets(rep)
	return &rep, nil
}

// targets are the append mode's acceptance targets (docs/benchmarking.md
// says where each stands): append throughput at least half the raw INSERT
// rate at concurrency 64, relay lag p99 under 100 ms at every level, and a
// relay that published everything.
func targets(r report) []target {
	var ts []target
	for _, l := range r.Levels {
		if l.Concurrency == 64 {
			ts = append(ts, target{Name: "append/raw at concurrency 64", Want: ">= 0.5",
				Got: l.AppendRawRatio, Met: l.AppendRawRatio >= 0.5})
		}
	}
	if r.Relay != nil {
		worst := 0.0
		for _, l := range r.Levels {
			worst = max(worst, l.Relay.LagP99Ms)
		}
		ts = append(ts, target{Name: "relay lag p99 ms (worst level)", Want: "< 100", Got: worst, Met: worst < 100})
		kept := 0.0
		if r.Relay.KeptUp {
			kept = 1
		}
		ts = append(ts, target{Name: "relay kept up (published == appended)", Want: "1", Got: kept, Met: r.Relay.KeptUp})
	}
	return ts
}

// parseLevels reads -concurrency: comma-separated positive integers.
func parseLevels(s string) ([]int, error) {
	var levels []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-concurrency: %q is not a positive integer", f)
		}
		levels = append(levels, n)
	}
	return levels, nil
}

// deleteStream removes the run's JetStream stream.
func deleteStream(ctx context.Context, js jetstream.JetStream, name string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := js.DeleteStream(ctx, name); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
		return fmt.Errorf("delete stream %s: %w", name, err)
	}
	return nil
}
