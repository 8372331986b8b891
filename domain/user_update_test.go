package domain

import (
	"strings"
	"testing"
)

// mustUpdate is u after a tenant's PATCH /users with body.
func mustUpdate(t testing.TB, u User, body string) User {
	t.Helper()
	events, err := DecideUpdateUser(u, UpdateUser{Patch: mustBody[UserPatch](t, body), ByTenant: true}, testNow)
	if err != nil {
		t.Fatalf("patch %s: %v", body, err)
	}
	return fold(u, events...)
}

const (
	fullAddress = `"addressLine1":"1 Moi Avenue","addressCity":"Nairobi","addressPostalCode":"00100","addressCountry":"KEN"`
	kycBody     = `{"firstName":"Ann","lastName":"Otieno","dob":"1990-05-01","nationality":["KEN"],"birthCountry":"KEN",` +
		fullAddress + `,"idDocumentType":"passport","idDocumentNumber":"A123"}`
	businessBody = `{"entityType":"business","business":{"companyName":"Acme","type":"LIMITED"},` +
		`"businessPersons":[{"types":["director"],"person":{"firstName":"A","lastName":"B"}},` +
		`{"types":["ubo"],"ownership":100,"person":{"firstName":"C","lastName":"D"}}]}`
)

func TestDecideUpdateUser(t *testing.T) {
	t.Parallel()
	filled := mustUpdate(t, newUser(), kycBody)
	tests := []struct {
		name     string
		state    User
		body     string
		byUser   bool // a user token instead of a tenant token
		want     []string
		wantKind Kind
		wantCode string
		wantFld  []string
		check    func(t *testing.T, u User)
	}{
		{name: "empty patch changes nothing", state: newUser(), body: `{}`},
		{name: "names", state: newUser(), body: `{"firstName":" Ann ","middleName":"W","lastName":"Otieno"}`,
			want: []string{"user.updated"}, check: func(t *testing.T, u User) {
				if u.FirstName != "Ann" || u.MiddleName != "W" || u.LastName != "Otieno" {
					t.Errorf("got %q %q %q, want trimmed names", u.FirstName, u.MiddleName, u.LastName)
				}
			}},
		{name: "same values change nothing", state: filled, body: kycBody},
		{name: "null clears a field", state: filled, body: `{"idDocumentNumber":null}`, want: []string{"user.updated"},
			check: func(t *testing.T, u User) {
				if u.IDDocumentNumber != "" {
					t.Errorf("got %q, want it cleared", u.IDDocumentNumber)
				}
			}},
		{name: "empty first name", state: newUser(), body: `{"firstName":"  "}`,
			wantKind: Invalid, wantCode: "validation_failed", wantFld: []string{"firstName"}},
		{name: "first name of 101 characters", state: newUser(), body: `{"firstName":"` + strings.Repeat("a", 101) + `"}`,
			wantKind: Invalid, wantCode: "validation_failed", wantFld: []string{"firstName"}},
		{name: "every bad field is named", state: newUser(), body: `{"lastName":"","dob":"1990-02-30","sector":"\u0007"}`,
			wantKind: Invalid, wantCode: "validation_failed", wantFld: []string{"lastName", "dob", "sector"}},
		{name: "dob on a leap day", state: newUser(), body: `{"dob":"2000-02-29"}`, want: []string{"user.updated"}},
		{name: "dob not a real date", state: newUser(), body: `{"dob":"2023-02-29"}`,
			wantKind: Invalid, wantCode: "validation_failed", wantFld: []string{"dob"}},
		{name: "dob unpadded", state: newUser(), body: `{"dob":"1990-1-05"}`,
			wantKind: Invalid, wantCode: "validation_failed", wantFld: []string{"dob"}},
		{name: "dob with a time", state: newUser(), body: `{"dob":"1990-01-05T00:00:00Z"}`,
			wantKind: Invalid, wantCode: "validation_failed", wantFld: []string{"dob"}},
		{name: "dob in the future", state: newUser(), body: `{"dob":"2026-11-23"}`,
			wantKind: Invalid, wantCode: "validation_failed", wantFld: []string{"dob"}},
		{name: "dob before 1900", state: newUser(), body: `{"dob":"1899-12-31"}`,
			wantKind: Invalid, wantCode: "validation_failed", wantFld: []string{"dob"}},
		{name: "nationality unknown code", state: newUser(), body: `{"nationality":["KEN","XKX"]}`,
			wantKind: Invalid, wantCode: "validation_failed", wantFld: []string{"nationality[1]"}},
		{name: "nationality lower case", state: newUser(), body: `{"nationality":["ken"]}`,
			wantKind: Invalid, wantCode: "validation_failed", wantFld: []string{"nationality[0]"}},
		{name: "nationality twice", state: newUser(), body: `{"nationality":["KEN","KEN"]}`,
			wantKind: Invalid, wantCode: "validation_failed", wantFld: []string{"nationality[1]"}},
		{name: "nationality empty array clears", state: filled, body: `{"nationality":[]}`, want: []string{"user.updated"},
			check: func(t *testing.T, u User) {
				if u.Nationality != nil {
					t.Errorf("got %v, want none", u.Nationality)
				}
			}},
		{name: "birth country alpha-2", state: newUser(), body: `{"birthCountry":"KE"}`,
			wantKind: Invalid, wantCode: "validation_failed", wantFld: []string{"birthCountry"}},
		{name: "full flat address", state: newUser(), body: `{` + fullAddress + `,"addressState":"Nairobi County"}`,
			want: []string{"user.updated"}, check: func(t *testing.T, u User) {
				want := Address{Line1: "1 Moi Avenue", City: "Nairobi", State: "Nairobi County", PostalCode: "00100", Country: "KEN"}
				if u.Address == nil || *u.Address != want {
					t.Errorf("got %+v, want %+v", u.Address, want)
				}
			}},
		{name: "partial address on an empty user", state: newUser(), body: `{"addressCity":"Nairobi"}`,
			wantKind: Invalid, wantCode: "validation_failed", wantFld: []string{"addressLine1", "addressPostalCode", "addressCountry"}},
		{name: "one address field of a full address", state: filled, body: `{"addressLine2":"Flat 4"}`, want: []string{"user.updated"}},
		{name: "clearing a required address field", state: filled, body: `{"addressCity":null}`,
			wantKind: Invalid, wantCode: "validation_failed", wantFld: []string{"addressCity"}},
		{name: "clearing every address field", state: filled, body: `{"addressLine1":null,"addressCity":null,` +
			`"addressPostalCode":null,"addressCountry":null}`, want: []string{"user.updated"}, check: func(t *testing.T, u User) {
			if u.Address != nil {
				t.Errorf("got %+v, want no address", u.Address)
			}
		}},
		{name: "address country unknown", state: filled, body: `{"addressCountry":"ZZZ"}`,
			wantKind: Invalid, wantCode: "validation_failed", wantFld: []string{"addressCountry"}},
		{name: "id document type stored lower case", state: newUser(), body: `{"idDocumentType":"Residence_Permit"}`,
			want: []string{"user.updated"}, check: func(t *testing.T, u User) {
				if u.IDDocumentType != "residence_permit" {
					t.Errorf("got %q, want residence_permit", u.IDDocumentType)
				}
			}},
		{name: "id document type not allowed", state: newUser(), body: `{"idDocumentType":"visa"}`,
			wantKind: Invalid, wantCode: "validation_failed", wantFld: []string{"idDocumentType"}},
		{name: "entity type individual", state: newUser(), body: `{"entityType":"individual"}`, want: []string{"user.updated"}},
		{name: "entity type unknown", state: newUser(), body: `{"entityType":"company"}`,
			wantKind: Invalid, wantCode: "validation_failed", wantFld: []string{"entityType"}},
		{name: "isVerified with a user token", state: newUser(), body: `{"isVerified":true}`, byUser: true,
			wantKind: Invalid, wantCode: "field_not_allowed", wantFld: []string{"isVerified"}},
		{name: "isVerified null", state: newUser(), body: `{"isVerified":null}`,
			wantKind: Invalid, wantCode: "validation_failed", wantFld: []string{"isVerified"}},
		{name: "verify", state: filled, body: `{"isVerified":true}`, want: []string{"user.verification_changed"},
			check: func(t *testing.T, u User) {
				if !u.IsVerified {
					t.Error("got unverified, want verified")
				}
			}},
		{name: "verify a verified user", state: verified(filled), body: `{"isVerified":true}`},
		{name: "unverify an unverified user", state: filled, body: `{"isVerified":false}`},
		{name: "disabled user", state: disabled(filled), body: `{"sector":"x"}`, wantKind: NotFound, wantCode: "not_found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			events, err := DecideUpdateUser(tt.state, UpdateUser{Patch: mustBody[UserPatch](t, tt.body), ByTenant: !tt.byUser}, testNow)
			if tt.wantCode != "" {
				wantError(t, err, tt.wantKind, tt.wantCode, tt.wantFld...)
				return
			}
			wantTypes(t, events, err, tt.want...)
			if tt.check != nil {
				tt.check(t, fold(tt.state, events...))
			}
		})
	}
}

func TestUserUpdatedNamesTheChangedFields(t *testing.T) {
	t.Parallel()
	u := mustUpdate(t, newUser(), kycBody)
	events, err := DecideUpdateUser(u, UpdateUser{Patch: mustBody[UserPatch](t,
		`{"firstName":"Ann","lastName":"Odhiambo","addressCity":"Mombasa","sector":"retail"}`)}, testNow)
	wantTypes(t, events, err, "user.updated")
	got := events[0].(UserUpdated)
	if want := []string{"lastName", "sector", "addressCity"}; !sameValue(got.Changed, want) {
		t.Errorf("got changed %v, want %v", got.Changed, want)
	}
	if got.FirstName != "Ann" || got.DOB != "1990-05-01" || got.Address.Line1 != "1 Moi Avenue" {
		t.Errorf("got %+v, want the unchanged fields kept in the snapshot", got.UserDetails)
	}
}

func TestKYCLock(t *testing.T) {
	t.Parallel()
	locked := verified(mustUpdate(t, newUser(), kycBody))
	tests := []struct {
		name     string
		body     string
		byUser   bool
		want     []string
		wantFld  []string
		verified bool // after the events
	}{
		{name: "first name, tenant token", body: `{"firstName":"Anne"}`, wantFld: []string{"firstName"}},
		{name: "first name, user token", body: `{"firstName":"Anne"}`, byUser: true, wantFld: []string{"firstName"}},
		{name: "middle name", body: `{"middleName":"W"}`, wantFld: []string{"middleName"}},
		{name: "dob and nationality", body: `{"dob":"1991-05-01","nationality":["UGA"]}`, wantFld: []string{"dob", "nationality"}},
		{name: "birth country", body: `{"birthCountry":"UGA"}`, wantFld: []string{"birthCountry"}},
		{name: "an address field", body: `{"addressCity":"Mombasa"}`, wantFld: []string{"addressCity"}},
		{name: "id document", body: `{"idDocumentType":"national_id","idDocumentNumber":"9"}`,
			wantFld: []string{"idDocumentType", "idDocumentNumber"}},
		{name: "verified again with a change", body: `{"isVerified":true,"lastName":"X"}`, wantFld: []string{"lastName"}},
		{name: "same values are not a change", body: `{"firstName":"Ann","idDocumentType":"PASSPORT"}`, verified: true},
		{name: "sector is not a KYC field", body: `{"sector":"farming"}`, want: []string{"user.updated"}, verified: true},
		{name: "business data is not locked", body: businessBody, want: []string{"user.updated"}, verified: true},
		{name: "unverify then correct in one patch", body: `{"isVerified":false,"firstName":"Anne"}`,
			want: []string{"user.verification_changed", "user.updated"}},
		{name: "unverify alone", body: `{"isVerified":false}`, want: []string{"user.verification_changed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			events, err := DecideUpdateUser(locked, UpdateUser{Patch: mustBody[UserPatch](t, tt.body), ByTenant: !tt.byUser}, testNow)
			if tt.wantFld != nil {
				wantError(t, err, Conflict, "kyc_locked", tt.wantFld...)
				return
			}
			wantTypes(t, events, err, tt.want...)
			if got := fold(locked, events...).IsVerified; got != tt.verified {
				t.Errorf("got verified %v, want %v", got, tt.verified)
			}
		})
	}
}

func TestVerifyingWithChangesAppliesTheChangesFirst(t *testing.T) {
	t.Parallel()
	events, err := DecideUpdateUser(newUser(), UpdateUser{Patch: mustBody[UserPatch](t, `{"isVerified":true,"firstName":"Ann"}`),
		ByTenant: true}, testNow)
	wantTypes(t, events, err, "user.updated", "user.verification_changed")
	if u := fold(newUser(), events...); !u.IsVerified || u.FirstName != "Ann" {
		t.Errorf("got %+v, want verified Ann", u)
	}
}
