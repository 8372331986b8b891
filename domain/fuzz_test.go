package domain

import (
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

// checkCallerError fails unless err is an *Error a caller may see: not
// Internal, with a code and named fields.
func checkCallerError(t *testing.T, err error) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Kind == Internal || e.Code == "" || e.Message == "" {
		t.Fatalf("got %#v, want a caller error", err)
	}
	for _, f := range e.Fields {
		if f.Field == "" || f.Message == "" {
			t.Fatalf("got field error %+v, want a field and a message", f)
		}
	}
}

// checkStored fails unless every event stores and decodes to itself.
func checkStored(t *testing.T, events []Event) {
	t.Helper()
	for _, e := range events {
		if got := roundTrip(t, e); !sameValue(got, e) {
			t.Fatalf("got %+v after storing, want %+v", got, e)
		}
	}
}

// FuzzUserPatch decodes any body into a UserPatch and decides it on users in
// several states: no panic, no Internal error, the rules hold on the result,
// and the same patch decided again changes nothing.
func FuzzUserPatch(f *testing.F) {
	for _, seed := range []string{`{}`, kycBody, businessBody, `{"isVerified":false,"firstName":"Anne"}`,
		`{"isVerified":true,"dob":"2000-02-29","nationality":[]}`, `{"addressCity":"Mombasa","addressLine1":null}`,
		`{"entityType":"individual","business":null,"businessPersons":null}`, `{"businessPersons":[{"types":["ubo","ubo"],"ownership":1e308}]}`,
		`{"business":{"website":"https://a.example","phone":"+254712345678","registrationDate":"1700-01-01"}}`,
		`{"idDocumentType":"PASSPORT","birthCountry":"XKX","firstName":"\u0000"}`, `{"nationality":null,"dob":null}`} {
		f.Add([]byte(seed))
	}
	filled := mustUpdate(f, newUser(), kycBody)
	states := []User{newUser(), filled, verified(filled), mustUpdate(f, filled, businessBody),
		verified(mustUpdate(f, newUser(), businessBody)), disabled(filled)}
	f.Fuzz(func(t *testing.T, body []byte) {
		var p UserPatch
		if json.Unmarshal(body, &p) != nil {
			return
		}
		for _, state := range states {
			for _, byTenant := range []bool{true, false} {
				c := UpdateUser{Patch: p, ByTenant: byTenant}
				events, err := DecideUpdateUser(state, c, testNow)
				if err != nil {
					checkCallerError(t, err)
					continue
				}
				checkStored(t, events)
				after := fold(state, events...)
				if after.EntityType == EntityBusiness && (after.Business == nil || !hasDirectorAndUBO(after.BusinessPersons)) ||
					after.EntityType != EntityBusiness && (after.Business != nil || len(after.BusinessPersons) > 0) {
					t.Fatalf("got %+v, want the entity rules to hold", after.UserDetails)
				}
				if state.IsVerified && after.IsVerified {
					if changed := changedDetails(state.UserDetails, after.UserDetails); kycLocked(changed, kycFields) != nil {
						t.Fatalf("got %v changed on a verified user", changed)
					}
				}
				if again, err := DecideUpdateUser(after, c, testNow); err != nil || len(again) > 0 {
					t.Fatalf("got %v, %v deciding %s again, want no change", typesOf(again), err, body)
				}
			}
		}
	})
}

// FuzzProfilePatch is FuzzUserPatch for PATCH /profile.
func FuzzProfilePatch(f *testing.F) {
	for _, seed := range []string{`{}`, `{"name":"Ann","companyName":null,"phoneNumber":"+254712345678"}`,
		`{"address":` + profileAddress + `}`, `{"address":{"line1":" ","country":"KEN"}}`, `{"firstName":"A","name":null}`} {
		f.Add([]byte(seed))
	}
	filled := fold(newUser(), mustProfile(f, newUser(), `{"name":"Ann","firstName":"Ann","address":`+profileAddress+`}`)...)
	states := []User{newUser(), filled, verified(filled), disabled(filled)}
	f.Fuzz(func(t *testing.T, body []byte) {
		var p ProfilePatch
		if json.Unmarshal(body, &p) != nil {
			return
		}
		for _, state := range states {
			events, err := DecideUpdateProfile(state, p)
			if err != nil {
				checkCallerError(t, err)
				continue
			}
			checkStored(t, events)
			after := fold(state, events...)
			if state.IsVerified && (after.FirstName != state.FirstName || !sameValue(after.Address, state.Address)) {
				t.Fatalf("got %+v, want firstName and address locked", after)
			}
			if again, err := DecideUpdateProfile(after, p); err != nil || len(again) > 0 {
				t.Fatalf("got %v, %v deciding %s again, want no change", typesOf(again), err, body)
			}
		}
	})
}

// FuzzMomoPatch decodes any body into a MomoPatch and decides it on each
// account of a profile: no panic, no Internal error, the default invariant holds.
func FuzzMomoPatch(f *testing.F) {
	for _, seed := range []string{`{}`, `{"isDefault":false}`, `{"isDefault":true,"label":null}`,
		`{"phoneNumber":"+254700000002","label":"x"}`, `{"phoneNumber":null}`} {
		f.Add([]byte(seed))
	}
	u, ids := withMomo(f, newUser(), kenyan(1), kenyan(2), kenyan(3))
	f.Fuzz(func(t *testing.T, body []byte) {
		var p MomoPatch
		if json.Unmarshal(body, &p) != nil {
			return
		}
		for _, id := range slices.Concat(ids, []uuid.UUID{uuid.Nil}) {
			events, err := DecideUpdateMomoAccount(u, UpdateMomoAccount{AccountID: id, Patch: p})
			if err != nil {
				checkCallerError(t, err)
				continue
			}
			after := u
			for _, e := range events {
				after = ApplyUser(after, e)
				checkMomoInvariants(t, after, string(body))
			}
		}
	})
}

// FuzzPhone checks the phone validators against what they promise.
func FuzzPhone(f *testing.F) {
	for _, s := range []string{"+254712345678", "+254112345678", "+447911123456", "0712345678", "+", "", "+2547١٢٣٤٥٦٧٨"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e164, kenyan := IsE164(s), IsKenyanMobile(s)
		if kenyan && (!e164 || len(s) != 13 || !(strings.HasPrefix(s, "+2547") || strings.HasPrefix(s, "+2541"))) {
			t.Fatalf("IsKenyanMobile(%q): got true, want a 13-character +2547/+2541 E.164 number", s)
		}
		if e164 && (len(s) < 8 || len(s) > 16 || s[0] != '+' || s[1] == '0' || strings.Trim(s[1:], "0123456789") != "") {
			t.Fatalf("IsE164(%q): got true, want + and 7-15 digits not starting with 0", s)
		}
		var fe fieldErrors
		fe.phone("phoneNumber", s)
		if (len(fe) == 0) != IsE164(strings.TrimSpace(s)) {
			t.Fatalf("phone(%q): got %v, want it to agree with IsE164", s, fe)
		}
	})
}

// FuzzCountry checks that only three capital letters can be a country code.
func FuzzCountry(f *testing.F) {
	for _, s := range []string{"KEN", "ken", "XKX", "KE", "", "ÅLA"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if IsCountry(s) && (len(s) != 3 || strings.Trim(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != "") {
			t.Fatalf("IsCountry(%q): got true, want three capitals only", s)
		}
		var fe fieldErrors
		fe.countryCodes("nationality", []string{s, s})
		if len(fe) == 0 {
			t.Fatalf("countryCodes(%q twice): got no error, want a duplicate", s)
		}
	})
}

// FuzzDate checks checkPastDate against an independent reading of YYYY-MM-DD.
func FuzzDate(f *testing.F) {
	for _, s := range []string{"1990-05-01", "2000-02-29", "2023-02-29", "2026-11-23", "1899-12-31", "1990-1-05", "0000-00-00", "+990-01-01"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := checkPastDate(s, testNow, earliestBirthYear) == ""
		want := false
		if len(s) == 10 && s[4] == '-' && s[7] == '-' && strings.Trim(s[:4]+s[5:7]+s[8:], "0123456789") == "" {
			y, _ := strconv.Atoi(s[:4])
			m, _ := strconv.Atoi(s[5:7])
			d, _ := strconv.Atoi(s[8:])
			day := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
			want = day.Year() == y && int(day.Month()) == m && day.Day() == d && y >= earliestBirthYear && day.Before(testNow)
		}
		if got != want {
			t.Fatalf("checkPastDate(%q): got valid %v, want %v", s, got, want)
		}
	})
}
