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

// Side is one side's records: those of the window, and those of the days
// around it (Nearby), where a record of the window may find its pair when
// the two sides date one movement on either side of the window's edge (a
// bank credit booked on one day and imported the next), or a provider
// lists a movement again when it changes (a payout reversed days later).
type Side struct {
	Window, Nearby []statement.Record
}

// Match pairs the window's records of each side with the other side's, of
// the window or nearby, by (rail, ref), the id both hold, and compares
// each pair: direction, amount and currency, then status. A record of a
// movement that failed is no money moved: alone on its side it is no
// break; nor is money coming in that the provider still has pending (a
// transfer short of its confirmations), which the ledger books once it is
// final. A reference the provider lists twice in the window is compared
// once; the second listing is a movement the ledger lacks. Two nearby
// records are another window's business.
func Match(provider, ledger Side) Matching {
	var m Matching
	ledgerRefs := index(ledger)
	providerNearby := index(Side{Nearby: provider.Nearby})
	paired := map[key]bool{}
	compare := func(p, l *statement.Record) {
		switch {
		case p.Direction != l.Direction || p.Currency != l.Currency || !p.Amount.Equal(l.Amount):
			m.Findings = append(m.Findings, Finding{Kind: domain.BreakAmountDiffers, Rail: p.Rail, Ref: p.Ref, Provider: p, Ledger: l})
		case p.Status != l.Status:
			m.Findings = append(m.Findings, Finding{Kind: domain.BreakStatusDiffers, Rail: p.Rail, Ref: p.Ref, Provider: p, Ledger: l})
		default:
			m.Matched++
		}
	}
	for i := range provider.Window {
		p := &provider.Window[i]
		k := key{p.Rail, p.Ref}
		l, ok := ledgerRefs[k]
		if !ok || paired[k] {
			if p.Status != statement.Failed && (p.Status != statement.Pending || p.Direction != statement.In) {
				m.Findings = append(m.Findings, Finding{Kind: domain.BreakProviderOnly, Rail: p.Rail, Ref: p.Ref, Provider: p})
			}
			continue
		}
		paired[k] = true
		compare(p, l)
	}
	for i := range ledger.Window {
		l := &ledger.Window[i]
		k := key{l.Rail, l.Ref}
		if paired[k] {
			continue
		}
		if p, ok := providerNearby[k]; ok {
			paired[k] = true
			compare(p, l)
			continue
		}
		if l.Status != statement.Failed {
			m.Findings = append(m.Findings, Finding{Kind: domain.BreakLedgerOnly, Rail: l.Rail, Ref: l.Ref, Ledger: l})
		}
	}
	slices.SortStableFunc(m.Findings, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(a.Rail, b.Rail), cmp.Compare(a.Ref, b.Ref), cmp.Compare(a.Kind, b.Kind))
	})
	return m
}

// index is a side's records by (rail, ref): the window's over the nearby
// ones, and the first of a reference listed twice.
func index(s Side) map[key]*statement.Record {
	by := make(map[key]*statement.Record, len(s.Window)+len(s.Nearby))
	for _, recs := range [][]statement.Record{s.Window, s.Nearby} {
		for i := range recs {
			if k := (key{recs[i].Rail, recs[i].Ref}); by[k] == nil {
				by[k] = &recs[i]
			}
		}
	}
	return by
}
