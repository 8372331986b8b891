package domain

import (
	"fmt"
	"time"

	"github.com/shopspring/decimal"
)

// IsSouthAfricanBusinessHours reports whether now falls in South African
// business hours (contract §6, spec §8): Monday to Friday from 06:00 up to,
// not including, 15:00 in loc, on a civil date in loc that is not a public
// holiday. loc is Africa/Johannesburg, loaded by the caller so that domain
// reads no time zone database; it must not be nil.
func IsSouthAfricanBusinessHours(now time.Time, loc *time.Location) bool {
	t := now.In(loc)
	if wd := t.Weekday(); wd == time.Saturday || wd == time.Sunday {
		return false
	}
	if h := t.Hour(); h < 6 || h >= 15 {
		return false
	}
	return !IsSouthAfricanPublicHoliday(t.Date())
}

// AmountLimit is the range a payment's amount must be in.
type AmountLimit struct {
	Min, Max int64  // whole Units, both inclusive
	Currency string // the merchant's currency
	Unit     string // what Min and Max count: Currency, or "sats" for BTC
	Band     string // whom and when the limit applies to, ending the error message
}

// PaymentAmountLimit is the amount limit of a payment to a merchant of
// country paid out by payoutMethod, at now in loc (spec §8):
//
//	SouthAfrica  BANK       10 to 1,000,000 ZAR in business hours, else 10 to 250,000 ZAR
//	Kenya        MOMO       150 to 250,000 KES
//	Kenya        BANK       150 to 1,600,000 KES
//	Nigeria      BANK       1,000 to 50,000,000 NGN
//	BTC          LIGHTNING  1,000 to 10,000,000 sats (0.1 BTC)
//
// The spec gives no limit for Nigeria and BTC: those two are our choice,
// the BTC one small because the onramp is in beta. Any other pair (no
// merchant has one, contract §5) gets a limit without Currency, whose
// Check fails as Internal rather than let a payment through unchecked.
func PaymentAmountLimit(country, payoutMethod string, now time.Time, loc *time.Location) AmountLimit {
	cur := merchantCurrency[country]
	switch {
	case country == CountrySouthAfrica && payoutMethod == PayoutBank && IsSouthAfricanBusinessHours(now, loc):
		return AmountLimit{Min: 10, Max: 1_000_000, Currency: cur, Unit: cur,
			Band: "South African payments in business hours (weekdays 06:00-15:00 SAST, public holidays excepted)"}
	case country == CountrySouthAfrica && payoutMethod == PayoutBank:
		return AmountLimit{Min: 10, Max: 250_000, Currency: cur, Unit: cur,
			Band: "South African payments in restricted hours (weekends, public holidays, outside 06:00-15:00 SAST)"}
	case country == CountryKenya && payoutMethod == PayoutMomo:
		return AmountLimit{Min: 150, Max: 250_000, Currency: cur, Unit: cur, Band: "Kenyan mobile-money merchants"}
	case country == CountryKenya && payoutMethod == PayoutBank:
		return AmountLimit{Min: 150, Max: 1_600_000, Currency: cur, Unit: cur, Band: "Kenyan bank merchants"}
	case country == CountryNigeria && payoutMethod == PayoutBank:
		return AmountLimit{Min: 1_000, Max: 50_000_000, Currency: cur, Unit: cur, Band: "Nigerian bank merchants"}
	case country == CountryBTC && payoutMethod == PayoutLightning:
		return AmountLimit{Min: 1_000, Max: 10_000_000, Currency: cur, Unit: "sats", Band: "Lightning merchants"}
	}
	return AmountLimit{Band: country + " merchants paid out by " + payoutMethod}
}

// Check returns nil if amount is within l, else a 400 amount_out_of_range
// naming amount, the range and the band.
func (l AmountLimit) Check(amount int64) error {
	return l.CheckDecimal(decimal.NewFromInt(amount))
}

// CheckDecimal is Check for an amount with a fractional part (a USDT
// payment's converted value): 250,000.70 is above a maximum of 250,000.
func (l AmountLimit) CheckDecimal(amount decimal.Decimal) error {
	if l.Currency == "" {
		return Errorf(Internal, "no_amount_limit", "no amount limit for %s", l.Band)
	}
	if !amount.LessThan(decimal.NewFromInt(l.Min)) && !amount.GreaterThan(decimal.NewFromInt(l.Max)) {
		return nil
	}
	msg := fmt.Sprintf("must be between %d and %d %s for %s", l.Min, l.Max, l.Unit, l.Band)
	return &Error{Kind: Invalid, Code: "amount_out_of_range", Message: "amount " + msg,
		Fields: []FieldError{{Field: "amount", Message: msg}}}
}
