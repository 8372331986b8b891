package domain

import (
	"strings"

	"github.com/shopspring/decimal"
)

// unitPlaces are the decimals each unit is shown with (ISO 4217 for
// currencies; sats are whole by definition, BTC has eight). Unlisted units
// get two, as every fiat currency and USDT priced here has.
var unitPlaces = map[string]int32{"sats": 0, "BTC": 8, "JPY": 0, "UGX": 0, "RWF": 0, "XOF": 0, "XAF": 0}

// FormatAmount writes an amount for people, in the unit it counts in:
// thousands grouped, the unit's decimals, the unit after it ("1,500.00 ZAR",
// "50,000 sats", "1.51 USDT"). Every amount a message, page or webhook
// shows goes through it, so a Lightning merchant's sats are never called
// BTC. unit is what the amount counts in, not the merchant's currency code:
// see Payment.DestinationUnit and Payment.DepositCurrency.
func FormatAmount(amount decimal.Decimal, unit string) string {
	places, ok := unitPlaces[unit]
	if !ok {
		places = 2
	}
	s := amount.StringFixed(places)
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	whole, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	b.WriteString(sign)
	for i, c := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if frac != "" {
		b.WriteString("." + frac)
	}
	if unit != "" {
		b.WriteString(" " + unit)
	}
	return b.String()
}

// merchantUnit is what a merchant of currency is paid in: sats for a
// Lightning merchant (currency BTC), else the currency itself.
func merchantUnit(currency string) string {
	if currency == "BTC" {
		return "sats"
	}
	return currency
}

// PriceCurrency is the currency btcPrice is quoted in: the price of 1 BTC
// in the destination currency, or, for a Lightning merchant (whose amounts
// are sats), in the source currency, USDT priced as USD (QuotePayment).
func (p Payment) PriceCurrency() string {
	switch {
	case p.DestinationCurrency != "BTC":
		return p.DestinationCurrency
	case p.FromCurrency == "USDT":
		return "USD"
	}
	return p.FromCurrency
}
