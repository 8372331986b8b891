package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore"
	"github.com/ledger/ledger/workers/reconcile"
)

// reconcileRun asks ledgerd (which holds the providers' clients) to
// reconcile one rail over a window, waits for its report and prints it as
// JSON: the provider's records and balances against the ledger's, every
// difference recorded as a break (once, however often the window is run).
func reconcileRun(ctx context.Context, db *database, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("reconcile", flag.ContinueOnError)
	rail := fs.String("rail", "", "the ledger's rail: LIGHTNING, BANK_TRANSFER, MOMO, USDT or BANK")
	from := fs.String("from", "", "the window's start, RFC 3339 (2026-11-28T00:00:00Z)")
	to := fs.String("to", "", "the window's end, RFC 3339, excluded")
	wait := fs.Duration("wait", 10*time.Minute, "how long to wait for a ledgerd to run it")
	by := fs.String("by", db.getenv("USER"), "the operator's name, recorded on the breaks found")
	if err := fs.Parse(args); err != nil {
		return err
	}
	start, err := time.Parse(time.RFC3339, *from)
	if err != nil {
		return fmt.Errorf("--from: %w", err)
	}
	end, err := time.Parse(time.RFC3339, *to)
	if err != nil {
		return fmt.Errorf("--to: %w", err)
	}
	if *rail == "" || !start.Before(end) {
		return errors.New("usage: ledgerctl reconcile --rail RAIL --from T1 --to T2 (T1 before T2)")
	}
	actor, err := operatorName(*by)
	if err != nil {
		return err
	}
	if err := db.open(ctx); err != nil {
		return err
	}
	if err := eventstore.Migrate(ctx, db.pool, eventstore.MigrationSet{Component: "reconciliation", FS: reconcile.Migrations}); err != nil {
		return err
	}
	id, err := reconcile.Ask(ctx, db.pool, *rail, start, end, actor)
	if err != nil {
		return err
	}
	waitCtx, cancel := context.WithTimeout(ctx, *wait)
	defer cancel()
	rep, err := reconcile.Await(waitCtx, db.pool, id, 100*time.Millisecond)
	if err != nil {
		return err
	}
	return printJSON(stdout, rep)
}

// reconcileBreaks lists the reconciliation breaks, oldest first, as JSON.
func reconcileBreaks(ctx context.Context, db *database, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("reconcile breaks", flag.ContinueOnError)
	open := fs.Bool("open", false, "only the open breaks")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := db.open(ctx); err != nil {
		return err
	}
	status := ""
	if *open {
		status = domain.BreakOpen
	}
	breaks, err := db.ledger.ListBreaks(ctx, status)
	if err != nil {
		return err
	}
	if breaks == nil {
		breaks = []domain.Break{}
	}
	return printJSON(stdout, breaks)
}

// reconcileResolve closes an open break with the operator's reason.
func reconcileResolve(ctx context.Context, db *database, args []string, stdout io.Writer) error {
	id, rest, err := leadingID(args, "a break id", "usage: ledgerctl reconcile resolve BREAK_ID --reason TEXT [--by NAME]")
	if err != nil {
		return err
	}
	fs := flag.NewFlagSet("reconcile resolve", flag.ContinueOnError)
	reason := fs.String("reason", "", "why the break is resolved: what was found and done")
	by := fs.String("by", db.getenv("USER"), "the operator's name, recorded on the event")
	if err := fs.Parse(rest); err != nil {
		return err
	}
	actor, err := operatorName(*by)
	if err != nil {
		return err
	}
	if err := db.open(ctx); err != nil {
		return err
	}
	b, err := db.ledger.ResolveBreak(ctx, id, *reason, actor, domain.Metadata{Actor: actor})
	if err != nil {
		return fmt.Errorf("resolve %s: %w", id, err)
	}
	return printJSON(stdout, b)
}
