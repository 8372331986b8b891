package domain

import (
	"errors"
	"fmt"

	"github.com/shopspring/decimal"
)

// BTCPrices is the price of 1 BTC in each currency: ZAR, KES, NGN, GBP, EUR,
// USD (USDT is priced as USD).
type BTCPrices map[string]decimal.Decimal

// QuoteInput is what QuotePayment prices: a payment request already
// validated (ValidatePaymentRequest) and routed to a merchant.
type QuoteInput struct {
	FromCurrency        string          // BTC, KES, NGN, GBP, EUR or USDT
	DestinationCurrency string          // ZAR, KES, NGN or BTC (a BTC merchant is paid in sats)
	Amount              int64           // the request amount: whole units of the destination currency (sats when it is BTC), except USDT funding: USDT cents
	BufferRate          decimal.Decimal // 0 to 0.10 (already validated)
	OTCFeeRate          decimal.Decimal // service configuration, e.g. 0.01
	Prices              BTCPrices
}

// Quote is a priced payment (contract §6: btcPrice, amountBtc,
// bufferAmountSats, otcFees, and the deposit amount).
type Quote struct {
	BTCPrice          decimal.Decimal // price of 1 BTC in the destination currency; for a BTC destination, in the source currency
	OTCFees           decimal.Decimal // in the destination currency (sats, whole, when the destination is BTC)
	DestinationAmount decimal.Decimal // what the merchant receives: Amount, or for USDT funding the estimate at this price
	AmountSats        int64           // Lightning funding: the sats the payer pays, buffer included; other funding: the sats the payment converts through
	BufferAmountSats  int64           // the part of AmountSats due to BufferRate
	SourceAmountMinor int64           // fiat and USDT funding: what the payer deposits, in minor units (cents) of FromCurrency, fees and buffer included; 0 for BTC funding
}

// ErrPriceUnavailable means a price QuotePayment needs is missing, zero or
// negative: the price source is down or incomplete, so the caller answers
// 503 rather than 500. A USDT payment worth less than its fees is a 400
// naming amount; every other error of QuotePayment is a plain one.
var ErrPriceUnavailable = errors.New("btc price unavailable")

// minorPlaces is the decimal places of every fiat currency priced here
// (ZAR, KES, NGN, GBP, EUR, USD): the minor unit is 1/100.
const minorPlaces = 2

// satsExp is the power of ten from BTC to sats: sats = BTC × 10^8. Shifting
// by it is exact, where Div would round to 16 digits.
const satsExp = 8

// quoteSources and quoteDestinations are the currencies QuotePayment
// prices (contract §6); which pairs form a corridor is decided elsewhere.
var (
	quoteSources      = map[string]bool{"BTC": true, "KES": true, "NGN": true, "GBP": true, "EUR": true, "USDT": true}
	quoteDestinations = map[string]bool{"ZAR": true, "KES": true, "NGN": true, "BTC": true}
)

// QuotePayment prices a payment. All arithmetic is exact decimal; the only
// rounding is the documented one below, and every division is done with
// quotient and remainder, never to a fixed number of digits.
//
// Units: every fiat currency has 2 decimal places (minor unit = 1/100);
// sats = BTC × 10^8. P_x is the price of 1 BTC in currency x (USDT uses USD).
//
//   - OTC fees: OTCFees = Amount × OTCFeeRate, rounded up to the minor unit
//     (to whole sats when the destination is BTC).
//   - Gross destination value G = Amount + OTCFees.
//   - Lightning funding (FromCurrency BTC) to a fiat destination:
//     baseSats = ceil(G × 10^8 / P_dest); BufferAmountSats =
//     ceil(baseSats × BufferRate); AmountSats = baseSats + BufferAmountSats.
//     Payer-facing amounts round up, so the merchant is never short.
//     SourceAmountMinor = 0; BTCPrice = P_dest.
//   - Fiat funding to a fiat destination: converted through BTC at both
//     prices: AmountSats as for Lightning, then SourceAmountMinor =
//     ceil(AmountSats × P_src / 10^8, to the minor unit) in minor units.
//     BTCPrice = P_dest.
//   - Fiat funding to a BTC destination (onramp): G is in sats; baseSats = G;
//     BufferAmountSats = ceil(G × BufferRate); AmountSats = baseSats +
//     BufferAmountSats; SourceAmountMinor as for fiat; BTCPrice = P_src.
//   - USDT funding: the payer's amount is fixed, so nothing is buffered
//     (BufferRate must be 0) and the merchant's amount is the estimate:
//     SourceAmountMinor = Amount (USDT cents); AmountSats =
//     floor(Amount / 100 × 10^8 / P_USD); gross = AmountSats × P_dest / 10^8
//     (= AmountSats when the destination is BTC); OTCFees = gross ×
//     OTCFeeRate rounded up to the minor unit (whole sats for BTC);
//     DestinationAmount = gross − OTCFees rounded down to the minor unit
//     (whole sats). BTCPrice = P_dest, or P_USD for a BTC destination.
//
// DestinationAmount is Amount except for USDT funding. Errors are plain
// errors, never an *Error: one wrapping ErrPriceUnavailable when a needed
// price is missing, zero or negative (a 503), otherwise (a 500) for an
// unsupported currency or pair (BTC to BTC), Amount not positive, a
// negative BufferRate, an OTCFeeRate outside [0, 1), a USDT payment with a
// buffer, fees that exceed a USDT payment, or a result beyond int64.
func QuotePayment(in QuoteInput) (Quote, error) {
	switch {
	case !quoteSources[in.FromCurrency]:
		return Quote{}, fmt.Errorf("quote: unsupported source currency %q", in.FromCurrency)
	case !quoteDestinations[in.DestinationCurrency]:
		return Quote{}, fmt.Errorf("quote: unsupported destination currency %q", in.DestinationCurrency)
	case in.FromCurrency == "BTC" && in.DestinationCurrency == "BTC":
		return Quote{}, errors.New("quote: BTC to BTC is not a conversion")
	case in.Amount <= 0:
		return Quote{}, fmt.Errorf("quote: amount %d is not positive", in.Amount)
	case in.BufferRate.IsNegative():
		return Quote{}, fmt.Errorf("quote: buffer rate %s is negative", in.BufferRate)
	case in.OTCFeeRate.IsNegative() || in.OTCFeeRate.GreaterThanOrEqual(decimal.NewFromInt(1)):
		return Quote{}, fmt.Errorf("quote: otc fee rate %s is outside [0, 1)", in.OTCFeeRate)
	}
	switch {
	case in.FromCurrency == "USDT":
		return quoteUSDT(in)
	case in.DestinationCurrency == "BTC":
		return quoteOnramp(in)
	default:
		return quoteToFiat(in)
	}
}

// quoteToFiat prices Lightning or fiat funding of a fiat merchant.
func quoteToFiat(in QuoteInput) (Quote, error) {
	pDest, err := in.Prices.price(in.DestinationCurrency)
	if err != nil {
		return Quote{}, err
	}
	amount := decimal.NewFromInt(in.Amount)
	fees := amount.Mul(in.OTCFeeRate).RoundCeil(minorPlaces)
	base := ceilQuo(amount.Add(fees).Shift(satsExp), pDest)
	q := Quote{BTCPrice: pDest, OTCFees: fees, DestinationAmount: amount}
	err = q.convert(in, base)
	return q, err
}

// quoteOnramp prices fiat funding of a BTC merchant: Amount is sats.
func quoteOnramp(in QuoteInput) (Quote, error) {
	pSrc, err := in.Prices.price(in.FromCurrency)
	if err != nil {
		return Quote{}, err
	}
	amount := decimal.NewFromInt(in.Amount)
	fees := amount.Mul(in.OTCFeeRate).RoundCeil(0)
	q := Quote{BTCPrice: pSrc, OTCFees: fees, DestinationAmount: amount}
	err = q.convert(in, amount.Add(fees))
	return q, err
}

// convert sets q's sats from base (whole sats before the buffer) and, for
// fiat funding, the deposit at the source price.
func (q *Quote) convert(in QuoteInput, base decimal.Decimal) error {
	buffer := base.Mul(in.BufferRate).RoundCeil(0)
	total := base.Add(buffer)
	var err error
	if q.AmountSats, err = toInt64(total); err != nil {
		return err
	}
	q.BufferAmountSats = buffer.IntPart() // buffer ≤ total, so it fits
	if in.FromCurrency == "BTC" {
		return nil
	}
	pSrc, err := in.Prices.price(in.FromCurrency)
	if err != nil {
		return err
	}
	deposit := total.Mul(pSrc).Shift(-satsExp).RoundCeil(minorPlaces).Shift(minorPlaces)
	q.SourceAmountMinor, err = toInt64(deposit)
	return err
}

// quoteUSDT prices USDT funding: the payer's amount is fixed, the
// merchant's follows from it.
func quoteUSDT(in QuoteInput) (Quote, error) {
	if !in.BufferRate.IsZero() {
		return Quote{}, fmt.Errorf("quote: buffer rate %s does not apply to USDT funding", in.BufferRate)
	}
	pUSD, err := in.Prices.price("USDT")
	if err != nil {
		return Quote{}, err
	}
	// Amount / 100 × 10^8 = Amount × 10^6: cents to dollars to sats.
	sats, _ := decimal.NewFromInt(in.Amount).Shift(satsExp-minorPlaces).QuoRem(pUSD, 0) // floor: the remainder is dropped
	q := Quote{BTCPrice: pUSD, SourceAmountMinor: in.Amount}
	if q.AmountSats, err = toInt64(sats); err != nil {
		return Quote{}, err
	}
	gross, places := sats, int32(0)
	if in.DestinationCurrency != "BTC" {
		if q.BTCPrice, err = in.Prices.price(in.DestinationCurrency); err != nil {
			return Quote{}, err
		}
		gross, places = sats.Mul(q.BTCPrice).Shift(-satsExp), minorPlaces
	}
	q.OTCFees = gross.Mul(in.OTCFeeRate).RoundCeil(places)
	q.DestinationAmount = gross.Sub(q.OTCFees).RoundFloor(places)
	if q.DestinationAmount.IsNegative() {
		unit := merchantUnit(in.DestinationCurrency)
		return Quote{}, Invalidf("amount", "is too small: the fees of %s exceed the %s it is worth",
			FormatAmount(q.OTCFees, unit), FormatAmount(gross, unit))
	}
	return q, nil
}

// price is the price of 1 BTC in cur, USDT priced as USD.
func (p BTCPrices) price(cur string) (decimal.Decimal, error) {
	if cur == "USDT" {
		cur = "USD"
	}
	v, ok := p[cur]
	if !ok || !v.IsPositive() {
		return decimal.Decimal{}, fmt.Errorf("quote: %w: %s is %s", ErrPriceUnavailable, cur, missingOr(ok, v))
	}
	return v, nil
}

// missingOr describes a bad price for an error message.
func missingOr(ok bool, v decimal.Decimal) string {
	if !ok {
		return "missing"
	}
	return v.String()
}

// ceilQuo is ⌈a / b⌉ for positive a and b, exactly: QuoRem gives the integer
// quotient and its remainder, where Div would round to 16 digits first.
func ceilQuo(a, b decimal.Decimal) decimal.Decimal {
	q, r := a.QuoRem(b, 0)
	if r.IsPositive() {
		q = q.Add(decimal.NewFromInt(1))
	}
	return q
}

// toInt64 converts a whole decimal, failing rather than wrapping past int64.
func toInt64(d decimal.Decimal) (int64, error) {
	if b := d.BigInt(); !b.IsInt64() {
		return 0, fmt.Errorf("quote: %s overflows int64", d)
	}
	return d.IntPart(), nil
}
