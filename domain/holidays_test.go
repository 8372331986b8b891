package domain

import (
	"slices"
	"testing"
	"time"
)

func TestEasterSunday(t *testing.T) {
	t.Parallel()
	// Western Easter dates, including the earliest (22 March) and latest
	// (25 April) the computus allows.
	for _, want := range []string{
		"1818-03-22", "1943-04-25", "1961-04-02", "2000-04-23", "2008-03-23", "2011-04-24",
		"2016-03-27", "2019-04-21", "2024-03-31", "2025-04-20", "2026-04-05", "2027-03-28",
		"2038-04-25", "2285-03-22",
	} {
		d := mustDay(t, want)
		if got := easterSunday(d.Year()); !got.Equal(d) {
			t.Errorf("easterSunday(%d): got %s, want %s", d.Year(), got.Format(time.DateOnly), want)
		}
	}
}

// TestSouthAfricanPublicHolidays checks whole years against the calendars
// published for them. The fixed days are the Act's Schedule 1
// (acts.co.za/public-holidays-act-1994/schedule_1); the lists:
//
//	2016  sanews.gov.za "President declares 3 August a holiday" (2016-06-25);
//	      thesouthafrican.com, 2022-12-08: Zuma declared Tuesday 27 December 2016
//	2019  thesouthafrican.com "when is 2019 elections day off" list; iol.co.za,
//	      2019-02-26: 8 May 2019 declared under section 2A
//	2020  timeslive.co.za, 2020-01-07 ("August 10 – National Women's Day public holiday")
//	2021  apso.org.za, quoting the government proclamation (22 March, 1 November, 27 December)
//	2022  tribunesouthafrica.com, quoting the government proclamation (2 May);
//	      Presidency via allafrica.com and sabcnews.com, 2022-12-08 (27 December)
//	2023  the gov.za list as copied by soluap.com (2 January, 25 September); iol.co.za
//	      Cape Argus, 2023-01-02; Presidency via allafrica.com, 2023-10-31 (15 December)
//	2024  economy24.co.za and sapeople.com 2024 lists (29 May, 17 June); timeslive.co.za,
//	      2024-02-23 (29 May under section 2A)
//	2025  jocalendars.com and capetownetc.com 2025 lists (28 April observed)
//	2026  allafrica.com, 2025-09-24 (Women's Day observed on 10 August; Easter 3-6 April)
//
// 2016 and 2024 have early Easters, 2019 and 2025 late ones.
func TestSouthAfricanPublicHolidays(t *testing.T) {
	t.Parallel()
	for year, want := range map[int][]string{
		2016: {"01-01", "03-21", "03-25", "03-28", "04-27", "05-01", "05-02", "06-16", "08-03", "08-09", "09-24",
			"12-16", "12-25", "12-26", "12-27"},
		2019: {"01-01", "03-21", "04-19", "04-22", "04-27", "05-01", "05-08", "06-16", "06-17", "08-09", "09-24",
			"12-16", "12-25", "12-26"},
		2020: {"01-01", "03-21", "04-10", "04-13", "04-27", "05-01", "06-16", "08-09", "08-10", "09-24",
			"12-16", "12-25", "12-26"},
		2021: {"01-01", "03-21", "03-22", "04-02", "04-05", "04-27", "05-01", "06-16", "08-09", "09-24", "11-01",
			"12-16", "12-25", "12-26", "12-27"},
		2022: {"01-01", "03-21", "04-15", "04-18", "04-27", "05-01", "05-02", "06-16", "08-09", "09-24",
			"12-16", "12-25", "12-26", "12-27"},
		2023: {"01-01", "01-02", "03-21", "04-07", "04-10", "04-27", "05-01", "06-16", "08-09", "09-24", "09-25",
			"12-15", "12-16", "12-25", "12-26"},
		2024: {"01-01", "03-21", "03-29", "04-01", "04-27", "05-01", "05-29", "06-16", "06-17", "08-09", "09-24",
			"12-16", "12-25", "12-26"},
		2025: {"01-01", "03-21", "04-18", "04-21", "04-27", "04-28", "05-01", "06-16", "08-09", "09-24",
			"12-16", "12-25", "12-26"},
		2026: {"01-01", "03-21", "04-03", "04-06", "04-27", "05-01", "06-16", "08-09", "08-10", "09-24",
			"12-16", "12-25", "12-26"},
	} {
		var got []string
		for _, h := range SouthAfricanPublicHolidays(year) {
			if h.Date.Year() != year {
				t.Errorf("%d: %s is in another year", year, h.Date)
			}
			got = append(got, h.Date.Format("01-02"))
		}
		if !slices.Equal(got, want) {
			t.Errorf("%d: got %v, want %v", year, got, want)
		}
	}
}

func TestSouthAfricanPublicHolidayNames(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		day   string
		names []string
	}{
		{"2020-08-10", []string{"Public holiday (National Women's Day observed)"}},
		{"2022-05-02", []string{"Public holiday (Workers' Day observed)"}},
		{"2021-12-27", []string{"Public holiday (Day of Goodwill observed)"}},
		// Christmas 2022 on a Sunday adds nothing to the Monday, already the
		// Day of Goodwill; the President declared the Tuesday.
		{"2022-12-26", []string{"Day of Goodwill"}},
		{"2022-12-27", []string{"Public holiday (Christmas Day fell on a Sunday)"}},
		{"2024-05-29", []string{"National and provincial elections"}},
		{"2008-03-21", []string{"Human Rights Day", "Good Friday"}},
		{"2008-05-02", []string{"Public holiday (Human Rights Day fell on Good Friday)"}},
		{"2024-03-31", nil}, // Easter Sunday itself is not a public holiday
	} {
		d := mustDay(t, tt.day)
		var got []string
		for _, h := range SouthAfricanPublicHolidays(d.Year()) {
			if h.Date.Equal(d) {
				got = append(got, h.Name)
			}
		}
		if !slices.Equal(got, tt.names) {
			t.Errorf("%s: got %q, want %q", tt.day, got, tt.names)
		}
	}
}

func TestIsSouthAfricanPublicHoliday(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		day  string
		want bool
	}{
		{"2023-01-01", true}, // Sunday
		{"2023-01-02", true}, // its Monday
		{"2023-01-03", false},
		{"2024-04-27", true},  // Freedom Day on a Saturday stays a Saturday...
		{"2024-04-29", false}, // ...and moves nowhere
		{"2024-03-29", true},
		{"2024-04-01", true},
		{"2024-04-02", false},
		{"2025-04-18", true},
		{"2025-04-21", true},
		{"2025-04-28", true},
		{"2017-12-27", false}, // no declaration: Christmas 2017 was a Monday
		{"2026-12-28", false}, // Day of Goodwill 2026 is a Saturday
		{"2026-11-23", false},
	} {
		d := mustDay(t, tt.day)
		if got := IsSouthAfricanPublicHoliday(d.Date()); got != tt.want {
			t.Errorf("IsSouthAfricanPublicHoliday(%s): got %v, want %v", tt.day, got, tt.want)
		}
	}
}

// TestSundayRule checks section 2(1) and the ordering over two centuries.
func TestSundayRule(t *testing.T) {
	t.Parallel()
	for year := 2000; year < 2200; year++ {
		hs := SouthAfricanPublicHolidays(year)
		if !slices.IsSortedFunc(hs, func(a, b Holiday) int { return a.Date.Compare(b.Date) }) {
			t.Fatalf("%d: not sorted: %v", year, hs)
		}
		for _, h := range hs {
			if h.Date.Weekday() == time.Sunday && !IsSouthAfricanPublicHoliday(h.Date.AddDate(0, 0, 1).Date()) {
				t.Errorf("%d: %s on Sunday %s, but the Monday is no holiday", year, h.Name, h.Date.Format(time.DateOnly))
			}
		}
	}
}

// mustDay parses a YYYY-MM-DD date as Holiday.Date holds it.
func mustDay(t testing.TB, s string) time.Time {
	t.Helper()
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		t.Fatalf("parse %s: %v", s, err)
	}
	return d
}
