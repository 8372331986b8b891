package domain

import (
	"strings"
	"testing"
)

const profileAddress = `{"line1":"1 Moi Avenue","line2":null,"city":"Nairobi","state":"Nairobi County","postalCode":"00100","country":"KEN"}`

func TestDecideUpdateProfile(t *testing.T) {
	t.Parallel()
	full := `{"name":"Ann O","companyName":"Acme","sector":"retail","firstName":"Ann","phoneNumber":"+447911123456",` +
		`"address":` + profileAddress + `}`
	filled := fold(newUser(), mustProfile(t, newUser(), full)...)
	tests := []struct {
		name        string
		state       User
		body        string
		wantChanged []string
		wantKind    Kind
		wantCode    string
		wantFld     []string
	}{
		{name: "every field", state: newUser(), body: full,
			wantChanged: []string{"name", "companyName", "sector", "firstName", "phoneNumber", "address"}},
		{name: "nothing changes", state: filled, body: full},
		{name: "empty patch", state: filled, body: `{}`},
		{name: "phone cleared", state: filled, body: `{"phoneNumber":null}`, wantChanged: []string{"phoneNumber"}},
		{name: "address cleared", state: filled, body: `{"address":null}`, wantChanged: []string{"address"}},
		{name: "company trimmed, same value", state: filled, body: `{"companyName":" Acme "}`},
		{name: "name cannot be cleared", state: filled, body: `{"name":null}`,
			wantKind: Invalid, wantCode: "validation_failed", wantFld: []string{"name"}},
		{name: "name empty", state: filled, body: `{"name":""}`,
			wantKind: Invalid, wantCode: "validation_failed", wantFld: []string{"name"}},
		{name: "name too long", state: filled, body: `{"name":"` + strings.Repeat("n", 201) + `"}`,
			wantKind: Invalid, wantCode: "validation_failed", wantFld: []string{"name"}},
		{name: "phone not E.164", state: filled, body: `{"phoneNumber":"0712345678"}`,
			wantKind: Invalid, wantCode: "validation_failed", wantFld: []string{"phoneNumber"}},
		{name: "phone with spaces", state: filled, body: `{"phoneNumber":"+254 712 345678"}`,
			wantKind: Invalid, wantCode: "validation_failed", wantFld: []string{"phoneNumber"}},
		{name: "address incomplete", state: filled, body: `{"address":{"line1":"1 Road","city":"Nairobi"}}`,
			wantKind: Invalid, wantCode: "validation_failed", wantFld: []string{"address.postalCode", "address.country"}},
		{name: "address country alpha-2", state: filled,
			body:     `{"address":{"line1":"1 Road","city":"Nairobi","postalCode":"1","country":"KE"}}`,
			wantKind: Invalid, wantCode: "validation_failed", wantFld: []string{"address.country"}},
		{name: "verified: first name locked", state: verified(filled), body: `{"firstName":"Anne"}`,
			wantKind: Conflict, wantCode: "kyc_locked", wantFld: []string{"firstName"}},
		{name: "verified: address locked", state: verified(filled),
			body:     `{"address":{"line1":"2 Road","city":"Nairobi","postalCode":"00100","country":"KEN"}}`,
			wantKind: Conflict, wantCode: "kyc_locked", wantFld: []string{"address"}},
		{name: "verified: the same address is no change", state: verified(filled), body: `{"address":` + profileAddress + `}`},
		{name: "verified: other fields stay editable", state: verified(filled),
			body:        `{"name":"Ann Otieno","companyName":null,"sector":"farming","phoneNumber":"+254712345678"}`,
			wantChanged: []string{"name", "companyName", "sector", "phoneNumber"}},
		{name: "disabled user", state: disabled(filled), body: `{"sector":"x"}`, wantKind: NotFound, wantCode: "not_found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			events, err := DecideUpdateProfile(tt.state, mustBody[ProfilePatch](t, tt.body))
			if tt.wantCode != "" {
				wantError(t, err, tt.wantKind, tt.wantCode, tt.wantFld...)
				return
			}
			if err != nil {
				t.Fatalf("got %v, want success", err)
			}
			if tt.wantChanged == nil {
				wantTypes(t, events, err)
				return
			}
			wantTypes(t, events, err, "user.profile_updated")
			if got := events[0].(ProfileUpdated).Changed; !sameValue(got, tt.wantChanged) {
				t.Errorf("got changed %v, want %v", got, tt.wantChanged)
			}
		})
	}
}

// TestProfileAndUserShareFields checks that the profile is the same user seen
// through spec §2.6: firstName, sector and address set one way read the other.
func TestProfileAndUserShareFields(t *testing.T) {
	t.Parallel()
	u := fold(newUser(), mustProfile(t, newUser(), `{"firstName":"Ann","sector":"retail","address":`+profileAddress+`}`)...)
	if u.FirstName != "Ann" || u.Sector != "retail" || u.Address == nil || u.Address.State != "Nairobi County" {
		t.Fatalf("got %+v, want the profile's fields on the user", u.UserDetails)
	}
	u = mustUpdate(t, u, `{"addressCity":"Mombasa","lastName":"Otieno"}`)
	if u.Address.City != "Mombasa" || u.Address.Line1 != "1 Moi Avenue" || u.FirstName != "Ann" || u.Sector != "retail" {
		t.Errorf("got %+v, want the user patch to keep the profile's fields", u.UserDetails)
	}
	events, err := DecideUpdateProfile(u, mustBody[ProfilePatch](t, `{"firstName":"Ann"}`))
	wantTypes(t, events, err)
}

func mustProfile(t testing.TB, u User, body string) []Event {
	t.Helper()
	events, err := DecideUpdateProfile(u, mustBody[ProfilePatch](t, body))
	if err != nil {
		t.Fatalf("profile %s: %v", body, err)
	}
	return events
}
