package domain

import (
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// fieldErrors collects every problem of one request, each naming its field as
// spelled in the request (contract §1: dotted for nesting,
// businessPersons[0].types), so a caller fixes them all in one round.
type fieldErrors []FieldError

func (fe *fieldErrors) add(field, msg string) {
	*fe = append(*fe, FieldError{Field: field, Message: msg})
}

// err is nil when nothing was collected, else a 400 validation_failed.
func (fe fieldErrors) err() error {
	switch len(fe) {
	case 0:
		return nil
	case 1:
		return &Error{Kind: Invalid, Code: "validation_failed", Message: fe[0].Field + " " + fe[0].Message, Fields: fe}
	}
	return &Error{Kind: Invalid, Code: "validation_failed",
		Message: fmt.Sprintf("%d fields are invalid; see errors", len(fe)), Fields: fe}
}

// text returns s trimmed, or records why it is not 1 to max characters of
// printable text.
func (fe *fieldErrors) text(field, s string, max int) string {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		fe.add(field, "must not be empty; send null to clear it")
	case !utf8.ValidString(s):
		fe.add(field, "must be valid UTF-8")
	case utf8.RuneCountInString(s) > max:
		fe.add(field, fmt.Sprintf("must be at most %d characters", max))
	case strings.ContainsFunc(s, unicode.IsControl):
		fe.add(field, "must not contain control characters")
	}
	return s
}

// required is text for a member that must be given.
func (fe *fieldErrors) required(field, s string, max int) string {
	if strings.TrimSpace(s) == "" {
		fe.add(field, "is required")
		return ""
	}
	return fe.text(field, s, max)
}

// optText is text for a member that may be left empty.
func (fe *fieldErrors) optText(field, s string, max int) string {
	if strings.TrimSpace(s) == "" {
		return ""
	}
	return fe.text(field, s, max)
}

// country records a problem unless code is an existing ISO 3166-1 alpha-3 code.
func (fe *fieldErrors) country(field, code string) string {
	if !IsCountry(code) {
		fe.add(field, "must be an ISO 3166-1 alpha-3 country code in capitals, such as KEN")
	}
	return code
}

// countryCodes checks a list of country codes: each exists, none twice, at most 10.
// An empty list is stored as nil.
func (fe *fieldErrors) countryCodes(field string, codes []string) []string {
	if len(codes) > 10 {
		fe.add(field, "must hold at most 10 country codes")
		return nil
	}
	seen := map[string]bool{}
	for i, c := range codes {
		f := fmt.Sprintf("%s[%d]", field, i)
		fe.country(f, c)
		if seen[c] {
			fe.add(f, "is listed twice")
		}
		seen[c] = true
	}
	if len(codes) == 0 {
		return nil
	}
	return append([]string(nil), codes...)
}

// Earliest years a date may name: nobody alive was born before 1900, and
// registries go back further.
const (
	earliestBirthYear        = 1900
	earliestRegistrationYear = 1600
)

// date records a problem unless s is a real calendar date YYYY-MM-DD (contract
// §1) whose start, in UTC, is before now and which is not before earliestYear.
func (fe *fieldErrors) date(field, s string, now time.Time, earliestYear int) string {
	if msg := checkPastDate(s, now, earliestYear); msg != "" {
		fe.add(field, msg)
	}
	return s
}

func checkPastDate(s string, now time.Time, earliestYear int) string {
	d, err := time.Parse(time.DateOnly, s)
	if err != nil || len(s) != len(time.DateOnly) || d.Format(time.DateOnly) != s {
		return "must be a real date written YYYY-MM-DD"
	}
	if !d.Before(now) {
		return "must be in the past"
	}
	if d.Year() < earliestYear {
		return fmt.Sprintf("must not be before %d-01-01", earliestYear)
	}
	return ""
}

// phone records a problem unless s is an E.164 number.
func (fe *fieldErrors) phone(field, s string) string {
	s = strings.TrimSpace(s)
	if !IsE164(s) {
		fe.add(field, "must be an international number in E.164 format, such as +254712345678")
	}
	return s
}

// IsE164 reports whether s is a phone number in E.164 format: "+", a country
// code that does not start with 0, and 7 to 15 digits in all.
func IsE164(s string) bool {
	if len(s) < 8 || len(s) > 16 || s[0] != '+' || s[1] == '0' {
		return false
	}
	return allDigits(s[1:])
}

// IsKenyanMobile reports whether s is a Kenyan mobile number in E.164 format,
// +2547XXXXXXXX or +2541XXXXXXXX: 13 characters (contract §4).
func IsKenyanMobile(s string) bool {
	return len(s) == 13 && (strings.HasPrefix(s, "+2547") || strings.HasPrefix(s, "+2541")) && allDigits(s[1:])
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// website records a problem unless s is an absolute http or https URL with a host.
func (fe *fieldErrors) website(field, s string) string {
	s = strings.TrimSpace(s)
	u, err := url.Parse(s)
	switch {
	case len(s) > 2048:
		fe.add(field, "must be at most 2048 characters")
	case err != nil || !u.IsAbs() || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" ||
		strings.ContainsFunc(s, unicode.IsSpace):
		fe.add(field, "must be an absolute http or https URL, such as https://example.com")
	}
	return s
}

// oneOf records a problem unless s is one of allowed.
func (fe *fieldErrors) oneOf(field, s string, allowed []string) string {
	for _, a := range allowed {
		if s == a {
			return s
		}
	}
	fe.add(field, "must be one of "+strings.Join(allowed, ", "))
	return s
}
