package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/projections"
)

// depositsImport records the credits of a bank's camt.054 or camt.053
// file: each entry once, however often the file (or a statement repeating
// it) is imported.
func depositsImport(ctx context.Context, db *database, args []string, stdout io.Writer) error {
	if len(args) != 1 || strings.HasPrefix(args[0], "-") {
		return errors.New("usage: ledgerctl deposits import FILE")
	}
	f, err := os.Open(args[0])
	if err != nil {
		return err
	}
	defer f.Close()
	if err := db.open(ctx); err != nil {
		return err
	}
	rep, err := db.ledger.ImportCamt(ctx, f, operator)
	if err != nil {
		// What was recorded before the error stays recorded; importing the
		// file again finishes the rest.
		_ = printJSON(stdout, rep)
		return fmt.Errorf("import %s: %w", args[0], err)
	}
	return printJSON(stdout, rep)
}

// unmatchedList prints the unmatched-funds queue (open items unless
// --status says otherwise) and its total per currency.
func unmatchedList(ctx context.Context, db *database, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("unmatched list", flag.ContinueOnError)
	status := fs.String("status", domain.UnmatchedOpen, "open, assigned, returning, returned, or all")
	asJSON := fs.Bool("json", false, "print the items as JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch *status {
	case "all":
		*status = ""
	case domain.UnmatchedOpen, domain.UnmatchedAssigned, domain.UnmatchedReturning, domain.UnmatchedReturned:
	default:
		return fmt.Errorf("--status must be open, assigned, returning, returned or all, not %q", *status)
	}
	if err := db.open(ctx); err != nil {
		return err
	}
	items, err := db.ledger.ListUnmatched(ctx, *status)
	if err != nil {
		return err
	}
	if *asJSON {
		out := make([]domain.UnmatchedFunds, len(items))
		for i, u := range items {
			out[i] = u.UnmatchedFunds
		}
		return printJSON(stdout, out)
	}
	return printUnmatched(stdout, items)
}

func printUnmatched(w io.Writer, items []projections.UnmatchedSnapshot) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATUS\tREASON\tAMOUNT\tENTRY\tREFERENCES\tPAYER ACCOUNT\tPAYMENT\tRECEIVED")
	var totals currencyTotals
	for _, u := range items {
		payment := "-"
		if u.PaymentID != nil {
			payment = u.PaymentID.String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", u.ID, u.Status, u.Reason, domain.FormatAmount(u.Amount, u.Currency),
			u.Entry.EntryRef, strings.Join(u.References, " "), orDash(u.DebtorAccount), payment, u.ReceivedAt.Format(domain.TimeFormat))
		totals.add(u.Amount, u.Currency)
	}
	totals.print(tw, 3)
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// unmatchedAssign gives an open item to a payment, which proceeds as if
// the credit had quoted its reference.
func unmatchedAssign(ctx context.Context, db *database, args []string, stdout io.Writer) error {
	id, rest, err := leadingID(args, "an unmatched funds id", "usage: ledgerctl unmatched assign ID --payment PAYMENT_ID [--by NAME]")
	if err != nil {
		return err
	}
	fs := flag.NewFlagSet("unmatched assign", flag.ContinueOnError)
	payment := fs.String("payment", "", "the payment to give the funds to")
	by := fs.String("by", db.getenv("USER"), "the operator's name, recorded on the event")
	if err := fs.Parse(rest); err != nil {
		return err
	}
	paymentID, err := uuid.Parse(*payment)
	if err != nil {
		return errors.New("--payment must be a payment id (UUID)")
	}
	actor, err := operatorName(*by)
	if err != nil {
		return err
	}
	if err := db.open(ctx); err != nil {
		return err
	}
	res, err := db.ledger.AssignUnmatched(ctx, id, paymentID, actor, domain.Metadata{Actor: actor})
	if err != nil {
		return fmt.Errorf("assign %s: %w", id, err)
	}
	return printJSON(stdout, res)
}

// unmatchedReturn marks an open item for return to the payer's account as
// the bank reported it.
func unmatchedReturn(ctx context.Context, db *database, args []string, stdout io.Writer) error {
	id, rest, err := leadingID(args, "an unmatched funds id", "usage: ledgerctl unmatched return ID [--by NAME]")
	if err != nil {
		return err
	}
	fs := flag.NewFlagSet("unmatched return", flag.ContinueOnError)
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
	u, err := db.ledger.ReturnUnmatched(ctx, id, actor, domain.Metadata{Actor: actor})
	if err != nil {
		return fmt.Errorf("return %s: %w", id, err)
	}
	return printJSON(stdout, u)
}

// leadingID reads the id (what: "a payment id") that comes first in args,
// before the flags, and returns the rest.
func leadingID(args []string, what, usage string) (uuid.UUID, []string, error) {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return uuid.Nil, nil, errors.New(usage)
	}
	id, err := uuid.Parse(args[0])
	if err != nil {
		return uuid.Nil, nil, fmt.Errorf("%q is not %s (UUID)\n%s", args[0], what, usage)
	}
	return id, args[1:], nil
}

// currencyTotals sums amounts per currency, in the order the currencies
// first came.
type currencyTotals struct {
	sums  map[string]decimal.Decimal
	order []string
}

func (c *currencyTotals) add(amount decimal.Decimal, currency string) {
	if c.sums == nil {
		c.sums = map[string]decimal.Decimal{}
	}
	if _, ok := c.sums[currency]; !ok {
		c.order = append(c.order, currency)
	}
	c.sums[currency] = c.sums[currency].Add(amount)
}

// print writes a "total" line per currency, its amount in column col.
func (c *currencyTotals) print(w io.Writer, col int) {
	for _, cur := range c.order {
		fmt.Fprintf(w, "total%s%s\n", strings.Repeat("\t", col), domain.FormatAmount(c.sums[cur], cur))
	}
}

// operatorName is the actor of a resolution: who decided where the money
// goes, as events record it.
func operatorName(by string) (string, error) {
	if strings.TrimSpace(by) == "" {
		return "", errors.New("--by must name the operator (default: $USER)")
	}
	return "operator:" + strings.TrimSpace(by), nil
}
