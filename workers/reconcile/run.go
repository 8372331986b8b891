package reconcile

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/workers/rails/statement"
)

// Breaks records what a reconciliation finds (usecase.Ledger.FindBreak):
// new is false for a break found before, open or resolved.
type Breaks interface {
	FindBreak(ctx context.Context, f domain.FindBreak, meta domain.Metadata) (domain.Break, bool, error)
}

// Reconciler reconciles a rail's provider records with the ledger's.
type Reconciler struct {
	Sources map[string]statement.Source // by ledger rail name
	Ledger  *Ledger
	Breaks  Breaks
	Now     func() time.Time
}

// The days around a window whose records a record of the window may pair
// with (Side.Nearby): a movement the other side dates across midnight, a
// bank credit imported days after its booking, or a provider that lists a
// payout again, reversed, up to a week after it was made.
const (
	lookBehind = 7 * 24 * time.Hour
	lookAhead  = 24 * time.Hour
)

// Run reconciles rail over [from, to): the provider's records against the
// ledger's, the provider's balances (when its source states them) against
// the ledger's, every difference recorded as a break (once: a break found
// before is reported, not recorded again). meta names who ran it.
func (r *Reconciler) Run(ctx context.Context, rail string, from, to time.Time,
	meta domain.Metadata) (domain.ReconciliationReport, error) {
	src, ok := r.Sources[rail]
	switch {
	case !ok:
		return domain.ReconciliationReport{}, domain.Errorf(domain.Invalid, "rail_not_reconciled",
			"no statement source is configured for rail %q", rail)
	case !from.Before(to):
		return domain.ReconciliationReport{}, domain.Invalidf("window", "its start must be before its end")
	}
	from, to = from.UTC(), to.UTC()
	provider, ledger, unread, err := r.sides(ctx, src, rail, from, to)
	if err != nil {
		return domain.ReconciliationReport{}, err
	}
	m := Match(provider, ledger)
	rep := domain.ReconciliationReport{Rail: rail, From: from, To: to, ProviderRecords: len(provider.Window),
		LedgerRecords: len(ledger.Window), Matched: m.Matched, BreaksByKind: map[string]int{}, Breaks: []domain.ReportedBreak{},
		Balances: []domain.BalanceComparison{}}
	if unread != nil {
		rep.ProviderNearbyUnread = unread.Error()
	}
	findings := make([]domain.FindBreak, 0, len(m.Findings))
	for _, f := range m.Findings {
		findings = append(findings, domain.FindBreak{Kind: f.Kind, Rail: rail, Ref: f.Ref, Provider: side(f.Provider),
			Ledger: side(f.Ledger), From: from, To: to})
	}
	if bs, ok := src.(statement.BalanceSource); ok {
		balances, more, err := r.compareBalances(ctx, bs, rail, from, to)
		if err != nil {
			return domain.ReconciliationReport{}, err
		}
		rep.Balances, findings = balances, append(findings, more...)
	}
	return rep, r.record(ctx, &rep, findings, meta)
}

// sides reads each side's records of rail: of the window, and of the days
// around it where a record of the window may find its pair. The
// provider's days around are read as a help, not a requirement: a
// statement file not there yet (today's, when yesterday is reconciled)
// fails them alone, and the report says so (unread).
func (r *Reconciler) sides(ctx context.Context, src statement.Source, rail string, from, to time.Time) (provider, ledger Side,
	unread error, err error) {
	window, err := src.Records(ctx, from, to)
	if err != nil {
		return provider, ledger, nil, fmt.Errorf("%s statement: %w", rail, err)
	}
	before, errBefore := src.Records(ctx, from.Add(-lookBehind), from)
	after, errAfter := src.Records(ctx, to, to.Add(lookAhead))
	provider = Side{Window: ofRail(window, rail), Nearby: ofRail(append(before, after...), rail)}
	around, err := r.Ledger.Records(ctx, rail, from.Add(-lookBehind), to.Add(lookAhead))
	if err != nil {
		return provider, ledger, nil, err
	}
	return provider, split(around, from, to), errors.Join(errBefore, errAfter), nil
}

// ofRail keeps the records of rail: a source may list several rails'.
func ofRail(recs []statement.Record, rail string) []statement.Record {
	var out []statement.Record
	for _, rec := range recs {
		if rec.Rail == rail {
			out = append(out, rec)
		}
	}
	return out
}

// record records each break found, unless found before, and adds it to rep.
func (r *Reconciler) record(ctx context.Context, rep *domain.ReconciliationReport, findings []domain.FindBreak,
	meta domain.Metadata) error {
	for _, k := range domain.BreakKinds {
		rep.BreaksByKind[k] = 0
	}
	for _, f := range findings {
		f.Now = r.Now()
		b, isNew, err := r.Breaks.FindBreak(ctx, f, meta)
		if err != nil {
			return fmt.Errorf("record the %s break of %s %s: %w", f.Kind, f.Rail, f.Ref, err)
		}
		rep.BreaksByKind[f.Kind]++
		rep.Breaks = append(rep.Breaks, domain.ReportedBreak{ID: b.ID, Kind: f.Kind, Ref: f.Ref, New: isNew, Status: b.Status})
		if isNew {
			rep.NewBreaks++
		}
	}
	return nil
}

// compareBalances compares each balance the provider states with the
// ledger's balance of the rail's account in its currency at the same
// times; one that differs at either end is a break.
func (r *Reconciler) compareBalances(ctx context.Context, src statement.BalanceSource, rail string,
	from, to time.Time) ([]domain.BalanceComparison, []domain.FindBreak, error) {
	stated, err := src.Balances(ctx, from, to)
	if err != nil {
		return nil, nil, fmt.Errorf("%s balances: %w", rail, err)
	}
	sort.SliceStable(stated, func(i, j int) bool {
		return stated[i].Account+stated[i].Currency < stated[j].Account+stated[j].Currency
	})
	reports := []domain.BalanceComparison{}
	var findings []domain.FindBreak
	for _, b := range stated {
		if b.Rail != "" && b.Rail != rail {
			continue
		}
		opening, err := r.Ledger.Balance(ctx, rail, b.Currency, from)
		if err != nil {
			return nil, nil, err
		}
		closing, err := r.Ledger.Balance(ctx, rail, b.Currency, to)
		if err != nil {
			return nil, nil, err
		}
		rep := domain.BalanceComparison{Account: b.Account, Currency: b.Currency, ProviderOpening: b.Opening, LedgerOpening: opening,
			ProviderClosing: b.Closing, LedgerClosing: closing, Agrees: b.Opening.Equal(opening) && b.Closing.Equal(closing)}
		reports = append(reports, rep)
		if rep.Agrees {
			continue
		}
		findings = append(findings, domain.FindBreak{Kind: domain.BreakBalanceDiffers, Rail: rail,
			Ref:      fmt.Sprintf("balance:%s:%s:%s/%s", b.Account, b.Currency, from.Format(time.RFC3339), to.Format(time.RFC3339)),
			Provider: &domain.BreakSide{Account: b.Account, Currency: b.Currency, Opening: &b.Opening, Closing: &b.Closing},
			Ledger:   &domain.BreakSide{Account: domain.ExternalAccount(rail), Currency: b.Currency, Opening: &opening, Closing: &closing},
			From:     from, To: to})
	}
	return reports, findings, nil
}

// side is a break's side from a record; nil for none.
func side(r *statement.Record) *domain.BreakSide {
	if r == nil {
		return nil
	}
	at := r.At.UTC()
	return &domain.BreakSide{Direction: r.Direction, Amount: r.Amount, Currency: r.Currency, Status: r.Status, At: &at}
}

// split parts recs into those of [from, to) and the others.
func split(recs []statement.Record, from, to time.Time) Side {
	var s Side
	for _, r := range recs {
		if r.At.Before(from) || !r.At.Before(to) {
			s.Nearby = append(s.Nearby, r)
		} else {
			s.Window = append(s.Window, r)
		}
	}
	return s
}
