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

// ReconciliationRun is one reconciliation of a rail and window, scheduled
// (LEDGER_RECONCILE_AT) or asked for (ledgerctl reconcile): an
// operational record, not an event (the breaks it finds are events).
type ReconciliationRun struct {
	Rail      string
	From, To  time.Time
	Scheduled bool
	By        string     // who ran it: the schedule, or the operator who asked
	Since     time.Time  // when the schedule claimed it, or the operator asked
	Started   *time.Time // nil while a request waits for a ledgerd to take it
	Finished  *time.Time // nil while it runs, or after its process died
	Error     string     // why a requested run failed (a failed scheduled run is tried again)
	Report    *ReconciliationReport
}

// Run statuses, as ReconciliationRun.Status says them.
const (
	RunWaiting  = "waiting"
	RunRunning  = "running"
	RunFailed   = "failed"
	RunFinished = "finished"
)

// Status is where the run is: waiting for a ledgerd, running, failed or
// finished with its report.
func (r ReconciliationRun) Status() string {
	switch {
	case r.Started == nil:
		return RunWaiting
	case r.Finished == nil:
		return RunRunning
	case r.Error != "" || r.Report == nil:
		return RunFailed
	}
	return RunFinished
}
