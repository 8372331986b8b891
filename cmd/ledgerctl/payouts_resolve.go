package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/workers/rails/payout"
)

// payoutResolution is what payouts resolve did: the rail's row, and the
// payment or unmatched funds the outcome ended.
type payoutResolution struct {
	Payout         payout.Stuck           `json:"payout"`
	Payment        *resolvedPayment       `json:"payment,omitempty"`
	UnmatchedFunds *domain.UnmatchedFunds `json:"unmatchedFunds,omitempty"`
}

// resolvedPayment is a payment as a resolution left it.
type resolvedPayment struct {
	ID                 uuid.UUID           `json:"id"`
	Status             string              `json:"status"`
	StatusLog          string              `json:"statusLog"`
	ChangeRefundStatus string              `json:"changeRefundStatus,omitempty"` // a change refund's resolution
	ChangeRefund       *domain.PayerRefund `json:"changeRefund,omitempty"`
}

// stuckItem is what a stuck payout's key names (a payment's payout, its
// change refund, the return of unmatched funds) and how an operator's
// outcome ends it there.
type stuckItem struct {
	noun string                 // what the outcome ends
	key  func(uuid.UUID) string // the rails' idempotency key of the item with that id
	// decide decides the outcome on the item as it is, changing nothing.
	decide func(ctx context.Context, db *database, row payout.Stuck, id uuid.UUID, c domain.ResolvePayout) error
	// record ends the item with the outcome.
	record func(ctx context.Context, db *database, row payout.Stuck, id uuid.UUID, c domain.ResolvePayout, meta domain.Metadata) (payoutResolution, error)
}

var stuckItems = []stuckItem{
	{noun: "payment", key: uuid.UUID.String, decide: decidedOnPayment(domain.DecideResolvePayout),
		record: func(ctx context.Context, db *database, row payout.Stuck, id uuid.UUID, c domain.ResolvePayout, meta domain.Metadata) (payoutResolution, error) {
			p, err := db.ledger.ResolvePayout(ctx, domain.StreamRef{TenantID: row.TenantID, Type: "payment", ID: id}, c, meta)
			return payoutResolution{Payment: &resolvedPayment{ID: p.ID, Status: p.Status, StatusLog: p.StatusLog}}, err
		}},
	{noun: "payment's change refund", key: domain.ChangeRefundKey, decide: decidedOnPayment(domain.DecideResolveChangeRefundPayout),
		record: func(ctx context.Context, db *database, row payout.Stuck, id uuid.UUID, c domain.ResolvePayout, meta domain.Metadata) (payoutResolution, error) {
			p, err := db.ledger.ResolveChangeRefundPayout(ctx, domain.StreamRef{TenantID: row.TenantID, Type: "payment", ID: id}, c, meta)
			return payoutResolution{Payment: &resolvedPayment{ID: p.ID, Status: p.Status, StatusLog: p.StatusLog,
				ChangeRefundStatus: p.ChangeRefundStatus, ChangeRefund: p.ChangeRefund}}, err
		}},
	{noun: "unmatched funds' return", key: domain.ReturnKey,
		decide: func(ctx context.Context, db *database, _ payout.Stuck, id uuid.UUID, c domain.ResolvePayout) error {
			u, err := db.ledger.Unmatched(ctx, id)
			if err == nil {
				_, err = domain.DecideResolveReturnPayout(u.UnmatchedFunds, c)
			}
			return err
		},
		record: func(ctx context.Context, db *database, _ payout.Stuck, id uuid.UUID, c domain.ResolvePayout, meta domain.Metadata) (payoutResolution, error) {
			u, err := db.ledger.ResolveReturnPayout(ctx, id, c, meta)
			return payoutResolution{UnmatchedFunds: &u}, err
		}},
}

// decidedOnPayment is a stuckItem's decide for an item of a payment: decide
// on the payment as it is.
func decidedOnPayment(decide func(domain.Payment, domain.ResolvePayout) ([]domain.Event, error)) func(context.Context, *database,
	payout.Stuck, uuid.UUID, domain.ResolvePayout) error {
	return func(ctx context.Context, db *database, row payout.Stuck, id uuid.UUID, c domain.ResolvePayout) error {
		p, err := db.ledger.Payment(ctx, row.TenantID, id)
		if err == nil {
			_, err = decide(p.Payment, c)
		}
		return err
	}
}

const payoutsResolveUsage = "usage: ledgerctl payouts resolve KEY (--paid RECEIPT | --failed REASON) [--by NAME]\n" +
	"KEY is what payouts stuck lists: a payment id (its payout), change-PAYMENT_ID (its change refund) or return-UNMATCHED_ID (a return)"

// stuckItemOf is the item key names, and its id.
func stuckItemOf(args []string) (stuckItem, uuid.UUID, []string, error) {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return stuckItem{}, uuid.Nil, nil, errors.New(payoutsResolveUsage)
	}
	key := strings.ToLower(args[0])
	if len(key) >= 36 {
		if id, err := uuid.Parse(key[len(key)-36:]); err == nil {
			for _, it := range stuckItems {
				if it.key(id) == key {
					return it, id, args[1:], nil
				}
			}
		}
	}
	return stuckItem{}, uuid.Nil, nil, fmt.Errorf("%q is not a payout's key\n%s", args[0], payoutsResolveUsage)
}

// payoutsResolve ends a payout its provider cannot account for (a
// transferring payment's, or a refund's: a payment's change, returned
// unmatched funds), as the operator found it on the provider's own
// statement. The outcome is decided on the payment or the funds first, so
// that a refusal leaves every book as it was; then recorded on the rail's
// books, so that a result the provider sends later is compared with it;
// then on the payment or funds. Run again after a failure, it finishes
// what is left.
func payoutsResolve(ctx context.Context, db *database, args []string, stdout io.Writer) error {
	item, id, rest, err := stuckItemOf(args)
	if err != nil {
		return err
	}
	key := item.key(id)
	fs := flag.NewFlagSet("payouts resolve", flag.ContinueOnError)
	paid := fs.String("paid", "", "the provider's receipt of the payout it made (M-Pesa's TransactionReceipt, Paystack's transfer code)")
	failed := fs.String("failed", "", "why the payout was not made: a payment fails and its money is owed back; a refund waits for an operator")
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
	row, rail, err := findPayout(ctx, db, key)
	if err != nil {
		return err
	}
	cmd := domain.ResolvePayout{Paid: *paid != "", Receipt: *paid, Reason: *failed, By: actor, Now: time.Now()}
	if err := item.decide(ctx, db, row, id, cmd); err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	if row, err = rail.Resolve(ctx, db.pool, key, payout.Resolution{Paid: cmd.Paid, Receipt: strings.TrimSpace(*paid),
		Reason: strings.TrimSpace(*failed)}); err != nil {
		return err
	}
	res, err := item.record(ctx, db, row, id, cmd, domain.Metadata{Actor: actor})
	if err != nil {
		return fmt.Errorf("%s: the payout's outcome is recorded at the rail, not yet on the %s (run the command again): %w",
			key, item.noun, err)
	}
	res.Payout = row
	return printJSON(stdout, res)
}

// findPayout is the payout under key, of whichever rail holds it.
func findPayout(ctx context.Context, db *database, key string) (payout.Stuck, payout.Table, error) {
	for _, p := range payoutProviders {
		s, found, err := p.payouts.Find(ctx, db.pool, key)
		if err != nil || found {
			return s, p.payouts, err
		}
	}
	return payout.Stuck{}, payout.Table{}, fmt.Errorf("%s: %w", key, payout.ErrNotStuck)
}
