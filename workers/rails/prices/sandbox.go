// Package prices supplies the price of 1 BTC in every currency the ledger
// quotes (domain.QuotePayment): a configurable sandbox table and the
// CoinGecko simple-price API, behind one Source interface.
package prices

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/ledger/ledger/domain"
	"github.com/shopspring/decimal"
)

// Source is where payments get their BTC prices.
type Source interface {
	BTCPrices(ctx context.Context) (domain.BTCPrices, error)
}

// currencies are the ones every Source prices: the fiat merchants' and
// payers' currencies, and USD for USDT.
var currencies = []string{"ZAR", "KES", "NGN", "GBP", "EUR", "USD"}

// DefaultTableString is the sandbox's price of 1 BTC per currency: round
// figures near late-2026 rates (USD 100,000; ZAR 18, KES 129, NGN 1,500,
// GBP 0.76 and EUR 0.87 to the dollar). It is the LEDGER_SANDBOX_PRICES default.
const DefaultTableString = "ZAR=1800000,KES=12900000,NGN=150000000,GBP=76000,EUR=87000,USD=100000"

// DefaultTable is DefaultTableString parsed; each call returns a new map.
func DefaultTable() domain.BTCPrices {
	t, err := ParseTable(DefaultTableString)
	if err != nil {
		panic("prices: DefaultTableString: " + err.Error()) // a constant, covered by tests
	}
	return t
}

// ParseTable reads "ZAR=1850000,KES=13000000,…": the price of 1 BTC in each
// currency, an exact decimal above zero. Every currency of DefaultTableString
// must appear exactly once, so a typo fails at startup rather than as a 503
// on the first payment in that currency.
func ParseTable(s string) (domain.BTCPrices, error) {
	t := domain.BTCPrices{}
	for pair := range strings.SplitSeq(s, ",") {
		cur, price, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if !ok {
			return nil, fmt.Errorf("price table: %q is not CURRENCY=price", pair)
		}
		cur = strings.TrimSpace(cur)
		if !slices.Contains(currencies, cur) {
			return nil, fmt.Errorf("price table: unknown currency %q (want %s)", cur, strings.Join(currencies, ", "))
		}
		if _, dup := t[cur]; dup {
			return nil, fmt.Errorf("price table: %s given twice", cur)
		}
		p, err := decimal.NewFromString(strings.TrimSpace(price))
		if err != nil || !p.IsPositive() {
			return nil, fmt.Errorf("price table: %s price %q is not a decimal above zero", cur, price)
		}
		t[cur] = p
	}
	for _, cur := range currencies {
		if _, ok := t[cur]; !ok {
			return nil, fmt.Errorf("price table: no %s price", cur)
		}
	}
	return t, nil
}

// Drift moves every sandbox price together by up to ±Amplitude (0.02 is
// ±2%) over each Period, so a payment's buffer and change refund are
// exercised. The zero Drift keeps the table fixed.
type Drift struct {
	Amplitude decimal.Decimal
	Period    time.Duration
}

// ParseDrift reads "amplitude/period", e.g. "0.02/10m", or "" for none.
// The amplitude is in [0, 1), so a price never reaches zero.
func ParseDrift(s string) (Drift, error) {
	if s == "" {
		return Drift{}, nil
	}
	amp, period, ok := strings.Cut(s, "/")
	if !ok {
		return Drift{}, fmt.Errorf("price drift: %q is not amplitude/period, e.g. 0.02/10m", s)
	}
	var d Drift
	var err error
	if d.Amplitude, err = decimal.NewFromString(amp); err != nil || d.Amplitude.IsNegative() || d.Amplitude.GreaterThanOrEqual(decimal.NewFromInt(1)) {
		return Drift{}, fmt.Errorf("price drift: amplitude %q is not a decimal in [0, 1)", amp)
	}
	if d.Period, err = time.ParseDuration(period); err != nil || d.Period <= 0 {
		return Drift{}, fmt.Errorf("price drift: period %q is not a positive duration", period)
	}
	return d, nil
}

// apply is price moved by the drift at now: price × (1 + Amplitude × w),
// where w is a triangle wave of the Unix time, 0 → +1 → 0 → −1 → 0 over
// each Period. It depends on the instant alone, so every process prices the
// same at the same time. The move is truncated toward the table price to
// 0.01, which keeps it within ±Amplitude exactly.
func (d Drift) apply(price decimal.Decimal, now time.Time) decimal.Decimal {
	if d.Amplitude.IsZero() || d.Period <= 0 {
		return price
	}
	p := int64(d.Period)
	x := now.UnixNano() % p
	if x < 0 { // before 1970
		x += p
	}
	// w = num / p with num in [-p, p], in decimal because 4x overflows int64
	// for periods past 73 years.
	dx, dp := decimal.NewFromInt(x), decimal.NewFromInt(p)
	x4 := dx.Mul(decimal.NewFromInt(4))
	var num decimal.Decimal
	switch {
	case x4.LessThanOrEqual(dp): // first quarter: 0 up to +1
		num = x4
	case x4.LessThanOrEqual(dp.Mul(decimal.NewFromInt(3))): // middle half: +1 down to -1
		num = dp.Mul(decimal.NewFromInt(2)).Sub(x4)
	default: // last quarter: -1 up to 0
		num = x4.Sub(dp.Mul(decimal.NewFromInt(4)))
	}
	move, _ := price.Mul(d.Amplitude).Mul(num).QuoRem(dp, 2) // QuoRem truncates toward zero
	return price.Add(move)
}

// Sandbox is the sandbox Source: a fixed table, optionally drifting.
type Sandbox struct {
	table domain.BTCPrices
	drift Drift
	now   func() time.Time
}

// NewSandbox prices from table (as ParseTable returns it) moved by drift at
// now(); a nil now is time.Now.
func NewSandbox(table domain.BTCPrices, drift Drift, now func() time.Time) *Sandbox {
	if now == nil {
		now = time.Now
	}
	return &Sandbox{table: maps.Clone(table), drift: drift, now: now}
}

// BTCPrices returns the table at this instant, as a new map the caller may keep.
func (s *Sandbox) BTCPrices(context.Context) (domain.BTCPrices, error) {
	now := s.now()
	out := make(domain.BTCPrices, len(s.table))
	for cur, p := range s.table {
		out[cur] = s.drift.apply(p, now)
	}
	return out, nil
}
