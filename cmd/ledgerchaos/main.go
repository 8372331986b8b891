// Command ledgerchaos runs the ledger's fault scenarios: kill -9 of ledgerd
// processes, NATS and Postgres outages, several processes, hostile webhook
// receivers, the production rails' providers failing. Each scenario runs its own Postgres and NATS and ledgerd
// processes under a mixed load, then checks that nothing acknowledged was
// lost and nothing was paid or published twice. Run "ledgerchaos -h" for
// the scenarios and flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/ledger/ledger/cmd/internal/benchkit"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "ledgerchaos:", err)
		os.Exit(1)
	}
}

// chaosConfig is the command's flags.
type chaosConfig struct {
	scenarios  []string
	duration   time.Duration // load per scenario, at least
	natsOutage time.Duration
	pgOutage   time.Duration
	settle     time.Duration
	workers    int
	rate       float64
	partners   int
	ledgerd    string
	ledgerctl  string
	natsServer string
	throughput time.Duration // the cluster scenario's payments/s phase, per number of ledgerd
	keep       bool
	out        string
}

// parseChaosFlags reads the command line; -h prints the scenarios too.
func parseChaosFlags(args []string, stderr io.Writer) (chaosConfig, error) {
	var c chaosConfig
	fs := flag.NewFlagSet("ledgerchaos", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `usage: ledgerchaos [flags]

Fault scenarios. Each runs its own Postgres cluster (initdb) and NATS
server on free loopback ports, so it can break them without touching the
machine's, and ledgerd processes sharing them, under a mixed load (users,
momo account changes, payments with sandbox deposits) from a client that
retries with the same Idempotency-Key, as a partner would. Once the
cluster is whole again and has settled, it checks that every acknowledged
write is there, Postgres and the JetStream stream hold the same events
(by Nats-Msg-Id), ledgerctl audit verify passes, every deposited payment
succeeded with exactly one payout, and every status webhook was answered
2xx and not sent again after that (unless a process was killed between
the answer and its record, or a Postgres crash lost the delivery's claim). It prints what it
checked in numbers and exits non-zero when a check fails.

The rails scenario runs ledgerd in production mode against fakes of
LND, Paystack and M-Pesa run by ledgerchaos itself, which plays the
payers and the bank, and counts payouts from the fakes' own records.

The cluster scenario runs Postgres under Patroni and etcd, a NATS
cluster and HAProxy instead (Debian packages patroni, etcd-server,
haproxy: .ci/cluster-deps installs them); "all" leaves it out.

scenarios:
`)
		for _, s := range chaosScenarios {
			fmt.Fprintf(fs.Output(), "  %-10s %s\n", s.name, s.about)
		}
		fmt.Fprint(fs.Output(), "\nflags:\n")
		fs.PrintDefaults()
	}
	scenarios := fs.String("scenarios", "all", "comma-separated scenarios to run, or all (every one but cluster)")
	fs.DurationVar(&c.duration, "duration", 20*time.Second, "load per scenario (longer when an outage needs it)")
	fs.DurationVar(&c.natsOutage, "nats-outage", 30*time.Second, "how long NATS stays down in the nats scenario")
	fs.DurationVar(&c.pgOutage, "pg-outage", 10*time.Second, "how long Postgres stays down in the postgres scenario")
	fs.DurationVar(&c.settle, "settle", 3*time.Minute, "longest wait, after the load, for every payment and webhook to finish")
	fs.IntVar(&c.workers, "workers", 16, "concurrent clients of the load")
	fs.Float64Var(&c.rate, "rate", 40, "operations started per second across the workers")
	fs.IntVar(&c.partners, "partners", 4, "partners (tenants); worker w acts as partner w % partners")
	fs.StringVar(&c.ledgerd, "ledgerd", "", "ledgerd binary (default: go build ./cmd/ledgerd)")
	fs.StringVar(&c.ledgerctl, "ledgerctl", "", "ledgerctl binary (default: go build ./cmd/ledgerctl)")
	fs.StringVar(&c.natsServer, "nats-server", "", "nats-server binary for the cluster scenario (default: go build the module's nats-server)")
	fs.DurationVar(&c.throughput, "throughput", 10*time.Second,
		"cluster scenario: before its load, how long to measure payments/s with 1, 2 and 3 ledgerd (0: not measured)")
	fs.BoolVar(&c.keep, "keep", false, "keep each scenario's directory (logs, Postgres and NATS data) even when it passes")
	fs.StringVar(&c.out, "out", "bench-chaos.json", "JSON report path")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	for _, name := range strings.Split(*scenarios, ",") {
		name = strings.TrimSpace(name)
		if name == "all" {
			c.scenarios = nil
			for _, s := range chaosScenarios {
				if !s.replicated {
					c.scenarios = append(c.scenarios, s.name)
				}
			}
			break
		}
		if !slices.ContainsFunc(chaosScenarios, func(s chaosScenario) bool { return s.name == name }) {
			return c, fmt.Errorf("unknown scenario %q", name)
		}
		c.scenarios = append(c.scenarios, name)
	}
	switch {
	case c.throughput < 0:
		return c, errors.New("-throughput must not be negative")
	case c.duration <= 0 || c.natsOutage <= 0 || c.pgOutage <= 0 || c.settle <= 0:
		return c, errors.New("-duration, -nats-outage, -pg-outage and -settle must be positive")
	case c.workers < 1 || c.partners < 1 || c.rate <= 0:
		return c, errors.New("-workers, -partners and -rate must be positive")
	}
	return c, nil
}

// run parses args, runs the scenarios they name one after another and
// writes their report.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseChaosFlags(args, stderr)
	if err != nil {
		return err
	}
	root, err := os.MkdirTemp("", "ledgerchaos-")
	if err != nil {
		return err
	}
	// Postgres runs as its own user when ledgerchaos is root: it must be
	// able to reach its directory under root.
	if err := os.Chmod(root, 0o755); err != nil {
		return err
	}
	if err := benchkit.BuildMissing(ctx, &cfg.ledgerd, &cfg.ledgerctl, root, stderr); err != nil {
		return err
	}
	if slices.Contains(cfg.scenarios, "cluster") {
		if missing := missingHABinaries(); len(missing) > 0 {
			return fmt.Errorf("the cluster scenario needs %s on the PATH: run .ci/cluster-deps", strings.Join(missing, ", "))
		}
		if cfg.natsServer == "" {
			if cfg.natsServer, err = buildNATSServer(ctx, root, stderr); err != nil {
				return err
			}
		}
	}
	var results []chaosResult
	failed := false
	for _, name := range cfg.scenarios {
		i := slices.IndexFunc(chaosScenarios, func(s chaosScenario) bool { return s.name == name })
		res := runScenario(ctx, cfg, chaosScenarios[i], filepath.Join(root, name), stderr)
		printChaosResult(stdout, res)
		results = append(results, res)
		failed = failed || !res.Passed
		if ctx.Err() != nil {
			break
		}
	}
	if err := benchkit.WriteJSON(cfg.out, results); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nreport written to %s\n", cfg.out)
	if !failed && !cfg.keep {
		os.RemoveAll(root)
	} else {
		fmt.Fprintf(stdout, "logs and data kept under %s\n", root)
	}
	if failed {
		return errors.New("a chaos check failed")
	}
	return ctx.Err()
}
