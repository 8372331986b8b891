package domain

import (
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
)

// A reconciliation break is a difference between what a rail's provider
// says happened and what the ledger recorded (docs/reconciliation.md). It
// is never fixed automatically: it stays open until an operator resolves
// it with a reason, after correcting whatever needed correcting by the
// ordinary means (a payout resolved, unmatched funds assigned, a ticket
// with the provider). Each break is a stream of its own (type
// "reconciliation") in the operator's books, whose id is derived from the
// rail, the kind and the reference, so a window reconciled again finds
// the same breaks and records none twice, and a resolved break is not
// opened again by the same finding.

// Kinds of break.
const (
	BreakProviderOnly   = "provider_only"   // the provider has the movement, the ledger does not
	BreakLedgerOnly     = "ledger_only"     // the ledger has the movement, the provider does not
	BreakAmountDiffers  = "amount_differs"  // both have it, with another amount, currency or direction
	BreakStatusDiffers  = "status_differs"  // both have it, in another state (a success later reversed)
	BreakBalanceDiffers = "balance_differs" // the provider's opening or closing balance is not the ledger's
)

// BreakKinds lists every kind, in the order reports show them.
var BreakKinds = []string{BreakProviderOnly, BreakLedgerOnly, BreakAmountDiffers, BreakStatusDiffers, BreakBalanceDiffers}

// Break statuses.
const (
	BreakOpen     = "open"
	BreakResolved = "resolved"
)

// BreakSide is what one side (the provider or the ledger) says of a
// break's movement or balance. A movement fills Direction to At; a balance
// Account, Opening and Closing.
type BreakSide struct {
	Direction string           `json:"direction,omitempty"` // in or out
	Amount    decimal.Decimal  `json:"amount"`
	Currency  string           `json:"currency"`
	Status    string           `json:"status,omitempty"`
	At        *time.Time       `json:"at,omitempty"`
	Account   string           `json:"account,omitempty"`
	Opening   *decimal.Decimal `json:"opening,omitempty"`
	Closing   *decimal.Decimal `json:"closing,omitempty"`
}

// Break is the state of one break's stream; its JSON form is the
// reconciliation_breaks read model's row.
type Break struct {
	ID         uuid.UUID  `json:"id"`
	Kind       string     `json:"kind"`
	Rail       string     `json:"rail"`
	Ref        string     `json:"ref"`
	Provider   *BreakSide `json:"provider,omitempty"` // nil when the provider has nothing
	Ledger     *BreakSide `json:"ledger,omitempty"`   // nil when the ledger has nothing
	From       time.Time  `json:"from"`               // the window that found it
	To         time.Time  `json:"to"`
	Status     string     `json:"status"`
	Reason     string     `json:"reason,omitempty"` // the operator's, on resolving
	ResolvedBy string     `json:"resolvedBy,omitempty"`
	FoundAt    time.Time  `json:"foundAt"`
	ResolvedAt *time.Time `json:"resolvedAt,omitempty"`
}

// ReconciliationBreakFound opens a break.
type ReconciliationBreakFound struct {
	BreakID  uuid.UUID  `json:"id"`
	Kind     string     `json:"kind"`
	Rail     string     `json:"rail"`
	Ref      string     `json:"ref"`
	Provider *BreakSide `json:"provider,omitempty"`
	Ledger   *BreakSide `json:"ledger,omitempty"`
	From     time.Time  `json:"from"`
	To       time.Time  `json:"to"`
	At       time.Time  `json:"at"`
}

// ReconciliationBreakResolved records an operator closing a break, and why.
type ReconciliationBreakResolved struct {
	Reason string    `json:"reason"`
	By     string    `json:"by"`
	At     time.Time `json:"at"`
}

func (ReconciliationBreakFound) EventType() string    { return "reconciliation.break_found" }
func (ReconciliationBreakResolved) EventType() string { return "reconciliation.break_resolved" }

var (
	_ = register(EventDef{Type: "reconciliation.break_found", Version: 1, New: func() Event { return new(ReconciliationBreakFound) },
		Doc: "Reconciling a rail found a difference between its provider's records and the ledger's (a movement one side lacks, another amount or status, a balance); it stays open until an operator resolves it."})
	_ = register(EventDef{Type: "reconciliation.break_resolved", Version: 1, New: func() Event { return new(ReconciliationBreakResolved) },
		Doc: "An operator resolved a reconciliation break, giving the reason."})
)

// ApplyBreak folds one event into b.
func ApplyBreak(b Break, e Event) Break {
	switch e := e.(type) {
	case ReconciliationBreakFound:
		b = Break{ID: e.BreakID, Kind: e.Kind, Rail: e.Rail, Ref: e.Ref, Provider: e.Provider, Ledger: e.Ledger,
			From: e.From, To: e.To, Status: BreakOpen, FoundAt: e.At}
	case ReconciliationBreakResolved:
		at := e.At
		b.Status, b.Reason, b.ResolvedBy, b.ResolvedAt = BreakResolved, e.Reason, e.By, &at
	}
	return b
}

// breakNamespace makes break ids: UUIDv5 of the rail, kind and reference.
var breakNamespace = uuid.MustParse("6f1f0a3e-4a52-5c7e-9b1d-2f61c0a9e7b4")

// BreakID is the id of the break of kind on rail about ref: the same
// finding always names the same stream.
func BreakID(rail, kind, ref string) uuid.UUID {
	return uuid.NewSHA1(breakNamespace, []byte(strings.Join([]string{rail, kind, ref}, "\x00")))
}

// FindBreak is a reconciliation's finding of a break.
type FindBreak struct {
	Kind, Rail, Ref  string
	Provider, Ledger *BreakSide
	From, To         time.Time
	Now              time.Time
}

// DecideFindBreak opens the break c describes unless its stream exists:
// found before, open or resolved, it is the same finding and decides
// nothing.
func DecideFindBreak(b Break, c FindBreak) ([]Event, error) {
	if b.ID != uuid.Nil {
		return nil, nil
	}
	switch {
	case !slices.Contains(BreakKinds, c.Kind):
		return nil, Invalidf("kind", "unknown break kind %q", c.Kind)
	case c.Rail == "" || c.Ref == "":
		return nil, Invalidf("ref", "a break names its rail and reference")
	case !c.From.Before(c.To):
		return nil, Invalidf("window", "the window's start must be before its end")
	}
	return []Event{ReconciliationBreakFound{BreakID: BreakID(c.Rail, c.Kind, c.Ref), Kind: c.Kind, Rail: c.Rail, Ref: c.Ref,
		Provider: c.Provider, Ledger: c.Ledger, From: c.From.UTC(), To: c.To.UTC(), At: c.Now.UTC().Truncate(time.Millisecond)}}, nil
}

// ResolveBreak is an operator's closing of a break.
type ResolveBreak struct {
	Reason string
	By     string
	Now    time.Time
}

// DecideResolveBreak closes an open break with the operator's reason.
func DecideResolveBreak(b Break, c ResolveBreak) ([]Event, error) {
	reason := strings.TrimSpace(c.Reason)
	switch {
	case b.ID == uuid.Nil:
		return nil, ErrNotFound
	case b.Status != BreakOpen:
		return nil, Errorf(Conflict, "break_resolved", "the break was resolved already by %s", b.ResolvedBy)
	case reason == "":
		return nil, Invalidf("reason", "a resolution gives its reason")
	case len(reason) > maxBreakReason:
		return nil, Invalidf("reason", "at most %d bytes", maxBreakReason)
	case c.By == "":
		return nil, Invalidf("actor", "a resolution names its operator")
	}
	return []Event{ReconciliationBreakResolved{Reason: reason, By: c.By, At: c.Now.UTC().Truncate(time.Millisecond)}}, nil
}

// maxBreakReason bounds a resolution's reason: a sentence or two, not a file.
const maxBreakReason = 1000
