package camt

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/ledger/ledger/workers/rails/statement"
)

// rail is the ledger's name of the funding the collection account receives.
const rail = "BANK_TRANSFER"

// Statements is a directory of camt.053 statements of the collection
// account, as the bank delivers them (one file a day, *.xml), read as a
// statement.BalanceSource. Every call reads the directory again, so a
// statement dropped in later is found by the next run; camt.054 advices
// there are ignored (they give no balances and repeat the statements'
// credits).
type Statements struct {
	dir string
}

// NewStatements returns the statements kept in dir.
func NewStatements(dir string) *Statements { return &Statements{dir: dir} }

var _ statement.BalanceSource = (*Statements)(nil)

// Records lists the statements' booked entries whose booking time is in
// [from, to): each credit as the import records it (In, success, a
// batch's parts one by one), each debit Out, and a reversal as the
// direction it takes back, reversed. Pending entries are not on a
// statement's balance yet and are left out. It fails when no statement
// covers the window (see Balances): an empty list must mean the bank
// booked nothing, not that its statement has not come.
func (s *Statements) Records(ctx context.Context, from, to time.Time) ([]statement.Record, error) {
	st, err := s.read(ctx)
	if err != nil {
		return nil, err
	}
	if len(st.balances(from, to)) == 0 {
		return nil, s.uncovered(from, to)
	}
	var out []statement.Record
	seen := map[string]statement.Record{}
	add := func(r statement.Record) error {
		if r.At.Before(from) || !r.At.Before(to) {
			return nil
		}
		if prev, ok := seen[r.Ref]; ok {
			// A statement delivered twice repeats its entries; a bank
			// reference that names two different entries is the bank's
			// error, for an operator.
			if prev.Direction != r.Direction || !prev.Amount.Equal(r.Amount) || prev.Currency != r.Currency ||
				prev.Status != r.Status || !prev.At.Equal(r.At) {
				return fmt.Errorf("camt statements: entry %s differs between two statements", r.Ref)
			}
			return nil
		}
		seen[r.Ref] = r
		out = append(out, r)
		return nil
	}
	for _, c := range st.credits {
		if err := add(statement.Record{Rail: rail, Ref: c.EntryRef, Direction: statement.In, Amount: c.Amount,
			Currency: c.Currency, Status: statement.Success, At: c.BookedAt}); err != nil {
			return nil, err
		}
	}
	for _, e := range st.entries {
		r := statement.Record{Rail: rail, Ref: e.EntryRef, Direction: statement.Out, Amount: e.Amount,
			Currency: e.Currency, Status: statement.Success, At: e.BookedAt}
		if e.Reversal {
			r.Status = statement.Reversed
			if e.Debit { // a credit taken back
				r.Direction = statement.In
			}
		}
		if err := add(r); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Balances gives each account's booked balance at from and at to, where
// the statements state both: an opening booked balance (OPBD) dated from
// (a date's balance opens at its midnight, UTC) and a closing booked
// balance (CLBD, or PRCD of the next statement) dated the day before to
// (it closes at the next midnight), or balances timed exactly then.
func (s *Statements) Balances(ctx context.Context, from, to time.Time) ([]statement.Balance, error) {
	st, err := s.read(ctx)
	if err != nil {
		return nil, err
	}
	out := st.balances(from, to)
	if len(out) == 0 {
		return nil, s.uncovered(from, to)
	}
	return out, nil
}

func (s *Statements) uncovered(from, to time.Time) error {
	return fmt.Errorf("camt statements: none in %s states the balances at %s and %s", s.dir,
		from.UTC().Format(time.RFC3339), to.UTC().Format(time.RFC3339))
}

// statements is what the directory's camt.053 files hold together.
type statements struct {
	credits  []Credit
	entries  []Entry
	points   map[[2]string]map[int64]Balance // (account, currency) -> when (Unix ns) -> balance then
	accounts [][2]string                     // the keys of points, in the order first seen
}

// read parses every camt.053 file of the directory. A file that cannot be
// read fails the whole: its entries would be missing from the statement.
func (s *Statements) read(ctx context.Context) (statements, error) {
	names, err := filepath.Glob(filepath.Join(s.dir, "*.xml"))
	if err != nil {
		return statements{}, fmt.Errorf("camt statements: %w", err)
	}
	if len(names) == 0 {
		if _, err := os.Stat(s.dir); err != nil {
			return statements{}, fmt.Errorf("camt statements: %w", err)
		}
	}
	slices.Sort(names)
	st := statements{points: map[[2]string]map[int64]Balance{}}
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return statements{}, err
		}
		f, err := parseFile(name)
		if err != nil {
			return statements{}, err
		}
		if f.Message != "camt.053" {
			continue
		}
		st.credits = append(st.credits, f.Credits...)
		st.entries = append(st.entries, f.Entries...)
		for _, b := range f.Balances {
			if at, ok := balanceTime(b); ok {
				st.add(b, at)
			}
		}
	}
	return st, nil
}

func parseFile(name string) (File, error) {
	r, err := os.Open(name)
	if err != nil {
		return File{}, fmt.Errorf("camt statements: %w", err)
	}
	defer r.Close()
	f, err := Parse(r)
	if err != nil {
		return File{}, fmt.Errorf("camt statements: %s: %w", filepath.Base(name), err)
	}
	return f, nil
}

// balanceTime is the instant a booked balance holds at: an opening
// balance at its date's start, a closing one (this statement's CLBD, or
// the next statement's PRCD of the day before) at its date's end. Other
// balances (available, interim) are not booked ends of a day.
func balanceTime(b Balance) (time.Time, bool) {
	if b.Type != "OPBD" && b.Type != "CLBD" && b.Type != "PRCD" {
		return time.Time{}, false
	}
	if !b.At.IsZero() {
		return b.At, true
	}
	day, err := time.Parse(time.DateOnly, b.Date)
	if err != nil {
		return time.Time{}, false
	}
	if b.Type == "OPBD" {
		return day, true
	}
	return day.AddDate(0, 0, 1), true
}

func (st *statements) add(b Balance, at time.Time) {
	key := [2]string{b.Account, b.Currency}
	if st.points[key] == nil {
		st.points[key] = map[int64]Balance{}
		st.accounts = append(st.accounts, key)
	}
	st.points[key][at.UnixNano()] = b
}

// balances are the accounts whose balances at from and at to are stated.
func (st statements) balances(from, to time.Time) []statement.Balance {
	var out []statement.Balance
	for _, key := range st.accounts {
		opening, ok1 := st.points[key][from.UnixNano()]
		closing, ok2 := st.points[key][to.UnixNano()]
		if ok1 && ok2 {
			out = append(out, statement.Balance{Rail: rail, Account: key[0], Currency: key[1],
				Opening: opening.Amount, Closing: closing.Amount, From: from.UTC(), To: to.UTC()})
		}
	}
	return out
}
