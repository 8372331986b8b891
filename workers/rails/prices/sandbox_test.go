package prices

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ledger/ledger/domain"
	"github.com/shopspring/decimal"
)

// Both sources satisfy Source.
var (
	_ Source = (*Sandbox)(nil)
	_ Source = (*CoinGecko)(nil)
)

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// wantPrices fails unless got holds exactly want, compared with Equal.
func wantPrices(t *testing.T, got domain.BTCPrices, want map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for cur, w := range want {
		if g, ok := got[cur]; !ok || !g.Equal(dec(w)) {
			t.Fatalf("got %s %s (present %t), want %s", cur, g, ok, w)
		}
	}
}

// mustPrices calls s.BTCPrices, failing the test on an error.
func mustPrices(t *testing.T, s Source) domain.BTCPrices {
	t.Helper()
	p, err := s.BTCPrices(context.Background())
	if err != nil {
		t.Fatalf("btc prices: %v", err)
	}
	return p
}

// clockAt is a fixed clock; start is a multiple of 10m, so phase 0 of a 10m period.
func clockAt(t time.Time) func() time.Time { return func() time.Time { return t } }

var start = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func TestParseTable(t *testing.T) {
	t.Parallel()
	got, err := ParseTable(" ZAR = 1850000.55 ,KES=13000000,NGN=160000000,GBP=80000,EUR=92000,USD=1E5")
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	wantPrices(t, got, map[string]string{"ZAR": "1850000.55", "KES": "13000000", "NGN": "160000000",
		"GBP": "80000", "EUR": "92000", "USD": "100000"})
	wantPrices(t, DefaultTable(), map[string]string{"ZAR": "1800000", "KES": "12900000", "NGN": "150000000",
		"GBP": "76000", "EUR": "87000", "USD": "100000"})

	const rest = ",KES=13000000,NGN=160000000,GBP=80000,EUR=92000,USD=100000"
	for _, tc := range []struct{ in, want string }{
		{"", "not CURRENCY=price"},
		{"ZAR=1850000,," + rest[1:], "not CURRENCY=price"},
		{"ZAR 1850000" + rest, "not CURRENCY=price"},
		{"zar=1850000" + rest, "unknown currency"},
		{"BTC=1" + rest, "unknown currency"},
		{"ZAR=1,85" + rest, "not CURRENCY=price"},
		{"ZAR=abc" + rest, "not a decimal above zero"},
		{"ZAR=0" + rest, "not a decimal above zero"},
		{"ZAR=-1850000" + rest, "not a decimal above zero"},
		{"ZAR=1850000,ZAR=1850001" + rest, "ZAR given twice"},
		{rest[1:], "no ZAR price"},
	} {
		if _, err := ParseTable(tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseTable(%q): got %v, want an error saying %q", tc.in, err, tc.want)
		}
	}
}

func TestParseDrift(t *testing.T) {
	t.Parallel()
	if d, err := ParseDrift(""); err != nil || !d.Amplitude.IsZero() || d.Period != 0 {
		t.Fatalf(`ParseDrift(""): got %+v, %v, want no drift`, d, err)
	}
	d, err := ParseDrift("0.02/10m")
	if err != nil || !d.Amplitude.Equal(dec("0.02")) || d.Period != 10*time.Minute {
		t.Fatalf("ParseDrift(0.02/10m): got %+v, %v, want 0.02 over 10m", d, err)
	}
	for _, in := range []string{"0.02", "0.02/", "/10m", "abc/10m", "-0.01/10m", "1/10m", "0.02/xyz", "0.02/0s", "0.02/-1m", "0.02/10m/1"} {
		if d, err := ParseDrift(in); err == nil {
			t.Errorf("ParseDrift(%q): got %+v, want an error", in, d)
		}
	}
}

func TestSandboxFixed(t *testing.T) {
	t.Parallel()
	table := DefaultTable()
	s := NewSandbox(table, Drift{}, clockAt(start.Add(17*time.Second)))
	got := mustPrices(t, s)
	got["ZAR"] = dec("1")   // the caller's copy
	table["KES"] = dec("1") // the table given to NewSandbox
	wantPrices(t, mustPrices(t, s), map[string]string{"ZAR": "1800000", "KES": "12900000", "NGN": "150000000",
		"GBP": "76000", "EUR": "87000", "USD": "100000"})
}

func TestSandboxDrift(t *testing.T) {
	t.Parallel()
	drift := Drift{Amplitude: dec("0.02"), Period: 10 * time.Minute}
	at := func(offset time.Duration) domain.BTCPrices {
		return mustPrices(t, NewSandbox(DefaultTable(), drift, clockAt(start.Add(offset))))
	}
	// The wave's corners are exact: table, +2%, table, -2%, table again next period.
	for _, tc := range []struct {
		offset   time.Duration
		zar, usd string
	}{
		{0, "1800000", "100000"},
		{150 * time.Second, "1836000", "102000"},
		{300 * time.Second, "1800000", "100000"},
		{450 * time.Second, "1764000", "98000"},
		{600 * time.Second, "1800000", "100000"},
		{75 * time.Second, "1818000", "101000"},
		{-150 * time.Second, "1764000", "98000"}, // the previous period
	} {
		if got := at(tc.offset); !got["ZAR"].Equal(dec(tc.zar)) || !got["USD"].Equal(dec(tc.usd)) {
			t.Errorf("at +%s: got ZAR %s USD %s, want %s %s", tc.offset, got["ZAR"], got["USD"], tc.zar, tc.usd)
		}
	}

	// Over a full period, in uneven steps, every price stays within ±2% and reaches both ends.
	table := DefaultTable()
	lowest, highest := map[string]decimal.Decimal{}, map[string]decimal.Decimal{}
	for offset := time.Duration(0); offset <= drift.Period; offset += 1500 * time.Millisecond {
		for cur, p := range at(offset) {
			lo, hi := table[cur].Mul(dec("0.98")), table[cur].Mul(dec("1.02"))
			if p.LessThan(lo) || p.GreaterThan(hi) {
				t.Fatalf("%s at +%s: got %s, want within [%s, %s]", cur, offset, p, lo, hi)
			}
			if l, ok := lowest[cur]; !ok || p.LessThan(l) {
				lowest[cur] = p
			}
			if h, ok := highest[cur]; !ok || p.GreaterThan(h) {
				highest[cur] = p
			}
		}
	}
	for cur, p := range table {
		if !lowest[cur].Equal(p.Mul(dec("0.98"))) || !highest[cur].Equal(p.Mul(dec("1.02"))) {
			t.Errorf("%s: got range [%s, %s], want [%s, %s]", cur, lowest[cur], highest[cur], p.Mul(dec("0.98")), p.Mul(dec("1.02")))
		}
	}
}

func TestSandboxesAgree(t *testing.T) {
	t.Parallel()
	drift, err := ParseDrift("0.05/7m13s")
	if err != nil {
		t.Fatal(err)
	}
	for _, offset := range []time.Duration{0, time.Nanosecond, 99 * time.Second, 3*time.Hour + 17*time.Millisecond} {
		now := clockAt(start.Add(offset))
		a := mustPrices(t, NewSandbox(DefaultTable(), drift, now))
		b := mustPrices(t, NewSandbox(DefaultTable(), drift, now))
		for cur, p := range a {
			if !p.Equal(b[cur]) {
				t.Fatalf("%s at +%s: got %s and %s, want the same price", cur, offset, p, b[cur])
			}
		}
	}
}
