package domain

import (
	"errors"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// johannesburg loads Africa/Johannesburg (UTC+2, no daylight saving).
func johannesburg(t testing.TB) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation("Africa/Johannesburg")
	if err != nil {
		t.Fatalf("load Africa/Johannesburg: %v", err)
	}
	return loc
}

func TestIsSouthAfricanBusinessHours(t *testing.T) {
	t.Parallel()
	sast := johannesburg(t)
	plus14 := time.FixedZone("UTC+14", 14*60*60)
	const ms = int(time.Millisecond)
	for _, tt := range []struct {
		name string
		now  time.Time
		loc  *time.Location
		want bool
	}{
		{"Friday 06:00", time.Date(2026, 11, 20, 6, 0, 0, 0, sast), sast, true},
		{"Friday 05:59:59.999", time.Date(2026, 11, 20, 5, 59, 59, 999*ms, sast), sast, false},
		{"Friday 14:59:59.999", time.Date(2026, 11, 20, 14, 59, 59, 999*ms, sast), sast, true},
		{"Friday 15:00", time.Date(2026, 11, 20, 15, 0, 0, 0, sast), sast, false},
		{"Friday 06:00 given in UTC", time.Date(2026, 11, 20, 4, 0, 0, 0, time.UTC), sast, true},
		{"Friday 05:59:59.999 given in UTC", time.Date(2026, 11, 20, 3, 59, 59, 999*ms, time.UTC), sast, false},
		{"Friday 14:59:59.999 given in UTC", time.Date(2026, 11, 20, 12, 59, 59, 999*ms, time.UTC), sast, true},
		{"Friday 15:00 given in UTC", time.Date(2026, 11, 20, 13, 0, 0, 0, time.UTC), sast, false},
		{"Saturday 10:00", time.Date(2026, 11, 21, 10, 0, 0, 0, sast), sast, false},
		{"Sunday 10:00", time.Date(2026, 11, 22, 10, 0, 0, 0, sast), sast, false},
		{"Monday 10:00", time.Date(2026, 11, 23, 10, 0, 0, 0, sast), sast, true},
		{"Sunday 22:30 UTC is Monday 00:30", time.Date(2026, 11, 22, 22, 30, 0, 0, time.UTC), sast, false},
		{"Monday 04:00 UTC is Monday 06:00", time.Date(2026, 11, 23, 4, 0, 0, 0, time.UTC), sast, true},
		{"Day of Reconciliation, a Wednesday", time.Date(2026, 12, 16, 10, 0, 0, 0, sast), sast, false},
		{"the Tuesday before it", time.Date(2026, 12, 15, 10, 0, 0, 0, sast), sast, true},
		{"Women's Day observed, a Monday", time.Date(2026, 8, 10, 10, 0, 0, 0, sast), sast, false},
		{"Women's Day observed at 06:00 given in UTC", time.Date(2026, 8, 10, 4, 0, 0, 0, time.UTC), sast, false},
		{"the Tuesday after it", time.Date(2026, 8, 11, 10, 0, 0, 0, sast), sast, true},
		{"Good Friday", time.Date(2026, 4, 3, 10, 0, 0, 0, sast), sast, false},
		{"declared holiday: election day 2024", time.Date(2024, 5, 29, 10, 0, 0, 0, sast), sast, false},
		// The holiday is the civil date in loc, not in UTC.
		{"Tuesday in UTC, Day of Reconciliation in loc", time.Date(2026, 12, 15, 20, 0, 0, 0, time.UTC), plus14, false},
		{"Day of Reconciliation in UTC, Thursday in loc", time.Date(2026, 12, 16, 20, 0, 0, 0, time.UTC), plus14, true},
	} {
		if got := IsSouthAfricanBusinessHours(tt.now, tt.loc); got != tt.want {
			t.Errorf("%s (%s): got %v, want %v", tt.name, tt.now.In(tt.loc), got, tt.want)
		}
	}
}

func TestPaymentAmountLimit(t *testing.T) {
	t.Parallel()
	sast := johannesburg(t)
	open := time.Date(2026, 11, 20, 14, 59, 59, 0, sast) // Friday, business hours
	closed := time.Date(2026, 11, 20, 15, 0, 0, 0, sast)
	for _, tt := range []struct {
		name            string
		country, payout string
		now             time.Time
		min, max        int64
		unit            string
	}{
		{"South Africa, business hours", CountrySouthAfrica, PayoutBank, open, 10, 1_000_000, "ZAR"},
		{"South Africa, restricted hours", CountrySouthAfrica, PayoutBank, closed, 10, 250_000, "ZAR"},
		{"South Africa, Saturday", CountrySouthAfrica, PayoutBank, time.Date(2026, 11, 21, 10, 0, 0, 0, sast), 10, 250_000, "ZAR"},
		{"South Africa, public holiday", CountrySouthAfrica, PayoutBank, time.Date(2026, 12, 16, 10, 0, 0, 0, sast), 10, 250_000, "ZAR"},
		{"Kenya momo", CountryKenya, PayoutMomo, open, 150, 250_000, "KES"},
		{"Kenya momo, restricted hours do not apply", CountryKenya, PayoutMomo, closed, 150, 250_000, "KES"},
		{"Kenya bank", CountryKenya, PayoutBank, closed, 150, 1_600_000, "KES"},
		{"Nigeria bank", CountryNigeria, PayoutBank, closed, 1_000, 50_000_000, "NGN"},
		{"Lightning", CountryBTC, PayoutLightning, closed, 1_000, 10_000_000, "sats"},
	} {
		l := PaymentAmountLimit(tt.country, tt.payout, tt.now, sast)
		if l.Min != tt.min || l.Max != tt.max || l.Unit != tt.unit || l.Currency != merchantCurrency[tt.country] {
			t.Errorf("%s: got %+v, want %d to %d %s", tt.name, l, tt.min, tt.max, tt.unit)
			continue
		}
		for _, amount := range []int64{tt.min, tt.min + 1, tt.max - 1, tt.max} {
			if err := l.Check(amount); err != nil {
				t.Errorf("%s: Check(%d): got %v, want nil", tt.name, amount, err)
			}
		}
		for _, amount := range []int64{tt.min - 1, tt.max + 1} {
			wantError(t, l.Check(amount), Invalid, "amount_out_of_range", "amount")
		}
		// A USDT payment's converted value has cents: a fraction past
		// either end is out of range, not truncated into it.
		cent := decimal.New(1, -2)
		for _, amount := range []decimal.Decimal{decimal.NewFromInt(tt.min), decimal.NewFromInt(tt.max).Sub(cent)} {
			if err := l.CheckDecimal(amount); err != nil {
				t.Errorf("%s: CheckDecimal(%s): got %v, want nil", tt.name, amount, err)
			}
		}
		for _, amount := range []decimal.Decimal{decimal.NewFromInt(tt.min).Sub(cent), decimal.NewFromInt(tt.max).Add(decimal.New(70, -2))} {
			wantError(t, l.CheckDecimal(amount), Invalid, "amount_out_of_range", "amount")
		}
	}
}

func TestAmountLimitCheckMessage(t *testing.T) {
	t.Parallel()
	sast := johannesburg(t)
	saturday := time.Date(2026, 11, 21, 10, 0, 0, 0, sast)
	for _, tt := range []struct {
		limit AmountLimit
		want  string
	}{
		{PaymentAmountLimit(CountrySouthAfrica, PayoutBank, saturday, sast),
			"amount must be between 10 and 250000 ZAR for South African payments in restricted hours (weekends, public holidays, outside 06:00-15:00 SAST)"},
		{PaymentAmountLimit(CountrySouthAfrica, PayoutBank, saturday.AddDate(0, 0, -1), sast),
			"amount must be between 10 and 1000000 ZAR for South African payments in business hours (weekdays 06:00-15:00 SAST, public holidays excepted)"},
		{PaymentAmountLimit(CountryBTC, PayoutLightning, saturday, sast),
			"amount must be between 1000 and 10000000 sats for Lightning merchants"},
	} {
		var e *Error
		if err := tt.limit.Check(tt.limit.Max + 1); !errors.As(err, &e) || e.Message != tt.want {
			t.Errorf("got %v, want message %q", err, tt.want)
		}
	}
}

// A pair contract §5 does not allow has no limit: Check fails closed.
func TestAmountLimitUnknownPayout(t *testing.T) {
	t.Parallel()
	sast := johannesburg(t)
	for _, p := range [][2]string{{CountryKenya, PayoutLightning}, {CountrySouthAfrica, PayoutMomo}, {"Ghana", PayoutBank}} {
		wantError(t, PaymentAmountLimit(p[0], p[1], testNow, sast).Check(100), Internal, "no_amount_limit")
	}
}
