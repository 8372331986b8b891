// Package statement is what a rail's provider says happened, in the shape
// reconciliation compares with the ledger: one Record per money movement
// the provider knows of, and the opening and closing Balance of an account
// the provider keeps for us. Each rail's adapter package implements Source
// from its provider's own records (a list API, a status API, a statement
// file, a node's history, a chain's logs), never from the ledger's.
package statement

import (
	"context"
	"time"

	"github.com/shopspring/decimal"
)

// Directions of a Record, seen from the service.
const (
	In  = "in"  // money the provider received for us (a deposit)
	Out = "out" // money the provider paid out for us (a payout)
)

// Statuses of a Record, as the provider reports it now.
const (
	Success  = "success"
	Failed   = "failed"
	Reversed = "reversed" // succeeded, then was taken back
	Pending  = "pending"
)

// Record is one money movement as the provider records it.
type Record struct {
	Rail      string // the ledger's rail name: LIGHTNING, BANK_TRANSFER, MOMO, USDT, BANK
	Ref       string // the id the ledger holds too: payout reference, invoice payment hash, bank entry reference, M-Pesa receipt, "txhash:logindex"
	Direction string // In or Out
	Amount    decimal.Decimal
	Currency  string // as the ledger's postings name it ("sats" for Bitcoin)
	Status    string
	At        time.Time // when the provider says it happened
}

// Balance is an account's balance at the provider at both ends of a window.
type Balance struct {
	Rail     string
	Account  string // the provider's account id (an IBAN, a shortcode, a node)
	Currency string
	Opening  decimal.Decimal
	Closing  decimal.Decimal
	From, To time.Time
}

// Source lists what a rail's provider says happened in [from, to).
type Source interface {
	Records(ctx context.Context, from, to time.Time) ([]Record, error)
}

// BalanceSource is a Source whose provider also states balances (a
// camt.053 statement, a node's wallet).
type BalanceSource interface {
	Source
	Balances(ctx context.Context, from, to time.Time) ([]Balance, error)
}
