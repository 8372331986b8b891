package domain

import (
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

func foundBreak(t *testing.T) Break {
	t.Helper()
	events, err := DecideFindBreak(Break{}, testFinding())
	if err != nil || len(events) != 1 {
		t.Fatalf("got %v, %v, want one break_found", events, err)
	}
	return ApplyBreak(Break{}, events[0])
}

func testFinding() FindBreak {
	return FindBreak{Kind: BreakAmountDiffers, Rail: "BANK", Ref: "ref-1",
		Provider: &BreakSide{Direction: "out", Amount: decimal.RequireFromString("10.01"), Currency: "ZAR"},
		Ledger:   &BreakSide{Direction: "out", Amount: decimal.RequireFromString("10.00"), Currency: "ZAR"},
		From:     testNow.Add(-24 * time.Hour), To: testNow, Now: testNow}
}

func TestDecideFindBreak(t *testing.T) {
	t.Parallel()
	b := foundBreak(t)
	if b.ID != BreakID("BANK", BreakAmountDiffers, "ref-1") || b.Status != BreakOpen || b.Ref != "ref-1" ||
		!b.Provider.Amount.Equal(decimal.RequireFromString("10.01")) || !b.FoundAt.Equal(testNow) {
		t.Fatalf("got %+v, want an open break of BANK ref-1 with the provider's 10.01", b)
	}
	if again, err := DecideFindBreak(b, testFinding()); err != nil || len(again) != 0 {
		t.Errorf("the same finding again: got %v, %v, want nothing", again, err)
	}
	resolved := ApplyBreak(b, ReconciliationBreakResolved{Reason: "fee", By: "ann", At: testNow})
	if again, err := DecideFindBreak(resolved, testFinding()); err != nil || len(again) != 0 {
		t.Errorf("the finding of a resolved break: got %v, %v, want nothing", again, err)
	}
	if BreakID("BANK", BreakAmountDiffers, "ref-1") == BreakID("BANK", BreakStatusDiffers, "ref-1") ||
		BreakID("BANK", BreakLedgerOnly, "a") == BreakID("MOMO", BreakLedgerOnly, "a") {
		t.Error("breaks of another kind or rail share an id")
	}
	for _, c := range []struct {
		name  string
		edit  func(*FindBreak)
		field string
	}{
		{"unknown kind", func(f *FindBreak) { f.Kind = "other" }, "kind"},
		{"a kind's part", func(f *FindBreak) { f.Kind = "provider" }, "kind"},
		{"no reference", func(f *FindBreak) { f.Ref = "" }, "ref"},
		{"no rail", func(f *FindBreak) { f.Rail = "" }, "ref"},
		{"empty window", func(f *FindBreak) { f.To = f.From }, "window"},
	} {
		f := testFinding()
		c.edit(&f)
		_, err := DecideFindBreak(Break{}, f)
		if err == nil {
			t.Errorf("%s: got no error", c.name)
			continue
		}
		wantError(t, err, Invalid, "validation_failed", c.field)
	}
}

func TestDecideResolveBreak(t *testing.T) {
	t.Parallel()
	b := foundBreak(t)
	events, err := DecideResolveBreak(b, ResolveBreak{Reason: "  bank fee, booked by hand  ", By: "ann", Now: testNow})
	if err != nil || len(events) != 1 {
		t.Fatalf("got %v, %v, want one break_resolved", events, err)
	}
	r := ApplyBreak(b, events[0])
	if r.Status != BreakResolved || r.Reason != "bank fee, booked by hand" || r.ResolvedBy != "ann" || r.ResolvedAt == nil {
		t.Fatalf("got %+v, want resolved by ann with the trimmed reason", r)
	}
	_, err = DecideResolveBreak(r, ResolveBreak{Reason: "again", By: "bob", Now: testNow})
	wantError(t, err, Conflict, "break_resolved")
	_, err = DecideResolveBreak(Break{}, ResolveBreak{Reason: "x", By: "ann", Now: testNow})
	wantError(t, err, NotFound, "not_found")
	_, err = DecideResolveBreak(b, ResolveBreak{Reason: " ", By: "ann", Now: testNow})
	wantError(t, err, Invalid, "validation_failed", "reason")
	_, err = DecideResolveBreak(b, ResolveBreak{Reason: strings.Repeat("x", maxBreakReason+1), By: "ann", Now: testNow})
	wantError(t, err, Invalid, "validation_failed", "reason")
	_, err = DecideResolveBreak(b, ResolveBreak{Reason: "fee", Now: testNow})
	wantError(t, err, Invalid, "validation_failed", "actor")
}
