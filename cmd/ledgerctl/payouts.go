package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore"
	"github.com/ledger/ledger/workers/rails/mpesa"
	"github.com/ledger/ledger/workers/rails/payout"
	"github.com/ledger/ledger/workers/rails/paystack"
)

// payoutProvider is a payout rail's books as an operator works them.
type payoutProvider struct {
	migrations eventstore.MigrationSet
	stuck      func(ctx context.Context, db *pgxpool.Pool, before time.Time) ([]payout.Stuck, error)
	find       func(ctx context.Context, db *pgxpool.Pool, paymentID uuid.UUID) (payout.Stuck, bool, error)
	resolve    func(ctx context.Context, db *pgxpool.Pool, paymentID uuid.UUID, r payout.Resolution) (payout.Stuck, error)
}

// payoutProviders are the rails whose provider can leave a payout without
// an outcome; the component names are ledgerd's.
var payoutProviders = []payoutProvider{
	{eventstore.MigrationSet{Component: "mpesa", FS: mpesa.Migrations}, mpesa.Payouts.Stuck, mpesa.Payouts.Find, mpesa.Payouts.Resolve},
	{eventstore.MigrationSet{Component: "paystack-payouts", FS: paystack.Migrations}, paystack.Transfers.Stuck, paystack.Transfers.Find, paystack.Transfers.Resolve},
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
// them, oldest first.
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
		stuck, err := p.stuck(ctx, db.pool, time.Now().Add(-*older))
		if err != nil {
			return err
		}
		all = append(all, stuck...)
	}
	if *asJSON {
		return printJSON(stdout, all)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PAYMENT\tPROVIDER\tAMOUNT\tACKNOWLEDGED\tPROVIDER ID\tTENANT\tASKED")
	for _, s := range all {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%t\t%s\t%s\t%s\n", s.PaymentID, s.Provider, domain.FormatAmount(s.Amount, s.Currency),
			s.Acknowledged, orDash(s.ProviderID), s.TenantID, s.AskedAt.UTC().Format(domain.TimeFormat))
	}
	return tw.Flush()
}

// payoutResolution is what payouts resolve did.
type payoutResolution struct {
	Payout  payout.Stuck `json:"payout"`
	Payment struct {
		ID        uuid.UUID `json:"id"`
		Status    string    `json:"status"`
		StatusLog string    `json:"statusLog"`
	} `json:"payment"`
}

const payoutsResolveUsage = "usage: ledgerctl payouts resolve PAYMENT_ID (--paid RECEIPT | --failed REASON) [--by NAME]"

// payoutsResolve ends a transferring payment whose payout its provider
// cannot account for, as the operator found it on the provider's own
// statement. The outcome is recorded on the rail's books first, so that a
// result the provider sends later is compared with it, then on the
// payment; run again after a failure, it finishes what is left.
func payoutsResolve(ctx context.Context, db *database, args []string, stdout io.Writer) error {
	paymentID, rest, err := leadingID(args, "a payment id", payoutsResolveUsage)
	if err != nil {
		return err
	}
	fs := flag.NewFlagSet("payouts resolve", flag.ContinueOnError)
	paid := fs.String("paid", "", "the provider's receipt of the payout it made (M-Pesa's TransactionReceipt, Paystack's transfer code)")
	failed := fs.String("failed", "", "why the payout was not made: the payment fails and its money is owed back")
	by := fs.String("by", db.getenv("USER"), "the operator's name, recorded on the event")
	if err := fs.Parse(rest); err != nil {
		return err
	}
	if (*paid == "") == (*failed == "") || fs.NArg() != 0 {
		return errors.New(payoutsResolveUsage)
	}
	actor, err := operatorName(*by)
	if err != nil {
		return err
	}
	if err := openPayouts(ctx, db); err != nil {
		return err
	}
	var res payoutResolution
	var rail *payoutProvider
	for i := range payoutProviders {
		s, found, err := payoutProviders[i].find(ctx, db.pool, paymentID)
		if err != nil {
			return err
		}
		if found {
			res.Payout, rail = s, &payoutProviders[i]
			break
		}
	}
	if rail == nil {
		return fmt.Errorf("payment %s: %w", paymentID, payout.ErrNotStuck)
	}
	cmd := domain.ResolvePayout{Paid: *paid != "", Receipt: *paid, Reason: *failed, By: actor, Now: time.Now()}
	p, err := db.ledger.Payment(ctx, res.Payout.TenantID, paymentID)
	if err != nil {
		return fmt.Errorf("payment %s: %w", paymentID, err)
	}
	// Decided once before the rail's books change, so that a refusal
	// (the payment ended meanwhile) leaves them as they were.
	if _, err := domain.DecideResolvePayout(p.Payment, cmd); err != nil {
		return fmt.Errorf("payment %s: %w", paymentID, err)
	}
	if res.Payout, err = rail.resolve(ctx, db.pool, paymentID, payout.Resolution{Paid: cmd.Paid, Receipt: strings.TrimSpace(*paid),
		Reason: strings.TrimSpace(*failed)}); err != nil {
		return err
	}
	ref := domain.StreamRef{TenantID: res.Payout.TenantID, Type: "payment", ID: paymentID}
	p, err = db.ledger.ResolvePayout(ctx, ref, cmd, domain.Metadata{Actor: actor})
	if err != nil {
		return fmt.Errorf("payment %s: the payout's outcome is recorded at the rail, not yet on the payment (run the command again): %w",
			paymentID, err)
	}
	res.Payment.ID, res.Payment.Status, res.Payment.StatusLog = p.Payment.ID, p.Payment.Status, p.Payment.StatusLog
	return printJSON(stdout, res)
}
