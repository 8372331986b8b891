package main

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ledger/ledger/domain"
)

// TestUpdateUser covers PATCH /users/{userId} (spec §4.2, contract §3): the
// full User it answers with, strict fields, validation, the business rules
// on the state after the patch, isVerified and the KYC lock, and the events
// each change appends.
func TestUpdateUser(t *testing.T) {
	t.Parallel()
	s := startServer(t, nil)
	tn := s.createTenant(t, "Patchco")
	tok := s.tenantToken(t, tn.APIKey, tn.APISecret)
	patch := func(t *testing.T, token, id, body string) response {
		t.Helper()
		return s.call(t, http.MethodPatch, "/users/"+id, token, body)
	}

	t.Run("individual", func(t *testing.T) {
		u := s.createUser(t, tok, "grace@example.com", "Grace Hopper")
		id := u["userId"].(string)
		got := mustStatus(t, patch(t, tok, id, `{"entityType":"individual","firstName":" Grace ","middleName":"Brewster",
			"lastName":"Hopper","dob":"1906-12-09","nationality":["USA","GBR"],"birthCountry":"USA","sector":"Software",
			"addressLine1":"1 Navy Way","addressCity":"Arlington","addressPostalCode":"22201","addressCountry":"USA",
			"idDocumentType":"PASSPORT","idDocumentNumber":"X1234567"}`), http.StatusOK)
		want := newUserJSON(id, "grace@example.com", "Grace Hopper")
		for k, v := range map[string]any{"entityType": "individual", "firstName": "Grace", "middleName": "Brewster",
			"lastName": "Hopper", "dob": "1906-12-09", "nationality": []any{"USA", "GBR"}, "birthCountry": "USA",
			"sector": "Software", "idDocumentType": "passport", "idDocumentNumber": "X1234567", "createdAt": u["createdAt"],
			"address": map[string]any{"line1": "1 Navy Way", "line2": nil, "city": "Arlington", "state": nil,
				"postalCode": "22201", "country": "USA"}} {
			want[k] = v
		}
		checkJSON(t, "PATCH body", got, want)
		if got["updatedAt"].(string) < got["createdAt"].(string) {
			t.Errorf("updatedAt: got %v, want not before createdAt %v", got["updatedAt"], got["createdAt"])
		}
		checkJSON(t, "GET body", mustStatus(t, s.call(t, http.MethodGet, "/users/"+id, tok, ""), http.StatusOK), got)
		evs := s.streamEvents(t, id)
		if types := s.eventTypes(t, id); !slices.Equal(types, []string{"user.created", "user.updated"}) {
			t.Fatalf("events: got %v, want [user.created user.updated]", types)
		}
		e, err := domain.DecodeEvent(evs[1].Type, evs[1].SchemaVersion, evs[1].Data)
		if err != nil {
			t.Fatal(err)
		}
		wantChanged := []string{"firstName", "middleName", "lastName", "dob", "nationality", "birthCountry", "sector",
			"addressLine1", "addressCity", "addressPostalCode", "addressCountry", "idDocumentType", "idDocumentNumber", "entityType"}
		if got := e.(domain.UserUpdated).Changed; !slices.Equal(got, wantChanged) {
			t.Errorf("user.updated changed: got %v, want %v", got, wantChanged)
		}

		// The rest of the address, then clearing a field, then all of it.
		got = mustStatus(t, patch(t, tok, id, `{"addressLine2":"Suite 9","addressState":"VA"}`), http.StatusOK)
		wantAddr := map[string]any{"line1": "1 Navy Way", "line2": "Suite 9", "city": "Arlington", "state": "VA",
			"postalCode": "22201", "country": "USA"}
		checkJSON(t, "address", got["address"].(map[string]any), wantAddr)
		got = mustStatus(t, patch(t, tok, id, `{"middleName":null,"addressState":null}`), http.StatusOK)
		wantAddr["state"] = nil
		checkJSON(t, "address after clearing state", got["address"].(map[string]any), wantAddr)
		if got["middleName"] != nil {
			t.Errorf("middleName after null: got %v, want null", got["middleName"])
		}
		got = mustStatus(t, patch(t, tok, id, `{"addressLine1":null,"addressLine2":null,"addressCity":null,
			"addressState":null,"addressPostalCode":null,"addressCountry":null}`), http.StatusOK)
		if got["address"] != nil {
			t.Errorf("address with every field null: got %v, want null", got["address"])
		}

		// No-op patches answer with the user and append nothing.
		n := len(s.streamEvents(t, id))
		for _, body := range []string{`{}`, `{"firstName":"Grace","nationality":["USA","GBR"]}`, `{"idDocumentType":"passport"}`} {
			checkJSON(t, "no-op "+body, mustStatus(t, patch(t, tok, id, body), http.StatusOK), got)
		}
		if after := len(s.streamEvents(t, id)); after != n {
			t.Errorf("events after no-op patches: got %d, want %d", after, n)
		}
		// The user's own token may patch it.
		ut := s.userToken(t, tok, id)
		if got := mustStatus(t, patch(t, ut, id, `{"lastName":"Murray Hopper"}`), http.StatusOK); got["lastName"] != "Murray Hopper" {
			t.Errorf("lastName patched with the user's token: got %v, want Murray Hopper", got["lastName"])
		}
	})

	t.Run("rejected patches", func(t *testing.T) {
		id := s.createUser(t, tok, "rejected@example.com", "Rejected")["userId"].(string)
		tomorrow := time.Now().UTC().AddDate(0, 0, 2).Format(time.DateOnly)
		for _, tt := range []struct {
			body, code string
			fields     []string
		}{
			{`{"email":"x@example.com"}`, "unknown_field", []string{"email"}},
			{`{"name":"X"}`, "unknown_field", []string{"name"}},
			{`{"status":"Inactive"}`, "unknown_field", []string{"status"}},
			{`{"userRole":"Admin"}`, "unknown_field", []string{"userRole"}},
			{`{"userId":"` + id + `"}`, "unknown_field", []string{"userId"}},
			{`{"address":{"line1":"1 Main","city":"Nairobi","postalCode":"00100","country":"KEN"}}`, "unknown_field", []string{"address"}},
			{`{"FirstName":"X"}`, "unknown_field", []string{"FirstName"}},
			{`{"entityType":"business","business":{"companyName":"X","type":"LIMITED","ceo":"Y"}}`, "unknown_field", []string{"business.ceo"}},
			{`{"business":{"companyname":"X","type":"LIMITED"}}`, "unknown_field", []string{"business.companyname"}},
			{`{"businessPersons":[{"types":["ubo"],"person":{"firstName":"A","lastName":"B","Dob":"1990-01-01"}}]}`,
				"unknown_field", []string{"businessPersons[0].person.Dob"}},
			{`{"birthCountry":"XXX"}`, "validation_failed", []string{"birthCountry"}},
			{`{"birthCountry":"ken"}`, "validation_failed", []string{"birthCountry"}},
			{`{"nationality":["KEN","XXX"]}`, "validation_failed", []string{"nationality[1]"}},
			{`{"nationality":"KEN"}`, "validation_failed", []string{"nationality"}},
			{`{"addressLine1":"1 Main","addressCity":"Nairobi","addressPostalCode":"00100","addressCountry":"XXX"}`,
				"validation_failed", []string{"addressCountry"}},
			{`{"addressLine1":"1 Main"}`, "validation_failed", []string{"addressCity", "addressPostalCode", "addressCountry"}},
			{`{"dob":"` + tomorrow + `"}`, "validation_failed", []string{"dob"}},
			{`{"dob":"2023-02-30"}`, "validation_failed", []string{"dob"}},
			{`{"dob":"1990-1-5"}`, "validation_failed", []string{"dob"}},
			{`{"dob":"1899-12-31"}`, "validation_failed", []string{"dob"}},
			{`{"entityType":"company"}`, "validation_failed", []string{"entityType"}},
			{`{"idDocumentType":"library_card"}`, "validation_failed", []string{"idDocumentType"}},
			{`{"firstName":""}`, "validation_failed", []string{"firstName"}},
			{`{"firstName":42}`, "validation_failed", []string{"firstName"}},
			{`{"isVerified":null}`, "validation_failed", []string{"isVerified"}},
			{`{"isVerified":"yes"}`, "validation_failed", []string{"isVerified"}},
			{`{"entityType":"business"}`, "validation_failed", []string{"business", "businessPersons"}},
			{`{"entityType":"business","business":{"companyName":"Acme","type":"LIMITED"},
				"businessPersons":[{"types":["director"],"person":{"firstName":"A","lastName":"B"}}]}`,
				"validation_failed", []string{"businessPersons"}},
			{`{"entityType":"business","business":{"companyName":"Acme","type":"LLC"},
				"businessPersons":[{"types":["director","ubo"],"ownership":101,"person":{"firstName":"A","lastName":"B"}}]}`,
				"validation_failed", []string{"business.type", "businessPersons[0].ownership"}},
			{`{"business":{"companyName":"Acme","type":"LIMITED"}}`, "validation_failed", []string{"business"}},
		} {
			p := mustProblem(t, patch(t, tok, id, tt.body), http.StatusBadRequest, tt.code)
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

	t.Run("business", func(t *testing.T) {
		id := s.createUser(t, tok, "acme@example.com", "Acme")["userId"].(string)
		got := mustStatus(t, patch(t, tok, id, `{"entityType":"business",
			"business":{"companyName":"Acme Ltd","tradingName":"Acme","type":"LIMITED","registrationNumber":"C-123",
				"registrationDate":"2001-04-01","phone":"+254712345678","website":"https://acme.example",
				"registeredAddress":{"line1":"1 Moi Ave","city":"Nairobi","postalCode":"00100","country":"KEN"}},
			"businessPersons":[
				{"types":["director"],"person":{"firstName":"Wanjiru","lastName":"Kamau"}},
				{"types":["ubo","shareholder"],"ownership":100,"person":{"firstName":"Otieno","lastName":"Odhiambo",
					"dob":"1970-01-01","nationality":["KEN"],"birthCountry":"KEN","idDocumentType":"National_ID",
					"idDocumentNumber":"12345678","address":{"line1":"2 Kenyatta Ave","line2":"Flat 3","city":"Nairobi",
					"postalCode":"00100","country":"KEN"}}}]}`), http.StatusOK)
		if got["entityType"] != "business" {
			t.Errorf("entityType: got %v, want business", got["entityType"])
		}
		nairobi := func(line1 string, line2 any) map[string]any {
			return map[string]any{"line1": line1, "line2": line2, "city": "Nairobi", "state": nil, "postalCode": "00100", "country": "KEN"}
		}
		checkJSON(t, "business", got["business"].(map[string]any), map[string]any{"companyName": "Acme Ltd",
			"tradingName": "Acme", "type": "LIMITED", "registrationNumber": "C-123", "registrationDate": "2001-04-01",
			"phone": "+254712345678", "website": "https://acme.example", "registeredAddress": nairobi("1 Moi Ave", nil),
			"tradingAddress": nil})
		persons, _ := got["businessPersons"].([]any)
		if len(persons) != 2 {
			t.Fatalf("businessPersons: got %v, want 2", got["businessPersons"])
		}
		// Members not given are null, as everywhere in the User (contract §3).
		checkJSON(t, "businessPersons[0]", persons[0].(map[string]any), map[string]any{"types": []any{"director"},
			"ownership": nil, "person": map[string]any{"firstName": "Wanjiru", "lastName": "Kamau", "dob": nil,
				"nationality": []any{}, "birthCountry": nil, "idDocumentType": nil, "idDocumentNumber": nil, "address": nil}})
		checkJSON(t, "businessPersons[1]", persons[1].(map[string]any), map[string]any{"types": []any{"ubo", "shareholder"},
			"ownership": 100.0, "person": map[string]any{"firstName": "Otieno", "lastName": "Odhiambo", "dob": "1970-01-01",
				"nationality": []any{"KEN"}, "birthCountry": "KEN", "idDocumentType": "national_id",
				"idDocumentNumber": "12345678", "address": nairobi("2 Kenyatta Ave", "Flat 3")}})
		checkJSON(t, "GET body", mustStatus(t, s.call(t, http.MethodGet, "/users/"+id, tok, ""), http.StatusOK), got)

		// The director-and-ubo rule holds on the state after each patch.
		p := mustProblem(t, patch(t, tok, id, `{"businessPersons":[{"types":["director"],"person":{"firstName":"A","lastName":"B"}}]}`),
			http.StatusBadRequest, "validation_failed")
		mustFieldError(t, p, "businessPersons")
		mustFieldError(t, mustProblem(t, patch(t, tok, id, `{"business":null}`), http.StatusBadRequest, "validation_failed"), "business")
		mustFieldError(t, mustProblem(t, patch(t, tok, id, `{"entityType":"individual"}`), http.StatusBadRequest, "validation_failed"), "business")
		got = mustStatus(t, patch(t, tok, id, `{"entityType":"individual","business":null,"businessPersons":null}`), http.StatusOK)
		if got["business"] != nil || fmt.Sprint(got["businessPersons"]) != "[]" {
			t.Errorf("back to individual: got business %v businessPersons %v, want null and []", got["business"], got["businessPersons"])
		}
		if types := s.eventTypes(t, id); !slices.Equal(types, []string{"user.created", "user.updated", "user.updated"}) {
			t.Errorf("events: got %v, want [user.created user.updated user.updated]", types)
		}
	})

	t.Run("verification and the KYC lock", func(t *testing.T) {
		id := s.createUser(t, tok, "alan@example.com", "Alan Turing")["userId"].(string)
		ut := s.userToken(t, tok, id)
		mustStatus(t, patch(t, ut, id, `{"firstName":"Alan","lastName":"Turing","dob":"1912-06-23"}`), http.StatusOK)

		p := mustProblem(t, patch(t, ut, id, `{"isVerified":true}`), http.StatusBadRequest, "field_not_allowed")
		mustFieldError(t, p, "isVerified")
		got := mustStatus(t, patch(t, tok, id, `{"isVerified":true}`), http.StatusOK)
		if got["isVerified"] != true {
			t.Fatalf("isVerified: got %v, want true", got["isVerified"])
		}
		mustStatus(t, patch(t, tok, id, `{"isVerified":true}`), http.StatusOK) // no change, no event

		for _, body := range []string{`{"firstName":"Alan M."}`, `{"lastName":"T"}`, `{"dob":"1912-06-24"}`,
			`{"nationality":["GBR"]}`, `{"middleName":"Mathison"}`, `{"idDocumentNumber":"P1"}`,
			`{"addressLine1":"1 Bletchley Park","addressCity":"Milton Keynes","addressPostalCode":"MK3 6EB","addressCountry":"GBR"}`} {
			for name, token := range map[string]string{"tenant token": tok, "user token": ut} {
				p := mustProblem(t, patch(t, token, id, body), http.StatusConflict, "kyc_locked")
				if len(p.Errors) == 0 {
					t.Errorf("%s %s: got no errors, want the locked fields named", name, body)
				}
			}
		}
		// Fields outside KYC, and KYC fields set to what they are, still go.
		mustStatus(t, patch(t, ut, id, `{"sector":"Cryptography","firstName":"Alan"}`), http.StatusOK)

		// A tenant unverifies, the user corrects, the tenant verifies again;
		// or both in one patch by the tenant.
		if got := mustStatus(t, patch(t, tok, id, `{"isVerified":false}`), http.StatusOK); got["isVerified"] != false {
			t.Fatalf("isVerified: got %v, want false", got["isVerified"])
		}
		if got := mustStatus(t, patch(t, ut, id, `{"firstName":"Alan M."}`), http.StatusOK); got["firstName"] != "Alan M." {
			t.Errorf("firstName after unverifying: got %v, want Alan M.", got["firstName"])
		}
		mustStatus(t, patch(t, tok, id, `{"isVerified":true}`), http.StatusOK)
		got = mustStatus(t, patch(t, tok, id, `{"isVerified":false,"lastName":"Turing OBE"}`), http.StatusOK)
		if got["isVerified"] != false || got["lastName"] != "Turing OBE" {
			t.Errorf("unverify and correct at once: got isVerified %v lastName %v, want false and Turing OBE", got["isVerified"], got["lastName"])
		}
		want := []string{"user.created", "user.updated", "user.verification_changed", "user.updated",
			"user.verification_changed", "user.updated", "user.verification_changed", "user.verification_changed", "user.updated"}
		if types := s.eventTypes(t, id); !slices.Equal(types, want) {
			t.Errorf("events: got %v, want %v", types, want)
		}
		checkJSON(t, "GET body", mustStatus(t, s.call(t, http.MethodGet, "/users/"+id, tok, ""), http.StatusOK), got)
	})

	t.Run("who may patch", func(t *testing.T) {
		id := s.createUser(t, tok, "self@example.com", "Self")["userId"].(string)
		other := s.createUser(t, tok, "notself@example.com", "Not Self")["userId"].(string)
		ut := s.userToken(t, tok, id)
		for _, path := range []string{other, tn.OwnerUserID, uuid.Must(uuid.NewV7()).String(), "not-a-uuid"} {
			mustProblem(t, patch(t, ut, path, `{"firstName":"Mallory"}`), http.StatusNotFound, "not_found")
		}
		mustProblem(t, patch(t, tok, "not-a-uuid", `{"firstName":"Mallory"}`), http.StatusNotFound, "not_found")
		mustProblem(t, patch(t, "", id, `{"firstName":"Mallory"}`), http.StatusUnauthorized, "invalid_token")
		mustProblem(t, send(t, s.newRequest(t, http.MethodPatch, "/users/"+id, nil, "Authorization", "Bearer "+tok,
			"Content-Type", "text/plain")), http.StatusUnsupportedMediaType, "unsupported_media_type")
		if types := s.eventTypes(t, other); !slices.Equal(types, []string{"user.created"}) {
			t.Errorf("events of the other user: got %v, want [user.created]", types)
		}
	})
}

// TestDisableUser covers DELETE /users/{userId} (spec §3.2, §4.2, contract
// §2-3): its body, the 404s that follow, the owner, the token kind, and
// the disabled user's tokens.
func TestDisableUser(t *testing.T) {
	t.Parallel()
	s := startServer(t, nil)
	a := s.createTenant(t, "Disableco")
	b := s.createTenant(t, "Bystander")
	tok := s.tenantToken(t, a.APIKey, a.APISecret)
	tokB := s.tenantToken(t, b.APIKey, b.APISecret)
	u := s.createUser(t, tok, "leaver@example.com", "Leaver")
	id := u["userId"].(string)
	other := s.createUser(t, tok, "stayer@example.com", "Stayer")["userId"].(string)
	ut := s.userToken(t, tok, id)
	otherTok := s.userToken(t, tok, other)
	mustStatus(t, s.call(t, http.MethodGet, "/profile", ut, ""), http.StatusOK) // control: the token works

	for name, token := range map[string]string{"another user's token": otherTok, "the user's own token": ut} {
		mustProblem(t, s.call(t, http.MethodDelete, "/users/"+id, token, ""), http.StatusForbidden, "forbidden")
		if t.Failed() {
			t.Fatalf("DELETE with %s", name)
		}
	}
	mustProblem(t, s.call(t, http.MethodDelete, "/users/"+id, tokB, ""), http.StatusNotFound, "not_found")
	mustProblem(t, s.call(t, http.MethodDelete, "/users/not-a-uuid", tok, ""), http.StatusNotFound, "not_found")
	mustProblem(t, s.call(t, http.MethodDelete, "/users/"+uuid.Must(uuid.NewV7()).String(), tok, ""), http.StatusNotFound, "not_found")
	mustProblem(t, s.call(t, http.MethodDelete, "/users/"+a.OwnerUserID, tok, ""), http.StatusBadRequest, "cannot_disable_owner")
	if types := s.eventTypes(t, id); !slices.Equal(types, []string{"user.created"}) {
		t.Fatalf("events before disabling: got %v, want [user.created]", types)
	}

	got := mustStatus(t, s.call(t, http.MethodDelete, "/users/"+id, tok, ""), http.StatusOK)
	var recordID string
	s.queryRow(t, `SELECT id::text FROM events WHERE stream_id = $1 AND stream_version = 1`, []any{id}, &recordID)
	checkJSON(t, "DELETE body", got, map[string]any{"id": recordID, "userId": id, "email": "leaver@example.com",
		"name": "Leaver", "status": "Inactive", "updatedAt": isTimestamp})
	if got["id"] == got["userId"] {
		t.Errorf("id: got the userId %v, want the record id", got["id"])
	}
	if got["updatedAt"].(string) < u["createdAt"].(string) {
		t.Errorf("updatedAt: got %v, want not before createdAt %v", got["updatedAt"], u["createdAt"])
	}

	// Every user endpoint is 404 for it now, and its token is dead at once.
	for _, tt := range []struct{ method, path, body string }{
		{http.MethodGet, "/users/" + id, ""},
		{http.MethodPatch, "/users/" + id, `{"firstName":"Back"}`},
		{http.MethodDelete, "/users/" + id, ""},
		{http.MethodPost, "/users/token", `{"userId":"` + id + `"}`},
	} {
		mustProblem(t, s.call(t, tt.method, tt.path, tok, tt.body), http.StatusNotFound, "not_found")
	}
	for _, path := range []string{"/profile", "/users/" + id} {
		mustProblem(t, s.call(t, http.MethodGet, path, ut, ""), http.StatusUnauthorized, "invalid_token")
	}
	mustProblem(t, s.call(t, http.MethodPost, "/profile/momo", ut, `{"phoneNumber":"+254712345678","mobileNetwork":"MOMO","countryCode":"KE"}`),
		http.StatusUnauthorized, "invalid_token")
	if types := s.eventTypes(t, id); !slices.Equal(types, []string{"user.created", "user.disabled"}) {
		t.Errorf("events: got %v, want [user.created user.disabled]", types)
	}
	// The others are untouched.
	mustStatus(t, s.call(t, http.MethodGet, "/profile", otherTok, ""), http.StatusOK)
	mustStatus(t, s.call(t, http.MethodGet, "/users/"+a.OwnerUserID, tok, ""), http.StatusOK)
}

// TestUserTenantIsolation sends tenant B's tokens to every /users/{userId}
// route with tenant A's user: each is 404, as if the user did not exist
// (contract §2), and A's user is unchanged.
func TestUserTenantIsolation(t *testing.T) {
	t.Parallel()
	s := startServer(t, nil)
	a := s.createTenant(t, "Alphaco")
	b := s.createTenant(t, "Betaco")
	tokA := s.tenantToken(t, a.APIKey, a.APISecret)
	tokB := s.tenantToken(t, b.APIKey, b.APISecret)
	userB := s.createUser(t, tokB, "b-user@example.com", "B User")["userId"].(string)
	utokB := s.userToken(t, tokB, userB)
	u := s.createUser(t, tokA, "a-user@example.com", "A User")
	id := u["userId"].(string)

	for name, token := range map[string]string{"B's tenant token": tokB, "B's user token": utokB} {
		for _, tt := range []struct{ method, path, body string }{
			{http.MethodGet, "/users/" + id, ""},
			{http.MethodPatch, "/users/" + id, `{"firstName":"Eve"}`},
			{http.MethodPatch, "/users/" + id, `{"isVerified":true}`},
			{http.MethodDelete, "/users/" + id, ""},
			{http.MethodGet, "/users/" + a.OwnerUserID, ""},
			{http.MethodDelete, "/users/" + a.OwnerUserID, ""},
		} {
			r := s.call(t, tt.method, tt.path, token, tt.body)
			if name == "B's user token" && tt.method == http.MethodDelete {
				mustProblem(t, r, http.StatusForbidden, "forbidden") // a user token never disables
				continue
			}
			mustProblem(t, r, http.StatusNotFound, "not_found")
			if t.Failed() {
				t.Fatalf("%s: %s %s", name, tt.method, tt.path)
			}
		}
	}
	mustProblem(t, s.call(t, http.MethodPost, "/users/token", tokB, `{"userId":"`+id+`"}`), http.StatusNotFound, "not_found")
	// The same email in B is B's own user, not A's.
	if got := s.createUser(t, tokB, "a-user@example.com", "Another A")["userId"]; got == id {
		t.Errorf("userId in tenant B for A's email: got A's %v, want a new user", got)
	}
	for _, it := range s.listUsers(t, tokB, "").Items {
		if it.UserID == id || it.UserID == a.OwnerUserID {
			t.Errorf("B's list: got A's user %s, want only B's", it.UserID)
		}
	}
	checkJSON(t, "A's user afterwards", mustStatus(t, s.call(t, http.MethodGet, "/users/"+id, tokA, ""), http.StatusOK), u)
	if types := s.eventTypes(t, id); !slices.Equal(types, []string{"user.created"}) {
		t.Errorf("events of A's user: got %v, want [user.created]", types)
	}
}
