package domain

import (
	"errors"
	"math"
	"testing"

	"github.com/shopspring/decimal"
)

// quoteDec is a decimal written as a string, so no expectation passes through a float.
func quoteDec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// quotePrices is a realistic table: 1 BTC = 1,850,000 ZAR = 100,000 USD.
func quotePrices() BTCPrices {
	return BTCPrices{"ZAR": quoteDec("1850000"), "KES": quoteDec("13000000"), "NGN": quoteDec("160000000"),
		"GBP": quoteDec("80000"), "EUR": quoteDec("92000"), "USD": quoteDec("100000")}
}

// withPrice is quotePrices with cur set to p ("" deletes it).
func withPrice(cur, p string) BTCPrices {
	prices := quotePrices()
	if p == "" {
		delete(prices, cur)
	} else {
		prices[cur] = quoteDec(p)
	}
	return prices
}

// wantQuote is a Quote with its decimals written as strings.
type wantQuote struct {
	price, fees, dest     string
	sats, buffer, deposit int64
}

func TestQuotePayment(t *testing.T) {
	t.Parallel()
	in := func(from, dest string, amount int64, buffer, fee string, prices BTCPrices) QuoteInput {
		return QuoteInput{FromCurrency: from, DestinationCurrency: dest, Amount: amount,
			BufferRate: quoteDec(buffer), OTCFeeRate: quoteDec(fee), Prices: prices}
	}
	p := quotePrices()
	for _, tc := range []struct {
		name string
		in   QuoteInput
		want wantQuote
	}{
		// Lightning: 1010 ZAR × 10^8 / 1,850,000 = 54594.59… sats, rounded up.
		{"lightning", in("BTC", "ZAR", 1000, "0", "0.01", p), wantQuote{"1850000", "10", "1000", 54595, 0, 0}},
		{"lightning buffer 0.10", in("BTC", "ZAR", 1000, "0.10", "0.01", p), wantQuote{"1850000", "10", "1000", 60055, 5460, 0}},
		{"lightning fee rate 0", in("BTC", "KES", 1000, "0", "0", p), wantQuote{"13000000", "0", "1000", 7693, 0, 0}},
		{"sats exactly on boundary", in("BTC", "ZAR", 1000, "0", "0", withPrice("ZAR", "1000000")), wantQuote{"1000000", "0", "1000", 100000, 0, 0}},
		{"sats just above boundary", in("BTC", "ZAR", 1000, "0", "0", withPrice("ZAR", "999999.99")), wantQuote{"999999.99", "0", "1000", 100001, 0, 0}},
		{"buffer exactly whole", in("BTC", "ZAR", 1000, "0.10", "0", withPrice("ZAR", "1000000")), wantQuote{"1000000", "0", "1000", 110000, 10000, 0}},
		{"buffer just above whole", in("BTC", "ZAR", 1000, "0.10", "0", withPrice("ZAR", "999999.99")), wantQuote{"999999.99", "0", "1000", 110002, 10001, 0}},
		{"fees exactly on cent", in("BTC", "ZAR", 1234, "0", "0.01", p), wantQuote{"1850000", "12.34", "1234", 67370, 0, 0}},
		{"fees just above cent", in("BTC", "ZAR", 1001, "0", "0.015", p), wantQuote{"1850000", "15.02", "1001", 54920, 0, 0}},
		{"lightning 1,000,000 ZAR", in("BTC", "ZAR", 1_000_000, "0.10", "0.01", p), wantQuote{"1850000", "10000", "1000000", 60054055, 5459460, 0}},
		{"lightning 50,000,000 NGN", in("BTC", "NGN", 50_000_000, "0.10", "0.01", p), wantQuote{"160000000", "500000", "50000000", 34718750, 3156250, 0}},

		// Fiat to fiat: through BTC at both prices; the deposit rounds up to the cent.
		{"fiat deposit exactly on cent", in("KES", "ZAR", 500, "0.05", "0.01", p), wantQuote{"1850000", "5", "500", 28663, 1365, 372619}},
		{"fiat deposit above cent", in("EUR", "ZAR", 500, "0.05", "0.01", p), wantQuote{"1850000", "5", "500", 28663, 1365, 2637}}, // 26.36996 EUR
		{"fiat 50,000,000 NGN", in("GBP", "NGN", 50_000_000, "0.10", "0.01", p), wantQuote{"160000000", "500000", "50000000", 34718750, 3156250, 2777500}},

		// Onramp: Amount and fees are sats; btcPrice is the source's.
		{"onramp", in("GBP", "BTC", 100_000, "0.10", "0.01", p), wantQuote{"80000", "1000", "100000", 111100, 10100, 8888}},
		{"onramp deposit exactly on cent", in("GBP", "BTC", 111_100, "0", "0", p), wantQuote{"80000", "0", "111100", 111100, 0, 8888}},
		{"onramp deposit above cent", in("GBP", "BTC", 111_101, "0", "0", p), wantQuote{"80000", "0", "111101", 111101, 0, 8889}}, // 88.8808 GBP
		{"onramp fees round up to sat", in("NGN", "BTC", 100_001, "0", "0.015", p), wantQuote{"160000000", "1501", "100001", 101502, 0, 16240320}},

		// USDT: the deposit is fixed; sats round down, fees up, the merchant's amount down.
		{"usdt", in("USDT", "ZAR", 10_000, "0", "0.01", p), wantQuote{"1850000", "18.5", "1831.5", 100000, 0, 10000}},
		{"usdt rounding", in("USDT", "ZAR", 151, "0", "0.01", withPrice("USD", "99999.99")), wantQuote{"1850000", "0.28", "27.65", 1510, 0, 151}},
		{"usdt to btc", in("USDT", "BTC", 10_000, "0", "0.01", p), wantQuote{"100000", "1000", "99000", 100000, 0, 10000}},
		{"usdt to btc fees round up", in("USDT", "BTC", 10_001, "0", "0.015", p), wantQuote{"100000", "1501", "98509", 100010, 0, 10001}},
		{"usdt sats just below boundary", in("USDT", "BTC", 10_000, "0", "0", withPrice("USD", "100000.01")), wantQuote{"100000.01", "0", "99999", 99999, 0, 10000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := QuotePayment(tc.in)
			if err != nil {
				t.Fatalf("got error %v, want %+v", err, tc.want)
			}
			w := tc.want
			if !got.BTCPrice.Equal(quoteDec(w.price)) || !got.OTCFees.Equal(quoteDec(w.fees)) || !got.DestinationAmount.Equal(quoteDec(w.dest)) ||
				got.AmountSats != w.sats || got.BufferAmountSats != w.buffer || got.SourceAmountMinor != w.deposit {
				t.Fatalf("got price %s fees %s dest %s sats %d buffer %d deposit %d, want %+v",
					got.BTCPrice, got.OTCFees, got.DestinationAmount, got.AmountSats, got.BufferAmountSats, got.SourceAmountMinor, w)
			}
		})
	}
}

func TestQuotePaymentErrors(t *testing.T) {
	t.Parallel()
	ok := QuoteInput{FromCurrency: "EUR", DestinationCurrency: "ZAR", Amount: 500, OTCFeeRate: quoteDec("0.01"), Prices: quotePrices()}
	with := func(change func(*QuoteInput)) QuoteInput {
		in := ok
		change(&in)
		return in
	}
	for _, tc := range []struct {
		name    string
		in      QuoteInput
		noPrice bool // want ErrPriceUnavailable
		caller  bool // want a 400 naming amount rather than a plain error
	}{
		{"missing destination price", with(func(in *QuoteInput) { in.Prices = withPrice("ZAR", "") }), true, false},
		{"missing source price", with(func(in *QuoteInput) { in.Prices = withPrice("EUR", "") }), true, false},
		{"zero price", with(func(in *QuoteInput) { in.Prices = withPrice("ZAR", "0") }), true, false},
		{"negative price", with(func(in *QuoteInput) { in.Prices = withPrice("EUR", "-92000") }), true, false},
		{"nil prices", with(func(in *QuoteInput) { in.Prices = nil }), true, false},
		{"missing usd for usdt", with(func(in *QuoteInput) { in.FromCurrency, in.Prices = "USDT", withPrice("USD", "") }), true, false},
		{"missing onramp source price", with(func(in *QuoteInput) { in.DestinationCurrency, in.Prices = "BTC", withPrice("EUR", "") }), true, false},
		{"unsupported source", with(func(in *QuoteInput) { in.FromCurrency = "ZAR" }), false, false},
		{"unsupported destination", with(func(in *QuoteInput) { in.DestinationCurrency = "USD" }), false, false},
		{"lowercase currency", with(func(in *QuoteInput) { in.FromCurrency = "eur" }), false, false},
		{"btc to btc", with(func(in *QuoteInput) { in.FromCurrency, in.DestinationCurrency = "BTC", "BTC" }), false, false},
		{"usdt with buffer", with(func(in *QuoteInput) { in.FromCurrency, in.BufferRate = "USDT", quoteDec("0.01") }), false, false},
		{"zero amount", with(func(in *QuoteInput) { in.Amount = 0 }), false, false},
		{"negative amount", with(func(in *QuoteInput) { in.Amount = -500 }), false, false},
		{"negative buffer", with(func(in *QuoteInput) { in.BufferRate = quoteDec("-0.01") }), false, false},
		{"negative fee rate", with(func(in *QuoteInput) { in.OTCFeeRate = quoteDec("-0.01") }), false, false},
		{"fee rate 1", with(func(in *QuoteInput) { in.OTCFeeRate = quoteDec("1") }), false, false},
		{"sats overflow int64", with(func(in *QuoteInput) { in.Amount, in.Prices = math.MaxInt64, withPrice("ZAR", "1") }), false, false},
		{"deposit overflows int64", with(func(in *QuoteInput) { in.Prices = withPrice("EUR", "1e30") }), false, false},
		{"usdt fees exceed a tiny payment", with(func(in *QuoteInput) {
			in.FromCurrency, in.Amount, in.Prices = "USDT", 1, withPrice("ZAR", "50000") // worth 0.005 ZAR
		}), false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			q, err := QuotePayment(tc.in)
			if err == nil {
				t.Fatalf("got %+v, want an error", q)
			}
			if got := errors.Is(err, ErrPriceUnavailable); got != tc.noPrice {
				t.Fatalf("got %v (ErrPriceUnavailable %t), want ErrPriceUnavailable %t", err, got, tc.noPrice)
			}
			if tc.caller {
				wantError(t, err, Invalid, "validation_failed", "amount")
			} else if ErrorKind(err) != Internal {
				t.Fatalf("got kind %d for %v, want a plain error", ErrorKind(err), err)
			}
		})
	}
}

// FuzzQuotePayment prices random inputs, unsupported currencies and bad
// prices included: no panic, and on success the documented rounding holds
// as tight bounds, checked exactly in decimal.
func FuzzQuotePayment(f *testing.F) {
	f.Add(uint8(0), uint8(0), int64(1000), uint16(1000), uint16(100), int64(1850000), int64(1850000), uint8(0))
	f.Add(uint8(1), uint8(0), int64(500), uint16(500), uint16(100), int64(13000000), int64(1850000), uint8(0))
	f.Add(uint8(3), uint8(3), int64(100000), uint16(1000), uint16(150), int64(8000000), int64(1), uint8(2))
	f.Add(uint8(5), uint8(0), int64(151), uint16(0), uint16(100), int64(9999999), int64(185000055), uint8(2))
	f.Add(uint8(5), uint8(3), int64(10001), uint16(0), uint16(150), int64(100000), int64(0), uint8(0))
	f.Add(uint8(2), uint8(2), int64(math.MaxInt64), uint16(1000), uint16(9999), int64(1), int64(-5), uint8(9))
	sources := []string{"BTC", "KES", "NGN", "GBP", "EUR", "USDT", "ZAR"}
	dests := []string{"ZAR", "KES", "NGN", "BTC", "USD"}
	f.Fuzz(func(t *testing.T, from, dest uint8, amount int64, bufferBP, feeBP uint16, srcPrice, destPrice int64, places uint8) {
		in := QuoteInput{FromCurrency: sources[int(from)%len(sources)], DestinationCurrency: dests[int(dest)%len(dests)], Amount: amount,
			BufferRate: decimal.New(int64(bufferBP%1001), -4), OTCFeeRate: decimal.New(int64(feeBP%10000), -4), Prices: BTCPrices{}}
		if in.FromCurrency == "USDT" && bufferBP%2 == 0 {
			in.BufferRate = decimal.Zero // mostly valid USDT inputs, sometimes a buffer
		}
		srcKey := in.FromCurrency
		if srcKey == "USDT" {
			srcKey = "USD"
		}
		in.Prices[srcKey] = decimal.New(srcPrice, -int32(places%10))
		if in.DestinationCurrency != "BTC" {
			in.Prices[in.DestinationCurrency] = decimal.New(destPrice, -int32(places%10))
		}
		q, err := QuotePayment(in)
		if err != nil {
			return
		}
		checkQuote(t, in, q)
	})
}

// checkQuote fails unless q is in's quote by the rounding QuotePayment documents.
func checkQuote(t *testing.T, in QuoteInput, q Quote) {
	t.Helper()
	amount := decimal.NewFromInt(in.Amount)
	sats, buffer := decimal.NewFromInt(q.AmountSats), decimal.NewFromInt(q.BufferAmountSats)
	base := sats.Sub(buffer)
	deposit := decimal.NewFromInt(q.SourceAmountMinor).Shift(-2)
	cent, one := quoteDec("0.01"), decimal.NewFromInt(1)
	// within says lo ≤ x < lo + unit: x is lo rounded up to the unit.
	within := func(what string, x, lo, unit decimal.Decimal) {
		if x.LessThan(lo) || !x.Sub(unit).LessThan(lo) {
			t.Fatalf("%s: got %s, want %s rounded up to %s (%+v from %+v)", what, x, lo, unit, q, in)
		}
	}
	if base.IsNegative() || buffer.IsNegative() || q.OTCFees.IsNegative() || q.DestinationAmount.IsNegative() {
		t.Fatalf("got %+v from %+v, want no negative amounts", q, in)
	}
	if in.FromCurrency == "USDT" {
		pUSD := in.Prices["USD"]
		worth := amount.Shift(-2)
		if q.SourceAmountMinor != in.Amount || q.BufferAmountSats != 0 ||
			sats.Mul(pUSD).Shift(-8).GreaterThan(worth) || !sats.Add(one).Mul(pUSD).Shift(-8).GreaterThan(worth) {
			t.Fatalf("got %+v from %+v, want the most whole sats %s USDT buys", q, in, worth)
		}
		gross, unit := sats, one
		if in.DestinationCurrency != "BTC" {
			gross, unit = sats.Mul(in.Prices[in.DestinationCurrency]).Shift(-8), cent
		}
		within("usdt fees", q.OTCFees, gross.Mul(in.OTCFeeRate), unit)
		within("merchant amount (negated)", q.DestinationAmount.Neg(), q.OTCFees.Sub(gross), unit)
		return
	}
	if !q.DestinationAmount.Equal(amount) {
		t.Fatalf("got destination amount %s, want %d", q.DestinationAmount, in.Amount)
	}
	within("buffer", buffer, base.Mul(in.BufferRate), one)
	gross := amount.Add(q.OTCFees)
	if in.DestinationCurrency == "BTC" {
		within("onramp fees", q.OTCFees, amount.Mul(in.OTCFeeRate), one)
		if !base.Equal(gross) {
			t.Fatalf("got base %s sats, want amount plus fees %s", base, gross)
		}
	} else {
		within("fees", q.OTCFees, amount.Mul(in.OTCFeeRate), cent)
		// base sats are the fewest whose value covers the gross amount: the merchant is never short.
		pDest := in.Prices[in.DestinationCurrency]
		if base.Mul(pDest).Shift(-8).LessThan(gross) || !base.Sub(one).Mul(pDest).Shift(-8).LessThan(gross) {
			t.Fatalf("got base %s sats at %s, want the fewest covering %s", base, pDest, gross)
		}
	}
	if in.FromCurrency == "BTC" {
		if q.SourceAmountMinor != 0 {
			t.Fatalf("got deposit %d for Lightning funding, want 0", q.SourceAmountMinor)
		}
		return
	}
	within("deposit", deposit, sats.Mul(in.Prices[in.FromCurrency]).Shift(-8), cent)
}
