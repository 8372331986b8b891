package main

import (
	"net/http"
	"slices"
	"testing"
)

// newProfileJSON is the Profile (spec §2.6) of a user just created.
func newProfileJSON(userID, email, name string) map[string]any {
	return map[string]any{
		"id": userID, "email": email, "name": name, "companyName": nil, "sector": nil, "firstName": nil,
		"phoneNumber": nil, "address": nil, "isVerified": false, "defaultMomoAccountId": nil,
		"momoAccounts": []any{}, "createdAt": isTimestamp, "updatedAt": isTimestamp,
	}
}

// TestProfile covers GET and PATCH /profile (spec §2.6, §4.3-4.4, contract
// §2, §4): whose profile each token reaches, the editable and read-only
// fields, validation, and the KYC lock.
func TestProfile(t *testing.T) {
	t.Parallel()
	s := startServer(t, nil)
	tn := s.createTenant(t, "Profileco")
	tok := s.tenantToken(t, tn.APIKey, tn.APISecret)

	t.Run("user token", func(t *testing.T) {
		u := s.createUser(t, tok, "pat@example.com", "Pat")
		id := u["userId"].(string)
		ut := s.userToken(t, tok, id)
		want := newProfileJSON(id, "pat@example.com", "Pat")
		want["createdAt"] = u["createdAt"]
		checkJSON(t, "GET /profile", mustStatus(t, s.call(t, http.MethodGet, "/profile", ut, ""), http.StatusOK), want)

		got := mustStatus(t, s.call(t, http.MethodPatch, "/profile", ut, `{"name":"Pat Kimani","companyName":"Kimani Traders",
			"sector":"Retail","firstName":"Pat","phoneNumber":"+447911123456",
			"address":{"line1":"1 Moi Ave","city":"Nairobi","postalCode":"00100","country":"KEN"}}`), http.StatusOK)
		for k, v := range map[string]any{"name": "Pat Kimani", "companyName": "Kimani Traders", "sector": "Retail",
			"firstName": "Pat", "phoneNumber": "+447911123456", "address": map[string]any{"line1": "1 Moi Ave",
				"line2": nil, "city": "Nairobi", "state": nil, "postalCode": "00100", "country": "KEN"}} {
			want[k] = v
		}
		checkJSON(t, "PATCH /profile", got, want)
		checkJSON(t, "GET /profile after", mustStatus(t, s.call(t, http.MethodGet, "/profile", ut, ""), http.StatusOK), got)

		// The profile is the user: the shared fields show in GET /users/{id}.
		user := mustStatus(t, s.call(t, http.MethodGet, "/users/"+id, tok, ""), http.StatusOK)
		for _, k := range []string{"name", "sector", "firstName", "address"} {
			if jsonString(user[k]) != jsonString(got[k]) {
				t.Errorf("GET /users/{id} %s: got %s, want the profile's %s", k, jsonString(user[k]), jsonString(got[k]))
			}
		}

		// One field at a time; null clears; a no-op appends nothing.
		got = mustStatus(t, s.call(t, http.MethodPatch, "/profile", ut, `{"address":{"line1":"9 Ngong Rd","line2":"Block B",
			"city":"Nairobi","state":"Nairobi County","postalCode":"00200","country":"KEN"},"companyName":null}`), http.StatusOK)
		checkJSON(t, "address", got["address"].(map[string]any), map[string]any{"line1": "9 Ngong Rd", "line2": "Block B",
			"city": "Nairobi", "state": "Nairobi County", "postalCode": "00200", "country": "KEN"})
		if got["companyName"] != nil || got["name"] != "Pat Kimani" {
			t.Errorf("after clearing companyName: got companyName %v name %v, want null and Pat Kimani", got["companyName"], got["name"])
		}
		n := len(s.streamEvents(t, id))
		checkJSON(t, "no-op", mustStatus(t, s.call(t, http.MethodPatch, "/profile", ut, `{"sector":"Retail"}`), http.StatusOK), got)
		checkJSON(t, "empty patch", mustStatus(t, s.call(t, http.MethodPatch, "/profile", ut, `{}`), http.StatusOK), got)
		want2 := []string{"user.created", "user.profile_updated", "user.profile_updated"}
		if types := s.eventTypes(t, id); len(types) != n || !slices.Equal(types, want2) {
			t.Errorf("events: got %v, want %v", types, want2)
		}
	})

	t.Run("tenant token acts on the owner", func(t *testing.T) {
		got := mustStatus(t, s.call(t, http.MethodGet, "/profile", tok, ""), http.StatusOK)
		if got["id"] != tn.OwnerUserID || got["email"] != "profileco@example.com" {
			t.Fatalf("GET /profile with a tenant token: got id %v email %v, want the owner %s", got["id"], got["email"], tn.OwnerUserID)
		}
		got = mustStatus(t, s.call(t, http.MethodPatch, "/profile", tok, `{"companyName":"Profileco Holdings","phoneNumber":"+254712000111"}`),
			http.StatusOK)
		if got["id"] != tn.OwnerUserID || got["companyName"] != "Profileco Holdings" || got["phoneNumber"] != "+254712000111" {
			t.Errorf("PATCH /profile with a tenant token: got %v, want the owner's profile changed", got)
		}
		if types := s.eventTypes(t, tn.OwnerUserID); !slices.Equal(types, []string{"user.created", "user.profile_updated"}) {
			t.Errorf("owner's events: got %v, want [user.created user.profile_updated]", types)
		}
		// The owner, verified by its tenant, is locked like any user.
		mustStatus(t, s.call(t, http.MethodPatch, "/users/"+tn.OwnerUserID, tok, `{"firstName":"Owner","isVerified":true}`), http.StatusOK)
		mustFieldError(t, mustProblem(t, s.call(t, http.MethodPatch, "/profile", tok, `{"firstName":"Someone"}`),
			http.StatusConflict, "kyc_locked"), "firstName")
	})

	t.Run("rejected patches", func(t *testing.T) {
		id := s.createUser(t, tok, "strict@example.com", "Strict")["userId"].(string)
		ut := s.userToken(t, tok, id)
		for _, tt := range []struct {
			body, code string
			fields     []string
		}{
			{`{"id":"` + id + `"}`, "unknown_field", []string{"id"}},
			{`{"email":"new@example.com"}`, "unknown_field", []string{"email"}},
			{`{"isVerified":true}`, "unknown_field", []string{"isVerified"}},
			{`{"momoAccounts":[]}`, "unknown_field", []string{"momoAccounts"}},
			{`{"defaultMomoAccountId":null}`, "unknown_field", []string{"defaultMomoAccountId"}},
			{`{"createdAt":"2026-01-01T00:00:00.000Z"}`, "unknown_field", []string{"createdAt"}},
			{`{"updatedAt":"2026-01-01T00:00:00.000Z"}`, "unknown_field", []string{"updatedAt"}},
			{`{"lastName":"Other"}`, "unknown_field", []string{"lastName"}},
			{`{"Name":"Other"}`, "unknown_field", []string{"Name"}},
			{`{"address":{"line1":"1 A St","city":"Nairobi","postalCode":"00100","country":"KEN","zip":"1"}}`, "unknown_field", []string{"address.zip"}},
			{`{"address":{"Line1":"1 A St","city":"Nairobi","postalCode":"00100","country":"KEN"}}`, "unknown_field", []string{"address.Line1"}},
			{`{"phoneNumber":"0712345678"}`, "validation_failed", []string{"phoneNumber"}},
			{`{"phoneNumber":"+0712345678"}`, "validation_failed", []string{"phoneNumber"}},
			{`{"phoneNumber":"+2547123456789012"}`, "validation_failed", []string{"phoneNumber"}},
			{`{"phoneNumber":"+254 712 345678"}`, "validation_failed", []string{"phoneNumber"}},
			{`{"name":null}`, "validation_failed", []string{"name"}},
			{`{"name":""}`, "validation_failed", []string{"name"}},
			{`{"firstName":""}`, "validation_failed", []string{"firstName"}},
			{`{"address":{"line1":"1 A St"}}`, "validation_failed", []string{"address.city", "address.postalCode", "address.country"}},
			{`{"address":{"line1":"1 A St","city":"Nairobi","postalCode":"00100","country":"KE"}}`, "validation_failed", []string{"address.country"}},
			{`{"address":"1 A St"}`, "validation_failed", []string{"address"}},
		} {
			p := mustProblem(t, s.call(t, http.MethodPatch, "/profile", ut, tt.body), http.StatusBadRequest, tt.code)
			for _, f := range tt.fields {
				mustFieldError(t, p, f)
			}
			if t.Failed() {
				t.Fatalf("body %s", tt.body)
			}
		}
		if types := s.eventTypes(t, id); !slices.Equal(types, []string{"user.created"}) {
			t.Errorf("events: got %v, want [user.created] (rejected patches appended events)", types)
		}
	})

	t.Run("KYC lock", func(t *testing.T) {
		id := s.createUser(t, tok, "locked@example.com", "Locked")["userId"].(string)
		ut := s.userToken(t, tok, id)
		mustStatus(t, s.call(t, http.MethodPatch, "/profile", ut, `{"firstName":"Lee",
			"address":{"line1":"1 A St","city":"Nairobi","postalCode":"00100","country":"KEN"}}`), http.StatusOK)
		mustStatus(t, s.call(t, http.MethodPatch, "/users/"+id, tok, `{"isVerified":true}`), http.StatusOK)
		if got := mustStatus(t, s.call(t, http.MethodGet, "/profile", ut, ""), http.StatusOK); got["isVerified"] != true {
			t.Fatalf("isVerified: got %v, want true", got["isVerified"])
		}
		for body, field := range map[string]string{
			`{"firstName":"Leigh"}`: "firstName",
			`{"firstName":null}`:    "firstName",
			`{"address":{"line1":"2 B St","city":"Nairobi","postalCode":"00100","country":"KEN"}}`: "address",
			`{"address":null}`: "address",
			`{"name":"Still Locked","firstName":"Leigh"}`: "firstName",
		} {
			mustFieldError(t, mustProblem(t, s.call(t, http.MethodPatch, "/profile", ut, body), http.StatusConflict, "kyc_locked"), field)
		}
		got := mustStatus(t, s.call(t, http.MethodPatch, "/profile", ut, `{"name":"Unlocked Fields","companyName":"Co",
			"sector":"Tech","phoneNumber":"+254700000001","firstName":"Lee"}`), http.StatusOK)
		if got["name"] != "Unlocked Fields" || got["firstName"] != "Lee" {
			t.Errorf("non-KYC fields while verified: got name %v firstName %v, want Unlocked Fields and Lee", got["name"], got["firstName"])
		}
	})
}
