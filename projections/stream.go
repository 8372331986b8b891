package projections

import (
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/ledger/ledger/domain"
)

// ProjectStream folds recs, one stream's new records in order, into the
// stream's state with the domain's own apply, starting from before (the
// state the records were decided on; nil for a new stream), and writes to w
// what they do to the read models: the rows each event adds or removes,
// then the stream's own row, encoded from the state after them. It returns
// that state. The append, the rebuild and the audit all project through
// it, so a read-model row is the fold's state, written once, one way.
func ProjectStream(w Rows, before any, recs []domain.Record) (any, error) {
	if len(recs) == 0 {
		return before, nil
	}
	s, err := newStream(recs[0].StreamType, before)
	if err != nil {
		return nil, err
	}
	if before == nil && recs[0].StreamVersion != 1 {
		return nil, fmt.Errorf("project %s stream %s from version %d: its state before is needed",
			recs[0].StreamType, recs[0].StreamID, recs[0].StreamVersion)
	}
	for i := range recs {
		r := &recs[i]
		e, err := r.Decode()
		if err != nil {
			return nil, fmt.Errorf("project %s %s: %w", r.Type, r.ID, err)
		}
		s.fold(e)
		if r.StreamVersion == 1 {
			s.put(w, r) // before the rows that refer to it
		}
		s.rows(w, r, e)
		if ps := domain.PostingsOf(e); len(ps) > 0 {
			putPostings(w, r, ps)
		}
	}
	if last := &recs[len(recs)-1]; last.StreamVersion > 1 {
		s.update(w, last)
	}
	return s.state(), nil
}

// stream is one stream's projection: its state, folded by the domain's
// apply, and the rows it writes.
type stream interface {
	fold(e domain.Event)
	// put writes the stream's row as the stream's first record r left it.
	put(w Rows, r *domain.Record)
	// update writes what changes in the stream's row, as of its record last.
	update(w Rows, last *domain.Record)
	// rows writes the other rows that e, just folded, adds, changes or removes.
	rows(w Rows, r *domain.Record, e domain.Event)
	state() any
}

func newStream(streamType string, before any) (stream, error) {
	var (
		s  stream
		ok = true
	)
	switch streamType {
	case "tenant":
		t := &tenantStream{}
		t.t, ok = stateOr[domain.Tenant](before)
		s = t
	case "user":
		u := &userStream{}
		u.u, ok = stateOr[domain.User](before)
		s = u
	case "merchant":
		m := &merchantStream{}
		m.m, ok = stateOr[domain.Merchant](before)
		s = m
	case "payment":
		p := &paymentStream{}
		p.p, ok = stateOr[domain.Payment](before)
		s = p
	case "dashboard_user":
		d := &dashboardUserStream{}
		d.u, ok = stateOr[domain.DashboardUser](before)
		s = d
	default:
		return nil, fmt.Errorf("project: unknown stream type %q", streamType)
	}
	if !ok {
		return nil, fmt.Errorf("project %s stream: state of type %T", streamType, before)
	}
	return s, nil
}

// stateOr is before as an S, or S's zero value for a new stream.
func stateOr[S any](before any) (S, bool) {
	if before == nil {
		var zero S
		return zero, true
	}
	s, ok := before.(S)
	return s, ok
}

// putPostings writes the posting lines an event carries as its
// ledger_entries row, line n in element n of each array (migration 0015).
func putPostings(w Rows, r *domain.Record, ps []domain.Posting) {
	accounts, currencies, sides := make([]string, len(ps)), make([]string, len(ps)), make([]string, len(ps))
	amounts := make([]pgtype.Numeric, len(ps))
	for i, p := range ps {
		accounts[i], currencies[i], sides[i] = p.Account, p.Currency, p.Side
		_ = amounts[i].Scan(p.Amount.String()) // a decimal's text is a numeric's
	}
	w.Put(ledgerEntriesTable, r.ID, r.TenantID, r.RecordedAt, accounts, currencies, sides, amounts)
}

// JSONOf encodes v for a json or jsonb value. The values are the domain's
// own structs, which always encode.
func JSONOf(v any) string {
	raw, _ := json.Marshal(v)
	return string(raw)
}

// FoldStream folds recs as ProjectStream does, writing nothing: the state
// of a stream whose rows are already written.
func FoldStream(before any, recs []domain.Record) (any, error) {
	return ProjectStream(discardRows{}, before, recs)
}

type discardRows struct{}

func (discardRows) Put(*Table, ...any)                     {}
func (discardRows) Update(*Table, []any, []string, ...any) {}
func (discardRows) Delete(*Table, ...any)                  {}
func (discardRows) Keeps(*Table) bool                      { return false }
