package domain

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/google/uuid"
)

const testLNURL = "LNURL1DP68GURN8GHJ7UM9WFMXJCM99E3K7MF0V9CXJ0M385EKVCENXC6R2C35XVUKXEFCV5MKVV34X5EKZD3EV56NYD3HXQURZEPEXEJXXEPNXSCRVWFNV9NXZCN9XQ6XYEFHVGCXXCMYXYMNSERXFQ5FNS"

func TestDecideCreateMerchant(t *testing.T) {
	t.Parallel()
	id := uuid.Must(uuid.NewV7())
	for _, tt := range []struct {
		name string
		c    CreateMerchant
		want MerchantCreated
	}{
		{"South African bank", CreateMerchant{Name: "Shoprite", Country: "SouthAfrica", BankName: "capitec BANK", AccountNumber: "1234567890"},
			MerchantCreated{Name: "Shoprite", Country: "SouthAfrica", Currency: "ZAR", PayoutMethod: "BANK", BankName: "Capitec Bank", AccountNumber: "1234567890"}},
		{"Kenyan bank", CreateMerchant{Name: "  Java House ", Country: "Kenya", BankName: " Equity Bank Kenya ", AccountNumber: "0123456789012"},
			MerchantCreated{Name: "Java House", Country: "Kenya", Currency: "KES", PayoutMethod: "BANK", BankName: "Equity Bank Kenya", AccountNumber: "0123456789012"}},
		{"Kenyan momo", CreateMerchant{Name: "Mama Mboga", Country: "Kenya", PhoneNumber: "+254712345678"},
			MerchantCreated{Name: "Mama Mboga", Country: "Kenya", Currency: "KES", PayoutMethod: "MOMO", PhoneNumber: "+254712345678"}},
		{"Kenyan momo 01", CreateMerchant{Name: "M", Country: "Kenya", PhoneNumber: "+254112345678"},
			MerchantCreated{Name: "M", Country: "Kenya", Currency: "KES", PayoutMethod: "MOMO", PhoneNumber: "+254112345678"}},
		{"Nigerian bank", CreateMerchant{Name: "Jumia", Country: "Nigeria", BankName: "ZENITH BANK", AccountNumber: "0123456789"},
			MerchantCreated{Name: "Jumia", Country: "Nigeria", Currency: "NGN", PayoutMethod: "BANK", BankName: "Zenith Bank", AccountNumber: "0123456789"}},
		{"Lightning address", CreateMerchant{Name: "Bitrefill", Country: "BTC", LNURL: "shop@Bitrefill.COM"},
			MerchantCreated{Name: "Bitrefill", Country: "BTC", Currency: "BTC", PayoutMethod: "LIGHTNING", LNURL: "shop@bitrefill.com"}},
		{"bech32 LNURL", CreateMerchant{Name: "Service", Country: "BTC", LNURL: testLNURL},
			MerchantCreated{Name: "Service", Country: "BTC", Currency: "BTC", PayoutMethod: "LIGHTNING", LNURL: testLNURL}},
		{"a bank of the provider's list only", CreateMerchant{Name: "T", Country: "SouthAfrica", BankName: "tyme bank", AccountNumber: "1234567890",
			Banks: []Bank{{Name: "TymeBank", Code: "678910"}, {Name: "Tyme Bank", Code: "678910"}}},
			MerchantCreated{Name: "T", Country: "SouthAfrica", Currency: "ZAR", PayoutMethod: "BANK", BankName: "Tyme Bank", AccountNumber: "1234567890"}},
		{"shortest account", CreateMerchant{Name: "x", Country: "SouthAfrica", BankName: "Nedbank", AccountNumber: "123456"},
			MerchantCreated{Name: "x", Country: "SouthAfrica", Currency: "ZAR", PayoutMethod: "BANK", BankName: "Nedbank", AccountNumber: "123456"}},
		{"longest account and name", CreateMerchant{Name: strings.Repeat("n", 200), Country: "SouthAfrica", BankName: "Nedbank", AccountNumber: strings.Repeat("9", 20)},
			MerchantCreated{Name: strings.Repeat("n", 200), Country: "SouthAfrica", Currency: "ZAR", PayoutMethod: "BANK", BankName: "Nedbank", AccountNumber: strings.Repeat("9", 20)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.c.MerchantID, tt.want.MerchantID = id, id
			events, err := DecideCreateMerchant(Merchant{}, tt.c)
			if err != nil {
				t.Fatalf("got %v, want %+v", err, tt.want)
			}
			if len(events) != 1 || !reflect.DeepEqual(events[0], tt.want) {
				t.Fatalf("got %+v, want [%+v]", events, tt.want)
			}
			checkStored(t, events)
			m := ApplyMerchant(Merchant{}, events[0])
			if m.ID != id || m.BankName != tt.want.BankName || m.PayoutMethod != tt.want.PayoutMethod || m.LNURL != tt.want.LNURL {
				t.Errorf("ApplyMerchant: got %+v, want the event's fields", m)
			}
		})
	}
}

func TestDecideCreateMerchantErrors(t *testing.T) {
	t.Parallel()
	za := func(f func(*CreateMerchant)) CreateMerchant {
		c := CreateMerchant{MerchantID: uuid.Must(uuid.NewV7()), Name: "Shop", Country: "SouthAfrica", BankName: "ABSA Bank", AccountNumber: "12345678"}
		f(&c)
		return c
	}
	for _, tt := range []struct {
		name   string
		c      CreateMerchant
		code   string
		fields []string
	}{
		{"no name", za(func(c *CreateMerchant) { c.Name = " " }), "validation_failed", []string{"name"}},
		{"long name", za(func(c *CreateMerchant) { c.Name = strings.Repeat("n", 201) }), "validation_failed", []string{"name"}},
		{"control in name", za(func(c *CreateMerchant) { c.Name = "a\x00b" }), "validation_failed", []string{"name"}},
		{"no country", za(func(c *CreateMerchant) { c.Country = "" }), "validation_failed", []string{"country"}},
		{"unknown country", za(func(c *CreateMerchant) { c.Country = "Ghana" }), "validation_failed", []string{"country"}},
		{"country case", za(func(c *CreateMerchant) { c.Country = "southafrica" }), "validation_failed", []string{"country"}},
		{"ISO code", za(func(c *CreateMerchant) { c.Country = "ZAF" }), "validation_failed", []string{"country"}},
		{"no bank", za(func(c *CreateMerchant) { c.BankName = "" }), "validation_failed", []string{"bankName"}},
		{"no account", za(func(c *CreateMerchant) { c.AccountNumber = "" }), "validation_failed", []string{"accountNumber"}},
		{"short account", za(func(c *CreateMerchant) { c.AccountNumber = "12345" }), "validation_failed", []string{"accountNumber"}},
		{"long account", za(func(c *CreateMerchant) { c.AccountNumber = strings.Repeat("1", 21) }), "validation_failed", []string{"accountNumber"}},
		{"spaced account", za(func(c *CreateMerchant) { c.AccountNumber = "1234 5678" }), "validation_failed", []string{"accountNumber"}},
		{"letters in account", za(func(c *CreateMerchant) { c.AccountNumber = "12345678A" }), "validation_failed", []string{"accountNumber"}},
		{"lnurl on a bank merchant", za(func(c *CreateMerchant) { c.LNURL = "a@b.com" }), "validation_failed", []string{"lnurl"}},
		{"phone on a South African merchant", za(func(c *CreateMerchant) { c.PhoneNumber = "+27821234567" }), "validation_failed", []string{"phoneNumber"}},
		{"unknown bank", za(func(c *CreateMerchant) { c.BankName = "Bank of Nowhere" }), "unknown_bank", []string{"bankName"}},
		{"Kenyan bank in South Africa", za(func(c *CreateMerchant) { c.BankName = "Equity Bank Kenya" }), "unknown_bank", []string{"bankName"}},
		{"not in the provider's list", za(func(c *CreateMerchant) { c.Banks = []Bank{{Name: "Capitec Bank", Code: "470010"}} }), "unknown_bank", []string{"bankName"}},
		{"Kenya without bank or phone", CreateMerchant{Name: "K", Country: "Kenya"}, "validation_failed", []string{"bankName", "accountNumber"}},
		{"Kenya bank without account", CreateMerchant{Name: "K", Country: "Kenya", BankName: "Family Bank"}, "validation_failed", []string{"accountNumber"}},
		{"Kenya unknown bank", CreateMerchant{Name: "K", Country: "Kenya", BankName: "Capitec Bank", AccountNumber: "123456"}, "unknown_bank", []string{"bankName"}},
		{"Kenyan momo not Kenyan", CreateMerchant{Name: "K", Country: "Kenya", PhoneNumber: "+255712345678"}, "validation_failed", []string{"phoneNumber"}},
		{"Kenyan momo not E.164", CreateMerchant{Name: "K", Country: "Kenya", PhoneNumber: "0712345678"}, "validation_failed", []string{"phoneNumber"}},
		{"Kenyan momo with bank", CreateMerchant{Name: "K", Country: "Kenya", PhoneNumber: "+254712345678", BankName: "Family Bank", AccountNumber: "123456"}, "validation_failed", []string{"bankName", "accountNumber"}},
		{"Kenyan momo with lnurl", CreateMerchant{Name: "K", Country: "Kenya", PhoneNumber: "+254712345678", LNURL: "a@b.com"}, "validation_failed", []string{"lnurl"}},
		{"Nigeria without bank", CreateMerchant{Name: "N", Country: "Nigeria", AccountNumber: "0123456789"}, "validation_failed", []string{"bankName"}},
		{"Nigeria unknown bank", CreateMerchant{Name: "N", Country: "Nigeria", BankName: "Heritage Bank", AccountNumber: "0123456789"}, "unknown_bank", []string{"bankName"}},
		{"Nigeria phone", CreateMerchant{Name: "N", Country: "Nigeria", BankName: "Wema Bank", AccountNumber: "0123456789", PhoneNumber: "+2348012345678"}, "validation_failed", []string{"phoneNumber"}},
		{"BTC without lnurl", CreateMerchant{Name: "B", Country: "BTC"}, "validation_failed", []string{"lnurl"}},
		{"BTC bad address", CreateMerchant{Name: "B", Country: "BTC", LNURL: "Alice@example.com"}, "validation_failed", []string{"lnurl"}},
		{"BTC bad domain", CreateMerchant{Name: "B", Country: "BTC", LNURL: "alice@localhost"}, "validation_failed", []string{"lnurl"}},
		{"BTC broken LNURL", CreateMerchant{Name: "B", Country: "BTC", LNURL: testLNURL[:len(testLNURL)-1] + "Q"}, "validation_failed", []string{"lnurl"}},
		{"BTC http LNURL", CreateMerchant{Name: "B", Country: "BTC", LNURL: encodeBech32("lnurl", []byte("http://example.com/x"))}, "validation_failed", []string{"lnurl"}},
		{"BTC plain URL", CreateMerchant{Name: "B", Country: "BTC", LNURL: "https://example.com/x"}, "validation_failed", []string{"lnurl"}},
		{"BTC with bank", CreateMerchant{Name: "B", Country: "BTC", LNURL: "a@b.com", BankName: "ABSA Bank", AccountNumber: "123456"}, "validation_failed", []string{"bankName", "accountNumber"}},
		{"BTC with phone", CreateMerchant{Name: "B", Country: "BTC", LNURL: "a@b.com", PhoneNumber: "+254712345678"}, "validation_failed", []string{"phoneNumber"}},
		{"everything wrong", CreateMerchant{Country: "Mars"}, "validation_failed", []string{"name", "country"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if tt.c.MerchantID == uuid.Nil {
				tt.c.MerchantID = uuid.Must(uuid.NewV7())
			}
			events, err := DecideCreateMerchant(Merchant{}, tt.c)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v, %v, want a %s error", events, err, tt.code)
			}
			checkCallerError(t, err)
			if e.Kind != Invalid || e.Code != tt.code {
				t.Errorf("got kind %d code %s, want Invalid %s", e.Kind, e.Code, tt.code)
			}
			var got []string
			for _, f := range e.Fields {
				got = append(got, f.Field)
			}
			if !reflect.DeepEqual(got, tt.fields) {
				t.Errorf("fields: got %v, want %v (%v)", got, tt.fields, err)
			}
		})
	}
}

func TestDecideCreateMerchantExisting(t *testing.T) {
	t.Parallel()
	c := CreateMerchant{MerchantID: uuid.Must(uuid.NewV7()), Name: "B", Country: "BTC", LNURL: "a@b.com"}
	_, err := DecideCreateMerchant(Merchant{ID: c.MerchantID}, c)
	if ErrorKind(err) != Internal {
		t.Errorf("on an existing stream: got %v, want Internal", err)
	}
}

func TestBanks(t *testing.T) {
	t.Parallel()
	for _, country := range []string{"SouthAfrica", "Kenya", "Nigeria"} {
		list, ok := Banks(country)
		if !ok || len(list) < 10 {
			t.Fatalf("Banks(%s): got %d, %v, want at least 10", country, len(list), ok)
		}
		names, codes := map[string]bool{}, map[string]bool{}
		for _, b := range list {
			if b.Name == "" || !allDigits(b.Code) || names[strings.ToLower(b.Name)] || codes[b.Code] {
				t.Errorf("Banks(%s): got %+v, want a unique name and a unique numeric code", country, b)
			}
			names[strings.ToLower(b.Name)], codes[b.Code] = true, true
			if got, ok := LookupBank(country, strings.ToUpper(b.Name)); !ok || got != b {
				t.Errorf("LookupBank(%s, %s): got %+v, %v, want %+v", country, strings.ToUpper(b.Name), got, ok, b)
			}
		}
		list[0].Name = "changed"
		if again, _ := Banks(country); again[0].Name == "changed" {
			t.Errorf("Banks(%s): got the shared table, want a copy", country)
		}
	}
	for _, tt := range []struct{ country, name, code string }{
		{"SouthAfrica", "ABSA Bank", "632005"}, {"SouthAfrica", "Capitec Bank", "470010"}, {"SouthAfrica", "Standard Bank", "051001"},
		{"Kenya", "KCB Bank Kenya", "01"}, {"Kenya", "Equity Bank Kenya", "68"}, {"Kenya", "Co-operative Bank of Kenya", "11"},
		{"Nigeria", "Access Bank", "044"}, {"Nigeria", "Guaranty Trust Bank", "058"}, {"Nigeria", "Zenith Bank", "057"},
	} {
		if b, ok := LookupBank(tt.country, tt.name); !ok || b.Code != tt.code {
			t.Errorf("LookupBank(%s, %s): got %+v, %v, want code %s", tt.country, tt.name, b, ok, tt.code)
		}
	}
	for _, c := range []string{"BTC", "Ghana", "", "southafrica"} {
		if _, ok := Banks(c); ok {
			t.Errorf("Banks(%q): got a list, want none", c)
		}
	}
}

// FuzzDecideCreateMerchant decides any fields: no panic, no Internal error,
// and a created merchant satisfies contract §5's table.
func FuzzDecideCreateMerchant(f *testing.F) {
	f.Add("Shop", "SouthAfrica", "absa bank", "12345678", "", "")
	f.Add("Shop", "Kenya", "", "", "+254712345678", "")
	f.Add("Shop", "Kenya", "Equity Bank Kenya", "123456", "", "")
	f.Add("Shop", "Nigeria", "Zenith Bank", "0123456789", "", "")
	f.Add("Shop", "BTC", "", "", "", "alice@example.com")
	f.Add("Shop", "BTC", "", "", "", testLNURL)
	f.Add("", "Mars", "x", "y", "z", "w")
	f.Fuzz(func(t *testing.T, name, country, bank, account, phone, lnurl string) {
		c := CreateMerchant{MerchantID: uuid.Must(uuid.NewV7()), Name: name, Country: country, BankName: bank,
			AccountNumber: account, PhoneNumber: phone, LNURL: lnurl}
		events, err := DecideCreateMerchant(Merchant{}, c)
		if err != nil {
			checkCallerError(t, err)
			return
		}
		e := events[0].(MerchantCreated)
		switch e.PayoutMethod {
		case PayoutBank:
			if _, ok := LookupBank(e.Country, e.BankName); !ok || !allDigits(e.AccountNumber) || e.LNURL != "" || e.PhoneNumber != "" {
				t.Fatalf("got %+v, want a listed bank and a numeric account only", e)
			}
		case PayoutMomo:
			if e.Country != CountryKenya || !IsKenyanMobile(e.PhoneNumber) || e.BankName != "" {
				t.Fatalf("got %+v, want a Kenyan mobile only", e)
			}
		case PayoutLightning:
			_, lnErr := DecodeLNURL(e.LNURL)
			if e.Country != CountryBTC || (lnErr != nil && !IsLightningAddress(e.LNURL)) || e.BankName != "" {
				t.Fatalf("got %+v, want a Lightning destination only", e)
			}
		default:
			t.Fatalf("got payout method %q", e.PayoutMethod)
		}
		checkStored(t, events)
	})
}
