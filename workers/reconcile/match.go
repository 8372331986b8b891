// Package reconcile compares what each rail's provider says happened
// (statement.Source) with what the ledger recorded, for a window of time,
// and records every difference as a reconciliation break for an operator
// (docs/reconciliation.md). Nothing here corrects anything: a break is
// only ever resolved by an operator.
package reconcile

import (
	"cmp"
	"slices"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/workers/rails/statement"
)

// Finding is one break the matcher found: its kind, and what each side
// holds (nil for the side that has nothing).
type Finding struct {
	Kind     string
	Rail     string
	Ref      string
	Provider *statement.Record
	Ledger   *statement.Record
}

// Matching is the matcher's answer: how many movements both sides agree
// on, and every difference, in (rail, ref, kind) order.
type Matching struct {
	Matched  int
	Findings []Finding
}

type key struct{ rail, ref string }

// Match pairs provider records with ledger records by (rail, ref), the id
// both hold, and compares each pair: direction, amount and currency, then
// status. A record of a movement that failed is no money moved: alone on
// its side it is no break; nor is money coming in that the provider still
// has pending (a transfer short of its confirmations), which the ledger
// books once it is final. A reference the provider lists twice is
// compared once; the second listing is a movement the ledger lacks.
//
// nearby are the ledger's records of the days around the window: a
// provider record finds its pair there when the two sides date one
// movement on either side of the window's edge, or the provider lists a
// movement again when it changes (a payout reversed days later). Only the
// window's own ledger records can be missing at the provider.
func Match(provider, ledger, nearby []statement.Record) Matching {
	var m Matching
	byRef := make(map[key]*statement.Record, len(ledger)+len(nearby))
	for i := range nearby {
		byRef[key{nearby[i].Rail, nearby[i].Ref}] = &nearby[i]
	}
	for i := range ledger {
		byRef[key{ledger[i].Rail, ledger[i].Ref}] = &ledger[i]
	}
	seen := make(map[key]bool, len(provider))
	for i := range provider {
		p := &provider[i]
		k := key{p.Rail, p.Ref}
		l, ok := byRef[k]
		if !ok || seen[k] {
			if p.Status != statement.Failed && (p.Status != statement.Pending || p.Direction != statement.In) {
				m.Findings = append(m.Findings, Finding{Kind: domain.BreakProviderOnly, Rail: p.Rail, Ref: p.Ref, Provider: p})
			}
			continue
		}
		seen[k] = true
		switch {
		case p.Direction != l.Direction || p.Currency != l.Currency || !p.Amount.Equal(l.Amount):
			m.Findings = append(m.Findings, Finding{Kind: domain.BreakAmountDiffers, Rail: p.Rail, Ref: p.Ref, Provider: p, Ledger: l})
		case p.Status != l.Status:
			m.Findings = append(m.Findings, Finding{Kind: domain.BreakStatusDiffers, Rail: p.Rail, Ref: p.Ref, Provider: p, Ledger: l})
		default:
			m.Matched++
		}
	}
	for i := range ledger {
		l := &ledger[i]
		if !seen[key{l.Rail, l.Ref}] && l.Status != statement.Failed {
			m.Findings = append(m.Findings, Finding{Kind: domain.BreakLedgerOnly, Rail: l.Rail, Ref: l.Ref, Ledger: l})
		}
	}
	slices.SortStableFunc(m.Findings, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(a.Rail, b.Rail), cmp.Compare(a.Ref, b.Ref), cmp.Compare(a.Kind, b.Kind))
	})
	return m
}
