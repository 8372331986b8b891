package reconcile

import (
	"reflect"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/workers/rails/statement"
)

var day = time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)

// rec is a successful record of amount (a decimal string) ZAR out on BANK.
func rec(ref, amount string) statement.Record {
	return statement.Record{Rail: "BANK", Ref: ref, Direction: statement.Out, Amount: decimal.RequireFromString(amount),
		Currency: "ZAR", Status: statement.Success, At: day.Add(time.Hour)}
}

func with(r statement.Record, edit func(*statement.Record)) statement.Record {
	edit(&r)
	return r
}

func TestMatch(t *testing.T) {
	t.Parallel()
	type found struct{ kind, ref string }
	for _, c := range []struct {
		name             string
		provider, ledger []statement.Record
		nearby           []statement.Record // the ledger's
		providerNearby   []statement.Record
		matched          int
		want             []found
	}{
		{name: "a clean day", provider: []statement.Record{rec("a", "10"), rec("b", "20.5")},
			ledger: []statement.Record{rec("b", "20.50"), rec("a", "10.00")}, matched: 2},
		{name: "nothing on either side"},
		{name: "in the provider only", provider: []statement.Record{rec("a", "10"), rec("b", "1")},
			ledger: []statement.Record{rec("a", "10")}, matched: 1, want: []found{{domain.BreakProviderOnly, "b"}}},
		{name: "in the ledger only", provider: []statement.Record{rec("a", "10")},
			ledger: []statement.Record{rec("a", "10"), rec("c", "3")}, matched: 1, want: []found{{domain.BreakLedgerOnly, "c"}}},
		{name: "a cent off", provider: []statement.Record{rec("a", "10.01")}, ledger: []statement.Record{rec("a", "10.00")},
			want: []found{{domain.BreakAmountDiffers, "a"}}},
		{name: "another currency", provider: []statement.Record{with(rec("a", "10"), func(r *statement.Record) { r.Currency = "KES" })},
			ledger: []statement.Record{rec("a", "10")}, want: []found{{domain.BreakAmountDiffers, "a"}}},
		{name: "another direction", provider: []statement.Record{with(rec("a", "10"), func(r *statement.Record) { r.Direction = statement.In })},
			ledger: []statement.Record{rec("a", "10")}, want: []found{{domain.BreakAmountDiffers, "a"}}},
		{name: "a success reversed", provider: []statement.Record{with(rec("a", "10"), func(r *statement.Record) { r.Status = statement.Reversed })},
			ledger: []statement.Record{rec("a", "10")}, want: []found{{domain.BreakStatusDiffers, "a"}}},
		{name: "failed at the provider, paid in the ledger",
			provider: []statement.Record{with(rec("a", "10"), func(r *statement.Record) { r.Status = statement.Failed })},
			ledger:   []statement.Record{rec("a", "10")}, want: []found{{domain.BreakStatusDiffers, "a"}}},
		{name: "failed on both sides", provider: []statement.Record{with(rec("a", "10"), func(r *statement.Record) { r.Status = statement.Failed })},
			ledger: []statement.Record{with(rec("a", "10"), func(r *statement.Record) { r.Status = statement.Failed })}, matched: 1},
		{name: "a failure on one side alone moved no money",
			provider: []statement.Record{with(rec("a", "10"), func(r *statement.Record) { r.Status = statement.Failed })},
			ledger:   []statement.Record{with(rec("b", "10"), func(r *statement.Record) { r.Status = statement.Failed })}},
		{name: "money coming in, pending at the provider",
			provider: []statement.Record{with(rec("a", "10"), func(r *statement.Record) { r.Status, r.Direction = statement.Pending, statement.In })}},
		{name: "a payout pending at the provider that the ledger lacks",
			provider: []statement.Record{with(rec("a", "10"), func(r *statement.Record) { r.Status = statement.Pending })},
			want:     []found{{domain.BreakProviderOnly, "a"}}},
		{name: "pending at the provider, paid in the ledger",
			provider: []statement.Record{with(rec("a", "10"), func(r *statement.Record) { r.Status = statement.Pending })},
			ledger:   []statement.Record{rec("a", "10")}, want: []found{{domain.BreakStatusDiffers, "a"}}},
		{name: "the same reference on another rail",
			provider: []statement.Record{with(rec("a", "10"), func(r *statement.Record) { r.Rail = "MOMO" })},
			ledger:   []statement.Record{rec("a", "10")},
			want:     []found{{domain.BreakLedgerOnly, "a"}, {domain.BreakProviderOnly, "a"}}},
		{name: "the ledger's side just outside the window", provider: []statement.Record{rec("a", "10")},
			nearby: []statement.Record{rec("a", "10")}, matched: 1},
		{name: "reversed at the provider days after the ledger's payout",
			provider: []statement.Record{with(rec("a", "10"), func(r *statement.Record) { r.Status = statement.Reversed })},
			nearby:   []statement.Record{rec("a", "10")}, want: []found{{domain.BreakStatusDiffers, "a"}}},
		{name: "a nearby record the provider does not list is another window's",
			provider: []statement.Record{rec("a", "10")}, ledger: []statement.Record{rec("a", "10")},
			nearby: []statement.Record{rec("b", "10")}, matched: 1},
		{name: "the provider's side just outside the window", ledger: []statement.Record{rec("a", "10")},
			providerNearby: []statement.Record{rec("a", "10")}, matched: 1},
		{name: "a cent off, the provider's side just outside the window", ledger: []statement.Record{rec("a", "10")},
			providerNearby: []statement.Record{rec("a", "10.01")}, want: []found{{domain.BreakAmountDiffers, "a"}}},
		{name: "both sides outside the window are another window's",
			providerNearby: []statement.Record{rec("a", "10")}, nearby: []statement.Record{rec("b", "10")}},
		{name: "listed twice by the provider", provider: []statement.Record{rec("a", "10"), rec("a", "10")},
			ledger: []statement.Record{rec("a", "10")}, matched: 1, want: []found{{domain.BreakProviderOnly, "a"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			m := Match(Side{Window: c.provider, Nearby: c.providerNearby}, Side{Window: c.ledger, Nearby: c.nearby})
			var got []found
			for _, f := range m.Findings {
				got = append(got, found{f.Kind, f.Ref})
				if (f.Provider == nil) != (f.Kind == domain.BreakLedgerOnly) || (f.Ledger == nil) != (f.Kind == domain.BreakProviderOnly) {
					t.Errorf("%s %s: provider %v, ledger %v: the sides do not fit the kind", f.Kind, f.Ref, f.Provider, f.Ledger)
				}
			}
			if m.Matched != c.matched || !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %d matched, %v; want %d matched, %v", m.Matched, got, c.matched, c.want)
			}
		})
	}
}
