// Command ledgerbench is the ledger's load generator. Each mode is a
// subcommand in its own file, so later modes add a file and a case here:
//
//	ledgerbench append [flags]     event-store append rate vs raw INSERTs, relay lag
//	ledgerbench payments [flags]   POST /payments through a real ledgerd vs raw INSERTs, its RSS
//	ledgerbench lifecycle [flags]  payments at a fixed rate from creation to their payment.success webhook
//	ledgerbench replay [flags]     projections rebuild over N seeded events: events/s, peak memory
//	ledgerbench all [flags]        the four above in one run, written up as docs/benchmarks.md
//
// The fault scenarios are a command of their own, ledgerchaos.
//
// It measures the real packages (eventstore, projections), or a real
// ledgerd process, against real servers, on a database and a JetStream
// stream of its own that it removes afterwards, so it can run beside a live
// ledgerd or other benchmarks.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "ledgerbench:", err)
		os.Exit(1)
	}
}

// run dispatches on the mode named by args[0].
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		usage(stderr)
		return fmt.Errorf("no mode given")
	}
	modes := map[string]func(context.Context, []string, io.Writer, io.Writer) error{
		"append": runAppend, "payments": runPayments, "lifecycle": runLifecycle, "replay": runReplay, "all": runAll,
	}
	if mode, ok := modes[args[0]]; ok {
		if err := mode(ctx, args[1:], stdout, stderr); !errors.Is(err, flag.ErrHelp) {
			return err
		}
		return nil
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		usage(stdout)
		return nil
	default:
		usage(stderr)
		return fmt.Errorf("unknown mode %q", args[0])
	}
}

func usage(w io.Writer) {
	fmt.Fprint(w, `usage: ledgerbench <mode> [flags]

modes:
  append     append throughput and latency through eventstore.Store.Append,
             against raw single-row INSERTs, with the relay's lag to JetStream
  payments   POST /payments throughput and latency through a real ledgerd
             process, against raw single-row INSERTs, with ledgerd's RSS
  lifecycle  payments at a fixed rate through a real ledgerd, from POST /payments
             and the sandbox deposit to their payment.success webhook: latency,
             completions/s, lost and duplicated webhooks, ledgerd's RSS
  replay     projections rebuild (every read model) over N seeded events:
             events/s and peak memory, at several N
  all        the four modes above one after another, written up as
             docs/benchmarks.md (machine, versions, command, figures and
             ratios, memory, targets) and bench-all.json

Run "ledgerbench <mode> -h" for a mode's flags. The fault scenarios (kill -9,
NATS and Postgres outages, hostile webhook receivers) are a command of their
own: ledgerchaos.
`)
}
