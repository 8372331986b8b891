package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledger/ledger/cmd/internal/benchkit"
)

// ledgerdSpec says how the modes that drive a real ledgerd (payments,
// lifecycle) run it.
type ledgerdSpec struct {
	DatabaseURL  string // Postgres server; ledgerd creates and migrates ledgerbench_<random> on it
	NATSURL      string // NATS server with JetStream (ledgerd's NATS_URL)
	Ledgerd      string // binary; empty: go build ./cmd/ledgerd
	Ledgerctl    string // binary; empty: go build ./cmd/ledgerctl
	DBMaxConns   int    // LEDGER_DB_MAX_CONNS
	ReadyTimeout time.Duration
	Keep         bool       // keep the database and the stream for inspection
	Env          []string   // further ledgerd settings, NAME=value, after the ones every run sets
	Proxy        *pgCounter // when set, ledgerd reaches Postgres through it (ledgerctl does not)
}

// benchLedgerd is a ready ledgerd (sandbox mode, log level warn, its log on
// ledgerbench's stderr) on a database ledgerbench_<random> and a JetStream
// stream LEDGERBENCH_<RANDOM> of its own. close stops it and removes
// everything it created.
type benchLedgerd struct {
	Server    *benchkit.Ledgerd
	DBName    string
	DBURL     string // DATABASE_URL of ledgerd and ledgerctl
	Stream    string
	Prefix    string // LEDGER_NATS_SUBJECT_PREFIX
	Ledgerctl string // binary, built or given
	NC        *nats.Conn

	cleanups []func() error // run last first by close
}

// ledgerdFlags registers the flags of spec, shared by the modes that run
// a real ledgerd.
func ledgerdFlags(fs *flag.FlagSet, spec *ledgerdSpec) {
	fs.StringVar(&spec.DatabaseURL, "database-url", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable",
		"Postgres server (a postgres:// URL); ledgerd creates and migrates a database ledgerbench_<random> on it")
	fs.StringVar(&spec.NATSURL, "nats-url", nats.DefaultURL, "NATS server with JetStream for ledgerd's relay (ledgerd's NATS_URL)")
	fs.IntVar(&spec.DBMaxConns, "db-max-conns", 32, "ledgerd's Postgres pool size (LEDGER_DB_MAX_CONNS)")
	fs.StringVar(&spec.Ledgerd, "ledgerd", "", "ledgerd binary to run (default: go build ./cmd/ledgerd into a temporary directory)")
	fs.StringVar(&spec.Ledgerctl, "ledgerctl", "", "ledgerctl binary to run (default: go build ./cmd/ledgerctl into a temporary directory)")
	fs.DurationVar(&spec.ReadyTimeout, "ready-timeout", time.Minute, "longest wait for ledgerd's GET /readyz to answer 200")
	fs.BoolVar(&spec.Keep, "keep", false, "keep the database and the JetStream stream for inspection")
}

// startBenchLedgerd builds what spec does not name, starts ledgerd and
// waits for it to be ready. On error, whatever it had created is removed
// already.
func startBenchLedgerd(ctx context.Context, spec ledgerdSpec, stderr io.Writer) (_ *benchLedgerd, err error) {
	suffix := randomHex(6)
	b := &benchLedgerd{DBName: "ledgerbench_" + suffix, Stream: "LEDGERBENCH_" + strings.ToUpper(suffix),
		Prefix: "ledgerbench" + suffix}
	defer func() {
		if err != nil {
			err = errors.Join(err, b.close())
		}
	}()
	cleanup := context.WithoutCancel(ctx) // cleanup runs after Ctrl-C too
	if b.DBURL, err = benchkit.DatabaseURLFor(spec.DatabaseURL, b.DBName); err != nil {
		return b, err
	}

	// Cleanup is registered before ledgerd can create anything, and runs
	// after it stopped (last first): database, then stream.
	if !spec.Keep {
		b.cleanups = append(b.cleanups, func() error { return dropDatabase(cleanup, spec.DatabaseURL, b.DBName) })
	} else {
		b.cleanups = append(b.cleanups, func() error {
			fmt.Fprintf(stderr, "ledgerbench: kept database %s and stream %s\n", b.DBName, b.Stream)
			return nil
		})
	}
	if b.NC, err = nats.Connect(spec.NATSURL, nats.Name("ledgerbench")); err != nil {
		return b, fmt.Errorf("connect to nats: %w", err)
	}
	b.cleanups = append(b.cleanups, func() error { b.NC.Close(); return nil })
	js, err := jetstream.New(b.NC)
	if err != nil {
		return b, fmt.Errorf("jetstream: %w", err)
	}
	if !spec.Keep {
		b.cleanups = append(b.cleanups, func() error { return deleteStream(cleanup, js, b.Stream) })
	}

	tmp, err := os.MkdirTemp("", "ledgerbench-")
	if err != nil {
		return b, err
	}
	b.cleanups = append(b.cleanups, func() error { return os.RemoveAll(tmp) })
	ledgerdBin, ledgerctlBin := spec.Ledgerd, spec.Ledgerctl
	if err := benchkit.BuildMissing(ctx, &ledgerdBin, &ledgerctlBin, tmp, stderr); err != nil {
		return b, err
	}
	b.Ledgerctl = ledgerctlBin
	addr, err := benchkit.FreeAddr()
	if err != nil {
		return b, err
	}
	ledgerdDB := b.DBURL
	if spec.Proxy != nil {
		if ledgerdDB, err = spec.Proxy.URL(b.DBURL); err != nil {
			return b, err
		}
	}
	env := append([]string{"DATABASE_URL=" + ledgerdDB, "NATS_URL=" + spec.NATSURL,
		"LEDGER_NATS_STREAM=" + b.Stream, "LEDGER_NATS_SUBJECT_PREFIX=" + b.Prefix, "LEDGER_ADDR=" + addr,
		"LEDGER_LOG_LEVEL=warn", "LEDGER_DB_MAX_CONNS=" + strconv.Itoa(spec.DBMaxConns), "LEDGER_MODE=sandbox",
		"LEDGER_DATA_DIR=" + filepath.Join(tmp, "data"),
		// The benchmarks measure what the server can do, not its rate limits.
		"LEDGER_RATE_LIMIT=0", "LEDGER_TOKEN_RATE_LIMIT=0"}, spec.Env...)
	if b.Server, err = benchkit.StartLedgerd(ledgerdBin, addr, benchkit.Env(env...), stderr); err != nil {
		return b, err
	}
	b.cleanups = append(b.cleanups, func() error { return b.Server.Stop(30 * time.Second) })
	if err := b.Server.WaitReady(ctx, spec.ReadyTimeout); err != nil {
		return b, err
	}
	fmt.Fprintf(stderr, "ledgerbench: ledgerd (pid %d) ready at %s on database %s, stream %s\n",
		b.Server.PID(), addr, b.DBName, b.Stream)
	return b, nil
}

// close stops ledgerd, then removes its data directory, the stream and the
// database (unless kept), last created first, and joins their errors.
func (b *benchLedgerd) close() error {
	var err error
	for i := len(b.cleanups) - 1; i >= 0; i-- {
		err = errors.Join(err, b.cleanups[i]())
	}
	b.cleanups = nil
	return err
}

// setupPartners creates n partners on the server with ledgerctl and the API.
func (b *benchLedgerd) setupPartners(ctx context.Context, client *http.Client, n int) ([]benchkit.Partner, error) {
	return benchkit.SetupPartners(ctx, client, b.Ledgerctl, benchkit.Env("DATABASE_URL="+b.DBURL), b.Server.BaseURL, n)
}
