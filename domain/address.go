package domain

import "strings"

// Address is spec §2.3, the shape of a user's address, the profile's address,
// a business's registered and trading addresses and a business person's
// address. Line2 and State are optional; empty means null. Its lines are
// personal data wherever an Address appears; the country alone is not.
type Address struct {
	Line1      string `json:"line1" ledger:"personal"`
	Line2      string `json:"line2" ledger:"personal"`
	City       string `json:"city" ledger:"personal"`
	State      string `json:"state" ledger:"personal"`
	PostalCode string `json:"postalCode" ledger:"personal"`
	Country    string `json:"country"` // ISO 3166-1 alpha-3
}

// address checks a whole address and returns it trimmed. name spells a
// member's field for errors: "address.line1" in a body with an address
// object, "addressLine1" in PATCH /users with its flat fields.
func (fe *fieldErrors) address(a Address, name func(member string) string) Address {
	a.Line1 = fe.required(name("line1"), a.Line1, 200)
	a.Line2 = fe.optText(name("line2"), a.Line2, 200)
	a.City = fe.required(name("city"), a.City, 100)
	a.State = fe.optText(name("state"), a.State, 100)
	a.PostalCode = fe.required(name("postalCode"), a.PostalCode, 20)
	if a.Country == "" {
		fe.add(name("country"), "is required")
	} else {
		fe.country(name("country"), a.Country)
	}
	return a
}

// nested names an address object's members: nested("business.registeredAddress")("city").
func nested(prefix string) func(string) string {
	return func(member string) string { return prefix + "." + member }
}

// flat names the flat address fields of PATCH /users: line1 -> addressLine1.
func flat(member string) string {
	return "address" + strings.ToUpper(member[:1]) + member[1:]
}

// optAddress checks an optional address object: nil stays nil.
func (fe *fieldErrors) optAddress(a *Address, prefix string) *Address {
	if a == nil {
		return nil
	}
	c := fe.address(*a, nested(prefix))
	return &c
}
