package domain

import (
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
)

// ReconciliationReport is what one reconciliation of a rail and window
// found (docs/reconciliation.md): ledgerctl reconcile prints it as JSON,
// the runs keep it, and the operator's dashboard shows it.
type ReconciliationReport struct {
	Rail            string              `json:"rail"`
	From            time.Time           `json:"from"`
	To              time.Time           `json:"to"`
	ProviderRecords int                 `json:"providerRecords"`
	LedgerRecords   int                 `json:"ledgerRecords"`
	Matched         int                 `json:"matched"`
	BreaksByKind    map[string]int      `json:"breaksByKind"` // every kind, found now whether or not recorded before
	NewBreaks       int                 `json:"newBreaks"`    // recorded by this run; the others were found before
	Breaks          []ReportedBreak     `json:"breaks"`
	Balances        []BalanceComparison `json:"balances"`
	// ProviderNearbyUnread says why the provider's records of the days
	// around the window could not be read: a ledger record of the window
	// dated across its edge from the provider's may then be a break.
	ProviderNearbyUnread string `json:"providerNearbyUnread,omitempty"`
}

// ReportedBreak names one break a run found.
type ReportedBreak struct {
	ID     uuid.UUID `json:"id"`
	Kind   string    `json:"kind"`
	Ref    string    `json:"ref"`
	New    bool      `json:"new"`
	Status string    `json:"status"` // open, or resolved by an operator before this run
}

// BalanceComparison compares a provider account's balances with the
// ledger's account of money at the rail, at the window's two ends.
type BalanceComparison struct {
	Account         string          `json:"account"`
	Currency        string          `json:"currency"`
	ProviderOpening decimal.Decimal `json:"providerOpening"`
	LedgerOpening   decimal.Decimal `json:"ledgerOpening"`
	ProviderClosing decimal.Decimal `json:"providerClosing"`
	LedgerClosing   decimal.Decimal `json:"ledgerClosing"`
	Agrees          bool            `json:"agrees"`
}
