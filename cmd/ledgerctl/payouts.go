package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore"
	"github.com/ledger/ledger/workers/rails/mpesa"
	"github.com/ledger/ledger/workers/rails/payout"
	"github.com/ledger/ledger/workers/rails/paystack"
)

// payoutProvider is a payout rail's books as an operator works them.
type payoutProvider struct {
	migrations eventstore.MigrationSet
	payouts    payout.Table
}

// payoutProviders are the rails whose provider can leave a payout (or a
// refund, a payout under its own key) without an outcome; the component
// names are ledgerd's.
var payoutProviders = []payoutProvider{
	{eventstore.MigrationSet{Component: "mpesa", FS: mpesa.Migrations}, mpesa.Payouts},
	{eventstore.MigrationSet{Component: "paystack-payouts", FS: paystack.Migrations}, paystack.Transfers},
}

// openPayouts opens the database with the payout rails' schemas, which
// only ledgerd applies otherwise.
func openPayouts(ctx context.Context, db *database) error {
	if err := db.open(ctx); err != nil {
		return err
	}
	for _, p := range payoutProviders {
		if err := eventstore.Migrate(ctx, db.pool, p.migrations); err != nil {
			return err
		}
	}
	return nil
}

// payoutsStuck lists the payouts asked of a provider that has not ended
// them, oldest first, by the key payouts resolve takes: the payment id, or
// a refund's own key.
func payoutsStuck(ctx context.Context, db *database, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("payouts stuck", flag.ContinueOnError)
	older := fs.Duration("older", 15*time.Minute, "only payouts asked for at least this long ago")
	asJSON := fs.Bool("json", false, "print the payouts as JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("payouts stuck takes no arguments, got %q", fs.Args())
	}
	if err := openPayouts(ctx, db); err != nil {
		return err
	}
	all := []payout.Stuck{}
	for _, p := range payoutProviders {
		stuck, err := p.payouts.Stuck(ctx, db.pool, time.Now().Add(-*older))
		if err != nil {
			return err
		}
		all = append(all, stuck...)
	}
	if *asJSON {
		return printJSON(stdout, all)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tPROVIDER\tAMOUNT\tACKNOWLEDGED\tPROVIDER ID\tTENANT\tASKED")
	for _, s := range all {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%t\t%s\t%s\t%s\n", s.Reference, s.Provider, domain.FormatAmount(s.Amount, s.Currency),
			s.Acknowledged, orDash(s.ProviderID), s.TenantID, s.AskedAt.UTC().Format(domain.TimeFormat))
	}
	return tw.Flush()
}
