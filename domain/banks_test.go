package domain

import "testing"

// TestBankCodeFormats: each country's codes have the length its clearing
// system uses (banks.go): a South African universal branch code has six
// digits, a Kenyan CBK bank code two, a Nigerian CBN bank code three.
func TestBankCodeFormats(t *testing.T) {
	t.Parallel()
	for country, n := range map[string]int{"SouthAfrica": 6, "Kenya": 2, "Nigeria": 3} {
		list, _ := Banks(country)
		for _, b := range list {
			if len(b.Code) != n || !allDigits(b.Code) {
				t.Errorf("Banks(%s): %+v, want a %d-digit code", country, b, n)
			}
		}
	}
}

// TestBankCodes pins codes checked against the sources banks.go cites,
// beyond those TestBanks pins, and banks that must not be listed.
func TestBankCodes(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ country, name, code string }{
		{"SouthAfrica", "First National Bank", "250655"}, {"SouthAfrica", "Nedbank", "198765"},
		{"SouthAfrica", "TymeBank", "678910"}, {"SouthAfrica", "Discovery Bank", "679000"},
		{"SouthAfrica", "Bidvest Bank", "462005"}, {"SouthAfrica", "Access Bank South Africa", "410506"},
		{"Kenya", "Standard Chartered Bank Kenya", "02"}, {"Kenya", "Absa Bank Kenya", "03"},
		{"Kenya", "NCBA Bank Kenya", "07"}, {"Kenya", "I&M Bank", "57"}, {"Kenya", "Diamond Trust Bank Kenya", "63"},
		{"Kenya", "Premier Bank Kenya", "74"}, {"Kenya", "Family Bank", "70"},
		{"Nigeria", "First Bank of Nigeria", "011"}, {"Nigeria", "United Bank for Africa", "033"},
		{"Nigeria", "Stanbic IBTC Bank", "221"}, {"Nigeria", "Titan Trust Bank", "102"},
		{"Nigeria", "Globus Bank", "103"}, {"Nigeria", "Parallex Bank", "104"},
		{"Nigeria", "PremiumTrust Bank", "105"}, {"Nigeria", "Optimus Bank", "107"}, {"Nigeria", "Wema Bank", "035"},
	} {
		if b, ok := LookupBank(tt.country, tt.name); !ok || b.Code != tt.code {
			t.Errorf("LookupBank(%s, %s): got %+v, %v, want code %s", tt.country, tt.name, b, ok, tt.code)
		}
	}
	for _, tt := range []struct{ country, name string }{
		{"Nigeria", "Heritage Bank"},       // licence revoked June 2024
		{"Kenya", "Spire Bank"},            // business transferred to Equity Bank, January 2023
		{"Kenya", "First Community Bank"},  // now Premier Bank Kenya
		{"SouthAfrica", "Mercantile Bank"}, // now Capitec Business
	} {
		if b, ok := LookupBank(tt.country, tt.name); ok {
			t.Errorf("LookupBank(%s, %s): got %+v, want none", tt.country, tt.name, b)
		}
	}
}
