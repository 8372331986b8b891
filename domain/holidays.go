package domain

import (
	"slices"
	"time"
)

// Holiday is one South African public holiday.
type Holiday struct {
	Date time.Time // midnight UTC of the civil date
	Name string
}

// declaredHolidays are the one-off public holidays the President declared
// under section 2A of the Public Holidays Act 36 of 1994 from 2008 on, as
// confirmed in public sources (see holidays_test.go): election days, the
// Tuesday given when Christmas Day fell on a Sunday and the Monday was
// already the Day of Goodwill, and two others. No rule predicts them, so a
// new declaration (the next election day, say) must be added here when it
// is gazetted, or business hours will wrongly include that day.
var declaredHolidays = []Holiday{
	{civilDate(2008, time.May, 2), "Public holiday (Human Rights Day fell on Good Friday)"},
	{civilDate(2009, time.April, 22), "National and provincial elections"},
	{civilDate(2011, time.May, 18), "Local government elections"},
	{civilDate(2011, time.December, 27), "Public holiday (Christmas Day fell on a Sunday)"},
	{civilDate(2014, time.May, 7), "National and provincial elections"},
	{civilDate(2016, time.August, 3), "Local government elections"},
	{civilDate(2016, time.December, 27), "Public holiday (Christmas Day fell on a Sunday)"},
	{civilDate(2019, time.May, 8), "National and provincial elections"},
	{civilDate(2021, time.November, 1), "Local government elections"},
	{civilDate(2022, time.December, 27), "Public holiday (Christmas Day fell on a Sunday)"},
	{civilDate(2023, time.December, 15), "Public holiday (Rugby World Cup victory)"},
	{civilDate(2024, time.May, 29), "National and provincial elections"},
}

// SouthAfricanPublicHolidays returns the public holidays of year, sorted
// by date: the Act's schedule (Good Friday and Family Day from Easter),
// the declared days of that year, and, by section 2(1), the Monday after
// any of them that falls on a Sunday, named "Public holiday (X observed)".
// A Monday that is already a holiday gains nothing (Christmas Day on a
// Sunday; the President has declared the Tuesday instead, see
// declaredHolidays). Holidays that share a date are each listed.
func SouthAfricanPublicHolidays(year int) []Holiday {
	easter := easterSunday(year)
	hs := []Holiday{
		{civilDate(year, time.January, 1), "New Year's Day"},
		{civilDate(year, time.March, 21), "Human Rights Day"},
		{easter.AddDate(0, 0, -2), "Good Friday"},
		{easter.AddDate(0, 0, 1), "Family Day"},
		{civilDate(year, time.April, 27), "Freedom Day"},
		{civilDate(year, time.May, 1), "Workers' Day"},
		{civilDate(year, time.June, 16), "Youth Day"},
		{civilDate(year, time.August, 9), "National Women's Day"},
		{civilDate(year, time.September, 24), "Heritage Day"},
		{civilDate(year, time.December, 16), "Day of Reconciliation"},
		{civilDate(year, time.December, 25), "Christmas Day"},
		{civilDate(year, time.December, 26), "Day of Goodwill"},
	}
	for _, h := range declaredHolidays {
		if h.Date.Year() == year {
			hs = append(hs, h)
		}
	}
	for _, h := range slices.Clone(hs) {
		monday := h.Date.AddDate(0, 0, 1)
		if h.Date.Weekday() == time.Sunday && !holidayOn(hs, monday) {
			hs = append(hs, Holiday{monday, "Public holiday (" + h.Name + " observed)"})
		}
	}
	slices.SortStableFunc(hs, func(a, b Holiday) int { return a.Date.Compare(b.Date) })
	return hs
}

// IsSouthAfricanPublicHoliday reports whether the civil date is a South
// African public holiday. It takes the date's parts, not a time.Time, so
// that the caller decides in which zone the day is counted
// (IsSouthAfricanBusinessHours passes now.In(loc).Date()).
func IsSouthAfricanPublicHoliday(year int, month time.Month, day int) bool {
	d := civilDate(year, month, day)
	return holidayOn(SouthAfricanPublicHolidays(d.Year()), d)
}

// holidayOn reports whether one of hs falls on d.
func holidayOn(hs []Holiday, d time.Time) bool {
	return slices.ContainsFunc(hs, func(h Holiday) bool { return h.Date.Equal(d) })
}

// civilDate is the date as Holiday.Date holds it: midnight UTC.
func civilDate(year int, month time.Month, day int) time.Time {
	return time.Date(year, month, day, 0, 0, 0, 0, time.UTC)
}

// easterSunday is Western (Gregorian) Easter Sunday of year, by the
// Anonymous Gregorian algorithm (Meeus, Astronomical Algorithms, ch. 8),
// valid for every Gregorian year.
func easterSunday(year int) time.Time {
	a := year % 19 // place in the 19-year Metonic cycle
	b, c := year/100, year%100
	d, e := b/4, b%4
	f := (b + 8) / 25
	g := (b - f + 1) / 3
	h := (19*a + b - d - g + 15) % 30 // the moon's age: when the Paschal full moon falls
	i, k := c/4, c%4
	l := (32 + 2*e + 2*i - h - k) % 7 // from that full moon to the Sunday after it
	m := (a + 11*h + 22*l) / 451
	n := h + l - 7*m + 114
	return civilDate(year, time.Month(n/31), n%31+1)
}
