package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/domain"
)

// queuedChange is one change refund waiting for an operator, as change
// list prints it.
type queuedChange struct {
	PaymentID uuid.UUID       `json:"paymentId"`
	TenantID  uuid.UUID       `json:"tenantId"`
	Amount    decimal.Decimal `json:"amount"` // in Currency, the payment's deposit currency
	Currency  string          `json:"currency"`
	Sats      int64           `json:"changeRefundAmount"`
	Funding   string          `json:"funding"`
	Payer     *domain.Payer   `json:"payer"`
	Reason    string          `json:"reason"`
	QueuedAt  string          `json:"queuedAt"`
}

// changeList lists the change refunds no rail could pay, beside the
// unmatched-funds queue, with their total per currency.
func changeList(ctx context.Context, db *database, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("change list", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print the refunds as JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("change list takes no arguments, got %q", fs.Args())
	}
	if err := db.open(ctx); err != nil {
		return err
	}
	payments, err := db.ledger.QueuedChangeRefunds(ctx)
	if err != nil {
		return err
	}
	items := make([]queuedChange, 0, len(payments))
	for _, p := range payments {
		q := queuedChange{PaymentID: p.ID, TenantID: p.TenantID, Amount: p.ChangeOwed(), Currency: p.DepositCurrency,
			Funding: p.Funding, Payer: p.Payer, QueuedAt: p.Payment.UpdatedAt.Format(domain.TimeFormat)}
		if p.ChangeRefundSats != nil {
			q.Sats = *p.ChangeRefundSats
		}
		if p.ChangeRefund != nil {
			q.Reason = p.ChangeRefund.Reason
		}
		items = append(items, q)
	}
	if *asJSON {
		return printJSON(stdout, items)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PAYMENT\tAMOUNT\tFUNDING\tPAYER\tREASON\tTENANT\tQUEUED")
	var totals currencyTotals
	for _, q := range items {
		payer := "-"
		if q.Payer != nil {
			payer = strings.TrimSpace(q.Payer.PhoneNumber + " " + q.Payer.Account + " " + q.Payer.BankName)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", q.PaymentID, domain.FormatAmount(q.Amount, q.Currency), q.Funding, payer,
			q.Reason, q.TenantID, q.QueuedAt)
		totals.add(q.Amount, q.Currency)
	}
	totals.print(tw, 1)
	return tw.Flush()
}

const changePaidUsage = "usage: ledgerctl change paid PAYMENT_ID --reference REF [--by NAME]"

// changePaid records a queued change refund as paid by hand: the operator
// sent the change back to the payer and names the transfer's reference.
func changePaid(ctx context.Context, db *database, args []string, stdout io.Writer) error {
	paymentID, rest, err := leadingID(args, "a payment id", changePaidUsage)
	if err != nil {
		return err
	}
	fs := flag.NewFlagSet("change paid", flag.ContinueOnError)
	reference := fs.String("reference", "", "the reference of the transfer that paid the change back")
	by := fs.String("by", db.getenv("USER"), "the operator's name, recorded on the event")
	if err := fs.Parse(rest); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return errors.New(changePaidUsage)
	}
	actor, err := operatorName(*by)
	if err != nil {
		return err
	}
	if err := db.open(ctx); err != nil {
		return err
	}
	p, err := db.ledger.ResolveChangeRefund(ctx, paymentID, domain.ResolveChangeRefund{Reference: *reference, By: actor},
		domain.Metadata{Actor: actor})
	if err != nil {
		return fmt.Errorf("payment %s: %w", paymentID, err)
	}
	return printJSON(stdout, struct {
		PaymentID          uuid.UUID           `json:"paymentId"`
		ChangeRefundStatus string              `json:"changeRefundStatus"`
		ChangeRefund       *domain.PayerRefund `json:"changeRefund"`
	}{p.ID, p.ChangeRefundStatus, p.ChangeRefund})
}
