package domain

import (
	"slices"
	"strings"
	"testing"
)

func TestBusinessRules(t *testing.T) {
	t.Parallel()
	biz := mustUpdate(t, newUser(), businessBody)
	person := func(types, extra string) string {
		return `{"types":` + types + `,"person":{"firstName":"A","lastName":"B"` + extra + `}}`
	}
	persons := func(ps ...string) string { return `"businessPersons":[` + strings.Join(ps, ",") + `]` }
	director, ubo := person(`["director"]`, ""), person(`["ubo"]`, "")
	company := func(extra string) string { return `"business":{"companyName":"Acme","type":"LIMITED"` + extra + `}` }
	tests := []struct {
		name    string
		state   User
		body    string
		wantFld []string // nil: the patch is accepted
	}{
		{name: "business with a director and a ubo", state: newUser(), body: businessBody},
		{name: "one person both director and ubo", state: newUser(),
			body: `{"entityType":"business",` + company("") + `,` + persons(person(`["director","ubo"]`, "")) + `}`},
		{name: "every business field", state: newUser(), body: `{"entityType":"business",` + company(`,"tradingName":"Acme Shop",`+
			`"registrationNumber":"PVT-1","registrationDate":"2010-01-31","phone":"+254712345678","website":"https://acme.example/about",`+
			`"registeredAddress":{"line1":"1 Road","city":"Nairobi","postalCode":"00100","country":"KEN"},`+
			`"tradingAddress":{"line1":"2 Road","line2":null,"city":"Nairobi","state":null,"postalCode":"00100","country":"KEN"}`) +
			`,` + persons(person(`["director","shareholder","secretary"]`, `,"dob":"1980-01-01","nationality":["KEN","GBR"],`+
			`"birthCountry":"GBR","idDocumentType":"PASSPORT","idDocumentNumber":"X1",`+
			`"address":{"line1":"3 Road","city":"London","postalCode":"N1","country":"GBR"}`), ubo) + `}`},
		{name: "business entity without business", state: newUser(), body: `{"entityType":"business",` + persons(director, ubo) + `}`,
			wantFld: []string{"business"}},
		{name: "business entity without persons", state: newUser(), body: `{"entityType":"business",` + company("") + `}`,
			wantFld: []string{"businessPersons"}},
		{name: "no ubo", state: newUser(), body: `{"entityType":"business",` + company("") + `,` + persons(director, director) + `}`,
			wantFld: []string{"businessPersons"}},
		{name: "no director", state: newUser(), body: `{"entityType":"business",` + company("") + `,` + persons(ubo) + `}`,
			wantFld: []string{"businessPersons"}},
		{name: "rule on the state after the patch: ubo removed", state: biz, body: `{` + persons(director) + `}`,
			wantFld: []string{"businessPersons"}},
		{name: "rule on the state after the patch: business cleared", state: biz, body: `{"business":null}`,
			wantFld: []string{"business"}},
		{name: "rule on the state after the patch: other field", state: biz, body: `{"sector":"retail"}`},
		{name: "persons replaced, rule still met", state: biz, body: `{` + persons(person(`["ubo","director"]`, "")) + `}`},
		{name: "business on an individual", state: newUser(), body: `{` + company("") + `}`, wantFld: []string{"business"}},
		{name: "persons on an individual", state: newUser(), body: `{"entityType":"individual",` + persons(director, ubo) + `}`,
			wantFld: []string{"businessPersons"}},
		{name: "business to individual clearing both", state: biz,
			body: `{"entityType":"individual","business":null,"businessPersons":null}`},
		{name: "business to individual keeping business", state: biz, body: `{"entityType":"individual"}`,
			wantFld: []string{"business", "businessPersons"}},
		{name: "company name and type required", state: newUser(),
			body:    `{"entityType":"business","business":{},` + persons(director, ubo) + `}`,
			wantFld: []string{"business.companyName", "business.type"}},
		{name: "type is case-sensitive", state: newUser(), body: `{"entityType":"business","business":{"companyName":"A",` +
			`"type":"limited"},` + persons(director, ubo) + `}`, wantFld: []string{"business.type"}},
		{name: "phone not E.164", state: newUser(), body: `{"entityType":"business",` + company(`,"phone":"0712345678"`) +
			`,` + persons(director, ubo) + `}`, wantFld: []string{"business.phone"}},
		{name: "website without scheme", state: newUser(), body: `{"entityType":"business",` + company(`,"website":"acme.example"`) +
			`,` + persons(director, ubo) + `}`, wantFld: []string{"business.website"}},
		{name: "website ftp", state: newUser(), body: `{"entityType":"business",` + company(`,"website":"ftp://acme.example"`) +
			`,` + persons(director, ubo) + `}`, wantFld: []string{"business.website"}},
		{name: "registration date in the future", state: newUser(), body: `{"entityType":"business",` +
			company(`,"registrationDate":"2027-01-01"`) + `,` + persons(director, ubo) + `}`,
			wantFld: []string{"business.registrationDate"}},
		{name: "registered address country", state: newUser(), body: `{"entityType":"business",` +
			company(`,"registeredAddress":{"line1":"1","city":"N","postalCode":"0","country":"XXX"}`) + `,` + persons(director, ubo) + `}`,
			wantFld: []string{"business.registeredAddress.country"}},
		{name: "trading address incomplete", state: newUser(), body: `{"entityType":"business",` +
			company(`,"tradingAddress":{"line1":"1"}`) + `,` + persons(director, ubo) + `}`,
			wantFld: []string{"business.tradingAddress.city", "business.tradingAddress.postalCode", "business.tradingAddress.country"}},
		{name: "unknown role", state: newUser(), body: `{"entityType":"business",` + company("") + `,` +
			persons(director, ubo, person(`["ceo"]`, "")) + `}`, wantFld: []string{"businessPersons[2].types[0]"}},
		{name: "no roles", state: newUser(), body: `{"entityType":"business",` + company("") + `,` +
			persons(director, ubo, person(`[]`, "")) + `}`, wantFld: []string{"businessPersons[2].types"}},
		{name: "role twice", state: newUser(), body: `{"entityType":"business",` + company("") + `,` +
			persons(director, person(`["ubo","ubo"]`, "")) + `}`, wantFld: []string{"businessPersons[1].types[1]"}},
		{name: "role upper case", state: newUser(), body: `{"entityType":"business",` + company("") + `,` +
			persons(director, person(`["UBO"]`, "")) + `}`, wantFld: []string{"businessPersons[1].types[0]"}},
		{name: "ownership over 100", state: newUser(), body: `{"entityType":"business",` + company("") + `,` +
			persons(director, `{"types":["ubo"],"ownership":100.5,"person":{"firstName":"A","lastName":"B"}}`) + `}`,
			wantFld: []string{"businessPersons[1].ownership"}},
		{name: "ownership negative", state: newUser(), body: `{"entityType":"business",` + company("") + `,` +
			persons(director, `{"types":["ubo"],"ownership":-1,"person":{"firstName":"A","lastName":"B"}}`) + `}`,
			wantFld: []string{"businessPersons[1].ownership"}},
		{name: "ownership 0 and 100", state: newUser(), body: `{"entityType":"business",` + company("") + `,` +
			persons(`{"types":["director"],"ownership":0,"person":{"firstName":"A","lastName":"B"}}`,
				`{"types":["ubo"],"ownership":100,"person":{"firstName":"A","lastName":"B"}}`) + `}`},
		{name: "person without names", state: newUser(), body: `{"entityType":"business",` + company("") + `,` +
			persons(director, `{"types":["ubo"]}`) + `}`,
			wantFld: []string{"businessPersons[1].person.firstName", "businessPersons[1].person.lastName"}},
		{name: "person details invalid", state: newUser(), body: `{"entityType":"business",` + company("") + `,` +
			persons(director, person(`["ubo"]`, `,"dob":"2030-01-01","nationality":["KE"],"birthCountry":"Kenya",`+
				`"idDocumentType":"visa","address":{"line1":"1","city":"N","postalCode":"0","country":"kenya"}`)) + `}`,
			wantFld: []string{"businessPersons[1].person.dob", "businessPersons[1].person.nationality[0]",
				"businessPersons[1].person.birthCountry", "businessPersons[1].person.idDocumentType",
				"businessPersons[1].person.address.country"}},
		{name: "too many persons", state: newUser(), body: `{"entityType":"business",` + company("") + `,` +
			persons(slices.Repeat([]string{director}, maxBusinessPersons+1)...) + `}`, wantFld: []string{"businessPersons"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			events, err := DecideUpdateUser(tt.state, UpdateUser{Patch: mustBody[UserPatch](t, tt.body), ByTenant: true}, testNow)
			if tt.wantFld != nil {
				wantError(t, err, Invalid, "validation_failed", tt.wantFld...)
				return
			}
			if err != nil {
				t.Fatalf("got %v, want the patch accepted", err)
			}
			after := fold(tt.state, events...)
			if after.EntityType == EntityBusiness && (after.Business == nil || !hasDirectorAndUBO(after.BusinessPersons)) {
				t.Errorf("got %+v, want a business with a director and a ubo", after.UserDetails)
			}
		})
	}
}

func TestBusinessIsStoredNormalised(t *testing.T) {
	t.Parallel()
	u := mustUpdate(t, newUser(), `{"entityType":"business","business":{"companyName":" Acme ","type":"PLC"},`+
		`"businessPersons":[{"types":["director","ubo"],"ownership":51.5,"person":{"firstName":" A ","lastName":"B",`+
		`"idDocumentType":"National_ID"}}]}`)
	if u.Business.CompanyName != "Acme" || u.BusinessPersons[0].Person.FirstName != "A" ||
		u.BusinessPersons[0].Person.IDDocumentType != "national_id" || *u.BusinessPersons[0].Ownership != 51.5 {
		t.Errorf("got %+v %+v, want trimmed names and a lower-case id document type", u.Business, u.BusinessPersons)
	}
}
