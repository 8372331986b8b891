package domain

import (
	"strings"
	"testing"
)

func TestPhoneValidators(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in             string
		e164, momoOkay bool
	}{
		{"+254712345678", true, true},
		{"+254112345678", true, true},
		{"+254812345678", true, false},
		{"+254012345678", true, false},
		{"+25471234567", true, false},
		{"+2547123456789", true, false},
		{"+256712345678", true, false},
		{"+447911123456", true, false},
		{"+1234567", true, false},
		{"+123456789012345", true, false},
		{"+1234567890123456", false, false},
		{"+123456", false, false},
		{"+0712345678", false, false},
		{"254712345678", false, false},
		{"0712345678", false, false},
		{"+254 712345678", false, false},
		{"+254-712-345-678", false, false},
		{" +254712345678", false, false},
		{"+٢٥٤٧١٢٣٤٥٦٧٨", false, false}, // Arabic-Indic digits
		{"+", false, false},
		{"", false, false},
	}
	for _, tt := range tests {
		if got := IsE164(tt.in); got != tt.e164 {
			t.Errorf("IsE164(%q): got %v, want %v", tt.in, got, tt.e164)
		}
		if got := IsKenyanMobile(tt.in); got != tt.momoOkay {
			t.Errorf("IsKenyanMobile(%q): got %v, want %v", tt.in, got, tt.momoOkay)
		}
	}
}

func TestCountries(t *testing.T) {
	t.Parallel()
	if got := len(countries); got != 249 {
		t.Errorf("got %d codes, want the 249 officially assigned", got)
	}
	for code, want := range map[string]bool{
		"KEN": true, "UGA": true, "TZA": true, "GBR": true, "USA": true, "DEU": true, "ALA": true, "SSD": true,
		"BES": true, "SXM": true, "CUW": true, "PSE": true, "TWN": true, "ATA": true, "UMI": true,
		"XKX": false, "ANT": false, "SCG": false, "EUE": false, "UK": false, "KE": false, "ken": false, "Ken": false,
		"KENY": false, "": false, "ZZZ": false, " KEN": false,
	} {
		if got := IsCountry(code); got != want {
			t.Errorf("IsCountry(%q): got %v, want %v", code, got, want)
		}
	}
	for code, name := range countries {
		if len(code) != 3 || strings.ToUpper(code) != code || name == "" {
			t.Errorf("got %q %q, want three capitals and a name", code, name)
		}
	}
}

func TestCheckPastDate(t *testing.T) {
	t.Parallel()
	// testNow is 2026-11-22T10:15:30Z.
	tests := []struct {
		in string
		ok bool
	}{
		{"1990-05-01", true},
		{"2000-02-29", true},
		{"1900-01-01", true},
		{"2026-11-22", true}, // its start is before now
		{"2026-11-21", true},
		{"2026-11-23", false},
		{"2100-01-01", false},
		{"1899-12-31", false},
		{"2023-02-29", false},
		{"2023-04-31", false},
		{"2023-13-01", false},
		{"2023-00-10", false},
		{"2023-01-00", false},
		{"1990-1-05", false},
		{"90-01-05", false},
		{"1990/01/05", false},
		{"05-01-1990", false},
		{" 1990-01-05", false},
		{"1990-01-05 ", false},
		{"1990-01-05T00:00:00Z", false},
		{"+1990-01-05", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := checkPastDate(tt.in, testNow, earliestBirthYear) == ""; got != tt.ok {
			t.Errorf("checkPastDate(%q): got %v, want %v", tt.in, got, tt.ok)
		}
	}
}

func TestWebsite(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in string
		ok bool
	}{
		{"https://acme.example", true},
		{"http://acme.example/about?x=1", true},
		{"HTTPS://ACME.example", true},
		{"https://acme.example:8443/", true},
		{"acme.example", false},
		{"//acme.example", false},
		{"ftp://acme.example", false},
		{"javascript:alert(1)", false},
		{"https://", false},
		{"https:///path", false},
		{"https://acme .example", false},
		{"https://" + strings.Repeat("a", 2048) + ".example", false},
	}
	for _, tt := range tests {
		var fe fieldErrors
		fe.website("website", tt.in)
		if got := len(fe) == 0; got != tt.ok {
			t.Errorf("website(%q): got %v (%v), want %v", tt.in, got, fe, tt.ok)
		}
	}
}

func TestFieldErrorsMessage(t *testing.T) {
	t.Parallel()
	var fe fieldErrors
	if err := fe.err(); err != nil {
		t.Fatalf("got %v, want nil", err)
	}
	fe.add("a", "is bad")
	if err := fe.err().(*Error); err.Message != "a is bad" || err.Kind != Invalid {
		t.Errorf("got %+v, want one named field", err)
	}
	fe.add("b", "is bad")
	if err := fe.err().(*Error); err.Message != "2 fields are invalid; see errors" || len(err.Fields) != 2 {
		t.Errorf("got %+v, want both fields", err)
	}
}
