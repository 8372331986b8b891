package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/ledger/ledger/projections/rebuild"
)

// rebuildResult is what `projections rebuild --json` prints.
type rebuildResult struct {
	ReadModels      []string         `json:"readModels"`
	Rows            map[string]int64 `json:"rows"`
	Events          int64            `json:"events"`
	EventsPerSecond float64          `json:"eventsPerSecond"`
	CatchUpEvents   int64            `json:"catchUpEvents"` // appended during the rebuild, replayed after the bulk
	LockedEvents    int64            `json:"lockedEvents"`  // replayed while the live tables were locked
	LockHeldMs      float64          `json:"lockHeldMs"`
	SwapAttempts    int              `json:"swapAttempts"`
	ReplaySeconds   float64          `json:"replaySeconds"`
	FinishSeconds   float64          `json:"finishSeconds"`
	Seconds         float64          `json:"seconds"`
}

// projectionsRebuild is `ledgerctl projections rebuild [NAME]`: the read
// models are replayed from the events into shadow tables and swapped in
// with a lock of a few milliseconds (rebuild.Run). Progress goes to
// stderr, the result to stdout.
func projectionsRebuild(ctx context.Context, db *database, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("projections rebuild", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print the result as JSON")
	name := "all"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") { // the name may come before the flags
		name, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch rest := fs.Args(); {
	case len(rest) == 1 && name == "all":
		name = rest[0]
	case len(rest) > 0:
		return fmt.Errorf("usage: ledgerctl projections rebuild [NAME] [--json]; NAME is one of %s",
			strings.Join(rebuild.GroupNames(), ", "))
	}
	if !slices.Contains(rebuild.GroupNames(), name) {
		return fmt.Errorf("unknown read model %q: one of %s", name, strings.Join(rebuild.GroupNames(), ", "))
	}
	defer rebuild.WithGC()()
	if err := db.open(ctx); err != nil {
		return err
	}
	stats, err := rebuild.RunWith(ctx, db.pool, name, rebuild.Options{
		Progress: func(p rebuild.Progress) {
			fmt.Fprintf(os.Stderr, "rebuild: %-8s %10d events  %6.1fs\n", p.Phase, p.Events, p.Elapsed.Seconds())
		}})
	if err != nil {
		return err
	}
	res := rebuildResult{ReadModels: stats.Groups, Rows: stats.Tables, Events: stats.Events,
		EventsPerSecond: stats.EventsPerSecond(), CatchUpEvents: stats.CatchUp, LockedEvents: stats.Locked,
		LockHeldMs: float64(stats.LockHeld.Microseconds()) / 1000, SwapAttempts: stats.SwapAttempts,
		ReplaySeconds: stats.Replay.Seconds(), FinishSeconds: stats.Finish.Seconds(), Seconds: stats.Total.Seconds()}
	if *asJSON {
		return printJSON(stdout, res)
	}
	return printRebuild(stdout, res)
}

// printRebuild writes the result for a person.
func printRebuild(w io.Writer, r rebuildResult) error {
	var b strings.Builder
	fmt.Fprintf(&b, "rebuilt %s: %d events in %s (%.0f events/s)\n", strings.Join(r.ReadModels, ", "), r.Events,
		time.Duration(r.Seconds*float64(time.Second)).Round(time.Millisecond), r.EventsPerSecond)
	fmt.Fprintf(&b, "  replay %.1fs, indexes and keys %.1fs; %d events appended meanwhile, %d of them under the lock (held %.1f ms, attempt %d)\n",
		r.ReplaySeconds, r.FinishSeconds, r.CatchUpEvents+r.LockedEvents, r.LockedEvents, r.LockHeldMs, r.SwapAttempts)
	tables := make([]string, 0, len(r.Rows))
	for t := range r.Rows {
		tables = append(tables, t)
	}
	slices.Sort(tables)
	for _, t := range tables {
		fmt.Fprintf(&b, "  %-20s %10d rows\n", t, r.Rows[t])
	}
	_, err := io.WriteString(w, b.String())
	return err
}
