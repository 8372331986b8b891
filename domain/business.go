package domain

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Business types and business-person roles (contract §3), case-sensitive.
var (
	businessTypes = []string{"LIMITED", "PLC", "SOLE_PROPRIETOR", "PARTNERSHIP", "NON_PROFIT", "OTHER"}
	personRoles   = []string{"director", "shareholder", "ubo", "secretary"}
)

// maxBusinessPersons bounds the businessPersons array of one user.
const maxBusinessPersons = 50

// Business is spec §2.4, set when entityType is business. PATCH /users
// replaces it whole. CompanyName and Type are required; the other members
// may be left out (empty or nil means null). CompanyName and TradingName
// are business names, not personal data (as merchants' and tenants' names);
// the registration number (a document number), phone and addresses are.
// user.updated withholds a user's business whole all the same: a sole
// proprietor's KYB record names its owner.
type Business struct {
	CompanyName        string   `json:"companyName"`
	TradingName        string   `json:"tradingName"`
	Type               string   `json:"type"`
	RegistrationNumber string   `json:"registrationNumber" ledger:"personal"`
	RegistrationDate   string   `json:"registrationDate"`        // YYYY-MM-DD
	Phone              string   `json:"phone" ledger:"personal"` // E.164
	Website            string   `json:"website"`                 // absolute http(s) URL
	RegisteredAddress  *Address `json:"registeredAddress" ledger:"personal"`
	TradingAddress     *Address `json:"tradingAddress" ledger:"personal"`
}

// BusinessPerson is spec §2.5: a director, shareholder, ubo or secretary.
type BusinessPerson struct {
	Types     []string `json:"types"`
	Ownership *float64 `json:"ownership"` // percent, 0-100; nil when not given
	Person    Person   `json:"person"`
}

// Person is the natural person behind a BusinessPerson. FirstName and
// LastName are required; the rest may be left out. Everything but the
// document type identifies the person: personal data wherever it appears.
type Person struct {
	FirstName        string   `json:"firstName" ledger:"personal"`
	LastName         string   `json:"lastName" ledger:"personal"`
	DOB              string   `json:"dob" ledger:"personal"`
	Nationality      []string `json:"nationality" ledger:"personal"`
	BirthCountry     string   `json:"birthCountry" ledger:"personal"`
	IDDocumentType   string   `json:"idDocumentType"`
	IDDocumentNumber string   `json:"idDocumentNumber" ledger:"personal"`
	Address          *Address `json:"address" ledger:"personal"`
}

// business checks a business object and returns it normalised.
func (fe *fieldErrors) business(b Business, now time.Time) Business {
	const f = "business"
	b.CompanyName = fe.required(f+".companyName", b.CompanyName, 200)
	b.TradingName = fe.optText(f+".tradingName", b.TradingName, 200)
	if b.Type == "" {
		fe.add(f+".type", "is required")
	} else {
		fe.oneOf(f+".type", b.Type, businessTypes)
	}
	b.RegistrationNumber = fe.optText(f+".registrationNumber", b.RegistrationNumber, 100)
	if b.RegistrationDate != "" {
		b.RegistrationDate = fe.date(f+".registrationDate", b.RegistrationDate, now, earliestRegistrationYear)
	}
	if b.Phone != "" {
		b.Phone = fe.phone(f+".phone", b.Phone)
	}
	if b.Website != "" {
		b.Website = fe.website(f+".website", b.Website)
	}
	b.RegisteredAddress = fe.optAddress(b.RegisteredAddress, f+".registeredAddress")
	b.TradingAddress = fe.optAddress(b.TradingAddress, f+".tradingAddress")
	return b
}

// businessPersons checks the businessPersons array; an empty one is stored as nil.
func (fe *fieldErrors) businessPersons(ps []BusinessPerson, now time.Time) []BusinessPerson {
	if len(ps) > maxBusinessPersons {
		fe.add("businessPersons", fmt.Sprintf("must hold at most %d persons", maxBusinessPersons))
		return nil
	}
	if len(ps) == 0 {
		return nil
	}
	out := make([]BusinessPerson, len(ps))
	for i, p := range ps {
		out[i] = fe.businessPerson(fmt.Sprintf("businessPersons[%d]", i), p, now)
	}
	return out
}

func (fe *fieldErrors) businessPerson(f string, bp BusinessPerson, now time.Time) BusinessPerson {
	if len(bp.Types) == 0 {
		fe.add(f+".types", "must name at least one of "+strings.Join(personRoles, ", "))
	}
	for i, t := range bp.Types {
		tf := fmt.Sprintf("%s.types[%d]", f, i)
		fe.oneOf(tf, t, personRoles)
		if slices.Contains(bp.Types[:i], t) {
			fe.add(tf, "is listed twice")
		}
	}
	bp.Types = slices.Clone(bp.Types)
	if bp.Ownership != nil {
		o := *bp.Ownership
		if o < 0 || o > 100 {
			fe.add(f+".ownership", "must be between 0 and 100")
		}
		bp.Ownership = &o
	}
	p := bp.Person
	pf := f + ".person"
	p.FirstName = fe.required(pf+".firstName", p.FirstName, 100)
	p.LastName = fe.required(pf+".lastName", p.LastName, 100)
	if p.DOB != "" {
		p.DOB = fe.date(pf+".dob", p.DOB, now, earliestBirthYear)
	}
	p.Nationality = fe.countryCodes(pf+".nationality", p.Nationality)
	if p.BirthCountry != "" {
		p.BirthCountry = fe.country(pf+".birthCountry", p.BirthCountry)
	}
	if p.IDDocumentType != "" {
		p.IDDocumentType = fe.idDocumentType(pf+".idDocumentType", p.IDDocumentType)
	}
	p.IDDocumentNumber = fe.optText(pf+".idDocumentNumber", p.IDDocumentNumber, 50)
	p.Address = fe.optAddress(p.Address, pf+".address")
	bp.Person = p
	return bp
}

// hasDirectorAndUBO is spec §2.5's rule: at least one person with role
// director and at least one with role ubo (the same person may be both).
func hasDirectorAndUBO(ps []BusinessPerson) bool {
	var director, ubo bool
	for _, p := range ps {
		director = director || slices.Contains(p.Types, "director")
		ubo = ubo || slices.Contains(p.Types, "ubo")
	}
	return director && ubo
}
