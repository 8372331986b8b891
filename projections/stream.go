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
// what they do to the read models: first the stream's own row, encoded
// once from the state after them (the other rows refer to it), then the
// rows each event adds, changes or removes. It returns that state. The
// append, the rebuild and the audit all project through it, so a
// read-model row is the fold's state, written one way.
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
	later := rowLog{w: w}
	for i := range recs {
		r := &recs[i]
		e, err := r.Decode()
		if err != nil {
			return nil, fmt.Errorf("project %s %s: %w", r.Type, r.ID, err)
		}
		s.fold(e)
		s.rows(&later, r, e)
		if ps := domain.PostingsOf(e); len(ps) > 0 {
			putPostings(&later, r, ps)
		}
	}
	if first, last := &recs[0], &recs[len(recs)-1]; first.StreamVersion == 1 {
		s.put(w, first, last)
	} else {
		s.update(w, last)
	}
	later.replay()
	return s.state(), nil
}

// stream is one stream's projection: its state, folded by the domain's
// apply, and the rows it writes.
type stream interface {
	fold(e domain.Event)
	// put writes the stream's row, opened by its record first, as its
	// record last left it.
	put(w Rows, first, last *domain.Record)
	// update writes what changes in the stream's row, as of its record last.
	update(w Rows, last *domain.Record)
	// rows writes the other rows that e, just folded, adds, changes or
	// removes.
	rows(w Rows, r *domain.Record, e domain.Event)
	state() any
}

func newStream(streamType string, before any) (stream, error) {
	var (
		s  stream
		ok bool
	)
	switch streamType {
	case "tenant":
		s, ok = open(before, func(t domain.Tenant) stream { return &tenantStream{t: t} })
	case "user":
		s, ok = open(before, func(u domain.User) stream { return &userStream{u: u} })
	case "merchant":
		s, ok = open(before, func(m domain.Merchant) stream { return &merchantStream{m: m} })
	case "payment":
		s, ok = open(before, func(p domain.Payment) stream { return &paymentStream{p: p} })
	case "unmatched_funds":
		s, ok = open(before, func(u domain.UnmatchedFunds) stream { return &unmatchedStream{u: u} })
	case "reconciliation":
		s, ok = open(before, func(b domain.Break) stream { return &breakStream{b: b} })
	case "dashboard_user":
		s, ok = open(before, func(u domain.DashboardUser) stream { return &dashboardUserStream{u: u} })
	default:
		return nil, fmt.Errorf("project: unknown stream type %q", streamType)
	}
	if !ok {
		return nil, fmt.Errorf("project %s stream: state of type %T", streamType, before)
	}
	return s, nil
}

// open makes a stream's projection from before, its state as an S (nil: a
// new stream's zero S); false when before is of another type.
func open[S any](before any, project func(S) stream) (stream, bool) {
	state, ok := stateOr[S](before)
	return project(state), ok
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

// rowLog holds writes for w until replay, so that they follow the stream's
// own row.
type rowLog struct {
	w   Rows
	ops []func()
}

func (l *rowLog) Put(t *Table, row ...any) { l.ops = append(l.ops, func() { l.w.Put(t, row...) }) }

func (l *rowLog) Update(t *Table, key []any, columns []string, values ...any) {
	l.ops = append(l.ops, func() { l.w.Update(t, key, columns, values...) })
}

func (l *rowLog) Delete(t *Table, key ...any) {
	l.ops = append(l.ops, func() { l.w.Delete(t, key...) })
}

func (l *rowLog) Keeps(t *Table) bool { return l.w.Keeps(t) }

func (l *rowLog) replay() {
	for _, op := range l.ops {
		op()
	}
}
