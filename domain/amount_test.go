package domain

import (
	"strings"
	"testing"

	"github.com/shopspring/decimal"
)

func TestFormatAmount(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		amount, unit, want string
	}{
		{"1500", "ZAR", "1,500.00 ZAR"},
		{"1234567.891", "KES", "1,234,567.89 KES"},
		{"50000", "sats", "50,000 sats"},
		{"84167", "sats", "84,167 sats"},
		{"0.00012345", "BTC", "0.00012345 BTC"},
		{"1.51", "USDT", "1.51 USDT"},
		{"-42.5", "USD", "-42.50 USD"},
		{"-1234", "sats", "-1,234 sats"},
		{"999", "EUR", "999.00 EUR"},
		{"0", "GBP", "0.00 GBP"},
	} {
		if got := FormatAmount(decimal.RequireFromString(tt.amount), tt.unit); got != tt.want {
			t.Errorf("FormatAmount(%s, %s): got %q, want %q", tt.amount, tt.unit, got, tt.want)
		}
	}
}

func TestPriceCurrency(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		from, dest, want string
	}{
		{"BTC", "ZAR", "ZAR"},
		{"NGN", "ZAR", "ZAR"},
		{"GBP", "BTC", "GBP"},
		{"USDT", "BTC", "USD"},
		{"USDT", "KES", "KES"},
	} {
		if got := (Payment{FromCurrency: tt.from, DestinationCurrency: tt.dest}).PriceCurrency(); got != tt.want {
			t.Errorf("%s to %s: got %s, want %s", tt.from, tt.dest, got, tt.want)
		}
	}
}

// TestStatusMessagesNameTheirUnits walks payments to the end and checks
// every status message: a Lightning merchant's amounts are sats, never BTC.
func TestStatusMessagesNameTheirUnits(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, body string
		merchant   Merchant
		want       []string // created, deposited, transferring, success
	}{
		{"pounds to a Lightning merchant", `{"MerchantID":"m","Amount":50000,"FromCountry":"UK"}`, testMerchant(CountryBTC, PayoutLightning), []string{
			"Awaiting a bank transfer of 38.38 GBP quoting the reference ",
			"Received 38.38 GBP; converting",
			"Converted; paying out 50,000 sats by LIGHTNING",
			"Settled 50,000 sats to the recipient"}},
		{"Lightning to a South African bank", `{"MerchantID":"m","Amount":1500,"Reference":"r"}`, testMerchant(CountrySouthAfrica, PayoutBank), []string{
			"Awaiting payment of the Lightning invoice for 84,167 sats",
			"Received 84,167 sats; converting",
			"Converted; paying out 1,500.00 ZAR by BANK",
			"Settled 1,500.00 ZAR to the recipient"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := newPayment(t, tt.body, tt.merchant)
			events, err := DecideDeposit(p, RecordDeposit{Amount: p.DepositDue, Now: businessHours, InvoiceSettled: true})
			p = step(t, p, events, err, "payment.deposited")
			events, err = DecideBeginPayout(p, BeginPayout{Prices: lifecyclePrices, OTCFeeRate: decimal.RequireFromString("0.01"), Now: businessHours})
			p = step(t, p, events, err, "payment.transferring")
			events, err = DecidePayoutResult(p, PayoutResult{PayoutID: "po_1", Now: businessHours})
			p = step(t, p, events, err, "payment.success")
			if len(p.StatusLogs) != len(tt.want) {
				t.Fatalf("got %d status logs, want %d", len(p.StatusLogs), len(tt.want))
			}
			for i, want := range tt.want {
				if got := p.StatusLogs[i].Message; !strings.HasPrefix(got, want) {
					t.Errorf("status log %d: got %q, want it to start %q", i, got, want)
				}
			}
		})
	}
}
