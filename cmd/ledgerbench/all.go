package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ledger/ledger/cmd/internal/benchkit"
)

// allConfig is the all mode's flags and, parsed from them, each mode's
// configuration.
type allConfig struct {
	out       string // Markdown report
	jsonOut   string // every mode's report in one JSON file
	args      []string
	append    appendConfig
	payments  paymentsConfig
	lifecycle lifecycleConfig
	replay    replayConfig
}

// passThrough lists all's settings that it hands to the modes, by the
// modes' own flag names. A setting reaches a mode only when it was given
// (or -quick gave it), so every mode otherwise keeps its own default.
var passThrough = []struct {
	flag, usage string
	modes       []string
}{
	{"duration", "length of each timed phase (a Go duration) of append, payments and lifecycle (default: the modes', 10s)",
		[]string{"append", "payments", "lifecycle"}},
	{"concurrency", "comma-separated concurrency levels of append and payments (default: the modes', 1,16,64)",
		[]string{"append", "payments"}},
	{"rate", "lifecycle: payments started per second (default: the mode's, 300)", []string{"lifecycle"}},
	{"events", "replay: comma-separated history sizes (default: the mode's, 1000000)", []string{"replay"}},
	{"runs", "replay: rebuilds per size (default: the mode's, 2)", []string{"replay"}},
	{"database-url", "Postgres server of every mode (default: the modes', the local server)",
		[]string{"append", "payments", "lifecycle", "replay"}},
	{"nats-url", "NATS server of append, payments and lifecycle (default: the modes', the local server)",
		[]string{"append", "payments", "lifecycle"}},
}

// allArgs are all's own settings per mode, given before -quick's and the
// command line's: the report measures as a careful partner integrates,
// with one API key (and an Idempotency-Key on every POST, the modes'
// default).
var allArgs = map[string][]string{
	"payments":  {"-partners", "1"},
	"lifecycle": {"-partners", "1"},
}

// quickArgs are -quick's settings per mode: short phases and small
// histories, for a smoke run of a few minutes that checks every mode and
// the report end to end. Its figures say little.
var quickArgs = map[string][]string{
	"append":    {"-duration", "2s"},
	"payments":  {"-duration", "2s"},
	"lifecycle": {"-duration", "2s", "-payments-duration", "2s"},
	"replay":    {"-events", "20000,50000", "-runs", "1"},
}

func parseAllFlags(args []string, stderr io.Writer) (allConfig, error) {
	c := allConfig{args: args}
	fs := flag.NewFlagSet("ledgerbench all", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `usage: ledgerbench all [flags]

Runs append, payments, lifecycle and replay one after another, each as its
own mode would with the settings below, prints each mode's table, and writes
-out, a Markdown report (machine, versions, the command, each mode's figures
as absolute values and as ratios against the raw INSERT baseline measured in
the same run, memory, and the targets), and -json, every mode's report. A
mode that fails is reported as such and the next one runs; the exit status
is then 1. The per-mode JSON files (bench-append.json, ...) are not written.

flags:
`)
		fs.PrintDefaults()
	}
	fs.StringVar(&c.out, "out", "docs/benchmarks.md", "Markdown report path")
	fs.StringVar(&c.jsonOut, "json", "bench-all.json", "JSON report path: the run, the host and every mode's report")
	quick := fs.Bool("quick", false, "smoke run of a few minutes: 2s phases, replay of 20000 and 50000 events once; settings given beside it win")
	for _, p := range passThrough {
		fs.String(p.flag, "", p.usage)
	}
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	modeArgs := map[string][]string{}
	for mode, a := range allArgs {
		modeArgs[mode] = slices.Clone(a)
	}
	if *quick {
		for mode, a := range quickArgs {
			modeArgs[mode] = append(modeArgs[mode], a...)
		}
	}
	// After -quick's: of a flag given twice, a mode's flag set keeps the last.
	fs.Visit(func(f *flag.Flag) {
		for _, p := range passThrough {
			if p.flag == f.Name {
				for _, mode := range p.modes {
					modeArgs[mode] = append(modeArgs[mode], "-"+f.Name, f.Value.String())
				}
			}
		}
	})
	var err error
	if c.append, err = parseAppendFlags(modeArgs["append"], stderr); err != nil {
		return c, fmt.Errorf("append: %w", err)
	}
	if c.payments, err = parsePaymentsFlags(modeArgs["payments"], stderr); err != nil {
		return c, fmt.Errorf("payments: %w", err)
	}
	// The report puts keyed ÷ plain beside the other ratios, so the keys'
	// cost is measured, not remembered from another run.
	c.payments.compareKeys = true
	if c.lifecycle, err = parseLifecycleFlags(modeArgs["lifecycle"], stderr); err != nil {
		return c, fmt.Errorf("lifecycle: %w", err)
	}
	if c.replay, err = parseReplayFlags(modeArgs["replay"], stderr); err != nil {
		return c, fmt.Errorf("replay: %w", err)
	}
	return c, nil
}

// runAll is the all mode.
func runAll(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseAllFlags(args, stderr)
	if err != nil {
		return err
	}
	rep := allReport{StartedAt: time.Now().UTC(), Command: commandLine(args)}
	if rep.Host, err = describeHost(ctx, cfg.append.databaseURL, cfg.append.natsURL, cfg.out); err != nil {
		return err
	}
	var failed []error
	note := func(err error) {
		if err != nil {
			failed = append(failed, err)
		}
	}
	rep.Append, err = runMode(ctx, "append", stdout, stderr, printTable,
		func() (*report, error) { return measureAppend(ctx, cfg.append, stderr) })
	note(err)
	rep.Payments, err = runMode(ctx, "payments", stdout, stderr, printPaymentsTable,
		func() (*paymentsReport, error) { return measurePayments(ctx, cfg.payments, stderr) })
	note(err)
	rep.Lifecycle, err = runMode(ctx, "lifecycle", stdout, stderr, printLifecycleTable,
		func() (*lifecycleReport, error) { return measureLifecycle(ctx, cfg.lifecycle, stderr) })
	note(err)
	rep.Replay, err = runMode(ctx, "replay", stdout, stderr, printReplay,
		func() (*replayReport, error) { return measureReplay(ctx, cfg.replay, stderr) })
	note(err)
	// An interrupted run would replace the committed report with a partial one.
	if ctx.Err() != nil {
		return errors.Join(append(failed, ctx.Err())...)
	}
	rep.Seconds = time.Since(rep.StartedAt).Seconds()

	if err := benchkit.WriteJSON(cfg.jsonOut, rep); err != nil {
		return errors.Join(append(failed, err)...)
	}
	if err := os.MkdirAll(filepath.Dir(cfg.out), 0o755); err != nil {
		return errors.Join(append(failed, err)...)
	}
	if err := os.WriteFile(cfg.out, []byte(renderMarkdown(rep)), 0o644); err != nil {
		return errors.Join(append(failed, fmt.Errorf("write report: %w", err))...)
	}
	fmt.Fprintf(stdout, "\nall: %s in %s; reports written to %s and %s\n",
		rep.verdict(), formatSeconds(rep.Seconds), cfg.out, cfg.jsonOut)
	return errors.Join(failed...)
}

// runMode runs one mode's measuring and prints its table. A failed mode
// is recorded with its error, and the run goes on: the modes are
// independent, and a long run should still report the others. After an
// interrupt it does not start.
func runMode[R any](ctx context.Context, name string, stdout, stderr io.Writer,
	print func(io.Writer, R), measure func() (*R, error)) (modeResult[R], error) {
	if ctx.Err() != nil {
		return modeResult[R]{Error: "not run: interrupted"}, nil
	}
	fmt.Fprintf(stderr, "ledgerbench all: %s\n", name)
	start := time.Now()
	r, err := measure()
	res := modeResult[R]{Report: r, Seconds: time.Since(start).Seconds()}
	if r != nil {
		print(stdout, *r)
		fmt.Fprintln(stdout)
	}
	if err != nil {
		res.Error = err.Error()
		return res, fmt.Errorf("%s: %w", name, err)
	}
	return res, nil
}

// commandLine is the command that reproduces the run, as docs/benchmarking.md
// gives it: the arguments as given, quoted for a POSIX shell where they need it.
func commandLine(args []string) string {
	words := []string{"go", "run", "./cmd/ledgerbench", "all"}
	for _, a := range args {
		if a == "" || strings.ContainsFunc(a, func(r rune) bool { return !isShellSafe(r) }) {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		words = append(words, a)
	}
	return strings.Join(words, " ")
}

func isShellSafe(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_=.,/:@%+", r)
}
