// Package payout is the payout rail: how a transferring payment's money
// reaches its recipient (bank transfer, mobile money, Lightning). The
// service calls a Rail with the payment id as idempotency key, like a
// bank's API; the sandbox rail and the Lightning rail keep their books in
// Postgres.
package payout

import (
	"context"
	"embed"
	"errors"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
)

// Migrations is the payout rails' schema (numbered SQL files under
// migrations/): the sandbox rail's books, then the Lightning rail's. ledgerd
// applies them as the "sandbox-payouts" component, its first name; renaming
// the component would apply them again.
//
//go:embed migrations/*.sql
var Migrations embed.FS

// Request is one payout.
type Request struct {
	PaymentID      uuid.UUID
	TenantID       uuid.UUID // whose payment: a rail that learns outcomes later reports them by tenant and payment
	IdempotencyKey string    // the same key is never paid twice
	Refund         bool      // money paid back to a payer (a payment's change, returned unmatched funds: PaymentID is the item's), not a payout
	Rail           string    // BANK, MOMO or LIGHTNING
	Amount         decimal.Decimal
	Currency       string // ZAR, KES, NGN, or BTC (Amount in sats)
	Name           string // the recipient's name, as the merchant gave it
	BankName       string
	AccountNumber  string
	PhoneNumber    string
	LNURL          string
}

// Purpose is what r pays, as a provider's remarks show it: "Payment <id>",
// or "Refund <id>".
func (r Request) Purpose() string {
	if r.Refund {
		return "Refund " + r.PaymentID.String()
	}
	return "Payment " + r.PaymentID.String()
}

// Outcome is the rail's answer: completed, or rejected with a reason
// (final: retrying the same key answers the same).
type Outcome struct {
	PayoutID string
	Rejected bool
	Reason   string
}

// Rail pays out. An error is a failure to get an answer (retry with the
// same key); a rejection is an Outcome.
type Rail interface {
	Payout(ctx context.Context, r Request) (Outcome, error)
}

// ErrNoRail is returned by a rail that is not configured.
var ErrNoRail = errors.New("no payout rail is configured for this destination")

// ErrPending is returned by a rail whose provider has the payout and has
// not ended it (a bank transfer can take hours). It is not a failure: the
// payment stays transferring, the rail reports the outcome when the
// provider tells it (a webhook), and the stalled-payment sweep's calls
// ask the provider in case it never does.
var ErrPending = errors.New("the payout is pending at the provider")
