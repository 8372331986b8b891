package camt

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/workers/rails/statement"
)

func day(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

// copyStatements copies testdata/statements and extra files into a new directory.
func copyStatements(t *testing.T, extra map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	names, err := filepath.Glob("testdata/statements/*.xml")
	if err != nil || len(names) == 0 {
		t.Fatalf("testdata: %v", err)
	}
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		extra[filepath.Base(name)] = string(b)
	}
	for name, body := range extra {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestStatementsDay(t *testing.T) {
	t.Parallel()
	s := NewStatements("testdata/statements")
	from, to := day("2026-11-28"), day("2026-11-29")
	got, err := s.Records(context.Background(), from, to)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]statement.Record{
		"E-1128-1":      {Direction: statement.In, Amount: decimal.RequireFromString("120.50"), Status: statement.Success, At: from},
		"E-1128-2/TX-A": {Direction: statement.In, Amount: decimal.RequireFromString("10"), Status: statement.Success, At: from.Add(12 * time.Hour)},
		"E-1128-2/2":    {Direction: statement.In, Amount: decimal.RequireFromString("20"), Status: statement.Success, At: from.Add(12 * time.Hour)},
		"E-1128-3":      {Direction: statement.In, Amount: decimal.RequireFromString("250"), Status: statement.Reversed, At: from.Add(15 * time.Hour)},
		"E-1128-4":      {Direction: statement.Out, Amount: decimal.RequireFromString("5"), Status: statement.Success, At: to.Add(-time.Millisecond)},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d records %+v, want %d (not the pending entry, nor those booked at the window's end or the day before)", len(got), got, len(want))
	}
	for _, r := range got {
		w, ok := want[r.Ref]
		if !ok || r.Rail != "BANK_TRANSFER" || r.Currency != "EUR" || r.Direction != w.Direction || !r.Amount.Equal(w.Amount) ||
			r.Status != w.Status || !r.At.Equal(w.At) {
			t.Errorf("got %+v, want %+v", r, w)
		}
	}
	bal, err := s.Balances(context.Background(), from, to)
	if err != nil {
		t.Fatal(err)
	}
	if len(bal) != 1 || bal[0].Account != "DE89370400440532013000" || bal[0].Currency != "EUR" || bal[0].Rail != "BANK_TRANSFER" ||
		!bal[0].Opening.Equal(decimal.RequireFromString("1250")) || !bal[0].Closing.Equal(decimal.RequireFromString("1145.50")) ||
		!bal[0].From.Equal(from) || !bal[0].To.Equal(to) {
		t.Fatalf("got balances %+v, want EUR 1250 opening and 1145.50 closing", bal)
	}
}

// A window of two days opens with the first statement's OPBD and closes
// with the second's CLBD.
func TestStatementsTwoDays(t *testing.T) {
	t.Parallel()
	s := NewStatements("testdata/statements")
	from, to := day("2026-11-27"), day("2026-11-29")
	got, err := s.Records(context.Background(), from, to)
	if err != nil || len(got) != 6 {
		t.Fatalf("got %d records, %v; want 6", len(got), err)
	}
	bal, err := s.Balances(context.Background(), from, to)
	if err != nil || len(bal) != 1 || !bal[0].Opening.Equal(decimal.NewFromInt(1000)) || !bal[0].Closing.Equal(decimal.RequireFromString("1145.5")) {
		t.Fatalf("got %+v, %v; want 1000 to 1145.50", bal, err)
	}
}

// A statement delivered twice counts once; a directory without the
// window's statement, or with a file that cannot be read, or whose
// statements disagree about an entry, is an error, never a statement.
func TestStatementsRefuse(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	from, to := day("2026-11-28"), day("2026-11-29")
	b, err := os.ReadFile("testdata/statements/camt053_20261128.xml")
	if err != nil {
		t.Fatal(err)
	}
	again := NewStatements(copyStatements(t, map[string]string{"again.xml": string(b)}))
	if got, err := again.Records(ctx, from, to); err != nil || len(got) != 5 {
		t.Fatalf("a statement delivered twice: got %d records, %v; want 5", len(got), err)
	}
	cases := []struct {
		name     string
		dir      string
		from, to time.Time
	}{
		{"no statement for the window", "testdata/statements", to, to.AddDate(0, 0, 1)},
		{"no directory", filepath.Join(t.TempDir(), "missing"), from, to},
		{"an unreadable file", copyStatements(t, map[string]string{"broken.xml": "<Document><BkToCstmrStmt>"}), from, to},
		{"an entry two ways", copyStatements(t, map[string]string{"other.xml": strings.Replace(string(b), "120.50</Amt>", "121.50</Amt>", 1)}), from, to},
	}
	for _, c := range cases {
		s := NewStatements(c.dir)
		if got, err := s.Records(ctx, c.from, c.to); err == nil {
			t.Errorf("%s: got %d records and no error", c.name, len(got))
		}
		if got, err := s.Balances(ctx, c.from, c.to); err == nil && c.name != "an entry two ways" {
			t.Errorf("%s: got balances %+v and no error", c.name, got)
		}
	}
}
