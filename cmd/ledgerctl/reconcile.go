package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ledger/ledger/cmd/internal/reconsources"
	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore"
	"github.com/ledger/ledger/workers/rails/payout"
	"github.com/ledger/ledger/workers/reconcile"
)

// reconcileRun reconciles one rail over a window: its provider's records
// and balances against the ledger's, printed as a JSON report; every
// difference is recorded as a break (once, however often the window is
// run again).
func reconcileRun(ctx context.Context, db *database, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("reconcile", flag.ContinueOnError)
	rail := fs.String("rail", "", "the ledger's rail: "+strings.Join(reconsources.Rails, ", "))
	from := fs.String("from", "", "the window's start, RFC 3339 (2026-11-28T00:00:00Z)")
	to := fs.String("to", "", "the window's end, RFC 3339, excluded")
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
	if *rail == "" {
		return errors.New("usage: ledgerctl reconcile --rail RAIL --from T1 --to T2")
	}
	if err := db.open(ctx); err != nil {
		return err
	}
	// The sandbox rail's books are ledgerd's schema; ledgerctl may run first.
	if err := eventstore.Migrate(ctx, db.pool, eventstore.MigrationSet{Component: "sandbox-payouts", FS: payout.Migrations}); err != nil {
		return err
	}
	sources, err := reconsources.Sources(db.getenv("LEDGER_MODE"), db.getenv, db.pool)
	if err != nil {
		return err
	}
	r := reconcile.Reconciler{Sources: sources, Ledger: reconcile.NewLedger(db.pool), Breaks: db.ledger, Now: time.Now}
	rep, err := r.Run(ctx, *rail, start, end, operator)
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
