package domain

import (
	"strings"

	"github.com/google/uuid"
)

// Merchant countries (contract §5), spelled as the API spells them.
const (
	CountrySouthAfrica = "SouthAfrica"
	CountryKenya       = "Kenya"
	CountryNigeria     = "Nigeria"
	CountryBTC         = "BTC"
)

// Payout methods of a merchant (contract §5).
const (
	PayoutBank      = "BANK"
	PayoutMomo      = "MOMO"
	PayoutLightning = "LIGHTNING"
)

// MerchantCountries lists the countries a merchant may have, in the order
// error messages name them.
var MerchantCountries = []string{CountrySouthAfrica, CountryKenya, CountryNigeria, CountryBTC}

// merchantCurrency is each country's currency (contract §5); BTC is paid in sats.
var merchantCurrency = map[string]string{
	CountrySouthAfrica: "ZAR", CountryKenya: "KES", CountryNigeria: "NGN", CountryBTC: "BTC",
}

// Merchant is the state of one merchant's stream: the recipient of payments
// (spec §2.8), a bank account, a Kenyan momo number or a Lightning
// destination. Empty strings are the fields a payout method does not use.
type Merchant struct {
	ID            uuid.UUID
	Name          string
	Country       string
	Currency      string
	PayoutMethod  string
	BankName      string // as listed by Banks, not as sent
	AccountNumber string
	PhoneNumber   string // Kenyan mobile, E.164
	LNURL         string // Lightning address or bech32 LNURL
}

// MerchantCreated opens a merchant's stream. The account number and the
// phone number are withheld from the NATS publication, as is the Lightning
// address (name@domain identifies a wallet holder as an email address
// does). The merchant's name is published: a merchant is a business that
// partners pay, and its trading name is what analytics group payments by.
type MerchantCreated struct {
	MerchantID    uuid.UUID `json:"id"`
	Name          string    `json:"name"`
	Country       string    `json:"country"`
	Currency      string    `json:"currency"`
	PayoutMethod  string    `json:"payoutMethod"`
	BankName      string    `json:"bankName"`
	AccountNumber string    `json:"accountNumber" ledger:"personal"`
	PhoneNumber   string    `json:"phoneNumber" ledger:"personal"`
	LNURL         string    `json:"lnurl" ledger:"personal"`
}

func (MerchantCreated) EventType() string { return "merchant.created" }

var _ = register(EventDef{Type: "merchant.created", Version: 1, New: func() Event { return new(MerchantCreated) },
	Doc: "A merchant (a payment recipient: bank account, Kenyan momo number or Lightning destination) was created."})

// ApplyMerchant folds one event into m. It cannot fail: events are facts.
func ApplyMerchant(m Merchant, e Event) Merchant {
	switch e := e.(type) {
	case MerchantCreated:
		m = Merchant{ID: e.MerchantID, Name: e.Name, Country: e.Country, Currency: e.Currency,
			PayoutMethod: e.PayoutMethod, BankName: e.BankName, AccountNumber: e.AccountNumber,
			PhoneNumber: e.PhoneNumber, LNURL: e.LNURL}
	}
	return m
}

// CreateMerchant is POST /merchants (spec §2.8, §4.5, contract §5). Empty
// strings are members not sent (or null).
type CreateMerchant struct {
	MerchantID    uuid.UUID // a new UUIDv7 for a new stream
	Name          string
	Country       string
	BankName      string
	AccountNumber string
	PhoneNumber   string
	LNURL         string
	// Banks are the country's banks bankName must name: in production the
	// payout provider's list, nil for the built-in one (Banks).
	Banks []Bank
}

// DecideCreateMerchant validates a new merchant against contract §5's
// table and returns its merchant.created:
//
//	SouthAfrica  ZAR  BANK       bankName, accountNumber
//	Kenya        KES  BANK       bankName, accountNumber
//	             KES  MOMO       phoneNumber (given: MOMO), a Kenyan mobile in E.164
//	Nigeria      NGN  BANK       bankName, accountNumber
//	BTC          BTC  LIGHTNING  lnurl: Lightning address or bech32 LNURL to https
//
// name is 1-200 characters; accountNumber is 6 to 20 digits, nothing else
// (the shortest and longest domestic account numbers of the three
// countries, NUBAN's 10 digits included); a member the payout method does
// not use is 400 naming it rather than silently dropped. Field problems are
// validation_failed, all at once; a well-formed bankName that is not one of
// the country's Banks is 400 unknown_bank naming bankName. m is the state
// of the new stream and must be empty.
func DecideCreateMerchant(m Merchant, c CreateMerchant) ([]Event, error) {
	var fe fieldErrors
	name := fe.required("name", c.Name, 200)
	country := c.Country
	currency, known := merchantCurrency[country]
	switch {
	case country == "":
		fe.add("country", "is required")
	case !known:
		fe.add("country", "must be one of "+strings.Join(MerchantCountries, ", "))
	}
	e := MerchantCreated{MerchantID: c.MerchantID, Name: name, Country: country, Currency: currency}
	unused := func(field, value, why string) {
		if value != "" {
			fe.add(field, "must not be given "+why)
		}
	}
	bank := func() {
		e.PayoutMethod = PayoutBank
		e.BankName = strings.TrimSpace(c.BankName)
		if e.BankName == "" {
			fe.add("bankName", "is required")
		}
		e.AccountNumber = fe.accountNumber(c.AccountNumber)
	}
	switch {
	case !known:
	case country == CountryBTC:
		e.PayoutMethod = PayoutLightning
		if c.LNURL == "" {
			fe.add("lnurl", "is required")
		} else {
			e.LNURL = fe.lnurl("lnurl", c.LNURL)
		}
		unused("bankName", c.BankName, "for country BTC")
		unused("accountNumber", c.AccountNumber, "for country BTC")
		unused("phoneNumber", c.PhoneNumber, "for country BTC")
	case country == CountryKenya && c.PhoneNumber != "":
		e.PayoutMethod = PayoutMomo
		if !IsKenyanMobile(c.PhoneNumber) {
			fe.add("phoneNumber", "must be a Kenyan mobile number in E.164 format: +2547XXXXXXXX or +2541XXXXXXXX")
		}
		e.PhoneNumber = c.PhoneNumber
		unused("bankName", c.BankName, "with phoneNumber (a MOMO merchant)")
		unused("accountNumber", c.AccountNumber, "with phoneNumber (a MOMO merchant)")
		unused("lnurl", c.LNURL, "for country Kenya")
	default:
		bank()
		unused("phoneNumber", c.PhoneNumber, "for country "+country)
		unused("lnurl", c.LNURL, "for country "+country)
	}
	if err := fe.err(); err != nil {
		return nil, err
	}
	if e.PayoutMethod == PayoutBank {
		b, ok := LookupBank(country, e.BankName)
		if c.Banks != nil {
			b, ok = findBank(c.Banks, e.BankName)
		}
		if !ok {
			msg := "must be one of the banks GET /utils/banks?country=" + country + " lists"
			return nil, &Error{Kind: Invalid, Code: "unknown_bank", Message: "bankName " + msg,
				Fields: []FieldError{{Field: "bankName", Message: msg}}}
		}
		e.BankName = b.Name
	}
	if m.ID != uuid.Nil || c.MerchantID == uuid.Nil {
		return nil, Errorf(Internal, "bad_merchant_id", "merchant id %s is not new", c.MerchantID)
	}
	return []Event{e}, nil
}

// accountNumber checks a bank account number: 6 to 20 digits.
func (fe *fieldErrors) accountNumber(s string) string {
	switch {
	case s == "":
		fe.add("accountNumber", "is required")
	case len(s) < 6 || len(s) > 20 || !allDigits(s):
		fe.add("accountNumber", "must be 6 to 20 digits, without spaces or other characters")
	}
	return s
}
