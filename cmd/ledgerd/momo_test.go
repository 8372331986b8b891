package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"

	"github.com/ledger/ledger/domain"
)

// momoBody is a valid POST /profile/momo body for phone.
func momoBody(phone string) string {
	return fmt.Sprintf(`{"phoneNumber":%q,"mobileNetwork":"MOMO","countryCode":"KE"}`, phone)
}

// momoAccounts returns a profile's accounts, each checked to have exactly
// spec §2.7's members (no per-account isDefault), and checks that
// defaultMomoAccountId is null or one of them (spec §3.3).
func momoAccounts(t *testing.T, profile map[string]any) []map[string]any {
	t.Helper()
	raw, ok := profile["momoAccounts"].([]any)
	if !ok {
		t.Fatalf("momoAccounts: got %v, want an array", profile["momoAccounts"])
	}
	var accounts []map[string]any
	ids := map[any]bool{}
	for i, a := range raw {
		acc, _ := a.(map[string]any)
		checkJSON(t, fmt.Sprintf("momoAccounts[%d]", i), acc, map[string]any{"id": isUUIDv7, "label": acc["label"],
			"phoneNumber": acc["phoneNumber"], "mobileNetwork": "MOMO", "countryCode": "KE"})
		accounts = append(accounts, acc)
		ids[acc["id"]] = true
	}
	if d := profile["defaultMomoAccountId"]; d != nil && !ids[d] {
		t.Errorf("defaultMomoAccountId: got %v, want null or one of the accounts", d)
	}
	return accounts
}

func accountIDs(accounts []map[string]any) []string {
	var ids []string
	for _, a := range accounts {
		ids = append(ids, a["id"].(string))
	}
	return ids
}

// TestMomoAccounts covers POST, PATCH and DELETE /profile/momo (spec §2.7,
// §3.3, §4.4, contract §4): the default's life, validation, the limit of
// ten, and whose accounts a token reaches.
func TestMomoAccounts(t *testing.T) {
	t.Parallel()
	s := startServer(t, nil)
	tn := s.createTenant(t, "Momoco")
	tok := s.tenantToken(t, tn.APIKey, tn.APISecret)
	newUser := func(t *testing.T, email string) (id, token string) {
		t.Helper()
		id = s.createUser(t, tok, email, "Momo User")["userId"].(string)
		return id, s.userToken(t, tok, id)
	}

	t.Run("default account", func(t *testing.T) {
		id, ut := newUser(t, "default@example.com")
		call := func(method, path, body string, status int) map[string]any {
			t.Helper()
			p := mustStatus(t, s.call(t, method, path, ut, body), status)
			momoAccounts(t, p)
			return p
		}

		p := call(http.MethodPost, "/profile/momo", `{"phoneNumber":"+254712345678","mobileNetwork":"MOMO","countryCode":"KE","label":"Main"}`, http.StatusCreated)
		want := newProfileJSON(id, "default@example.com", "Momo User")
		want["momoAccounts"], want["defaultMomoAccountId"] = p["momoAccounts"], p["defaultMomoAccountId"]
		checkJSON(t, "201 body", p, want)
		accs := momoAccounts(t, p)
		if len(accs) != 1 {
			t.Fatalf("momoAccounts: got %v, want one", accs)
		}
		checkJSON(t, "account", accs[0], map[string]any{"id": isUUIDv7, "label": "Main", "phoneNumber": "+254712345678",
			"mobileNetwork": "MOMO", "countryCode": "KE"})
		first := accs[0]["id"].(string)
		if p["defaultMomoAccountId"] != first {
			t.Errorf("defaultMomoAccountId after the first account: got %v, want %s", p["defaultMomoAccountId"], first)
		}

		p = call(http.MethodPost, "/profile/momo", momoBody("+254110000001"), http.StatusCreated)
		accs = momoAccounts(t, p)
		if len(accs) != 2 || accs[0]["id"] != first || accs[1]["label"] != nil || accs[1]["phoneNumber"] != "+254110000001" {
			t.Fatalf("after a second account: got %v, want the first then the new one without a label", accs)
		}
		second := accs[1]["id"].(string)
		if p["defaultMomoAccountId"] != first {
			t.Errorf("defaultMomoAccountId after a second account: got %v, want still %s", p["defaultMomoAccountId"], first)
		}

		p409 := mustProblem(t, s.call(t, http.MethodPost, "/profile/momo", ut,
			`{"phoneNumber":"+254712345678","mobileNetwork":"MOMO","countryCode":"KE","label":"Again"}`), http.StatusConflict, "momo_phone_exists")
		mustFieldError(t, p409, "phoneNumber")

		p = call(http.MethodPatch, "/profile/momo/"+second, `{"label":"Backup"}`, http.StatusOK)
		if a := momoAccounts(t, p)[1]; a["label"] != "Backup" || a["phoneNumber"] != "+254110000001" {
			t.Errorf("after PATCH label: got %v, want label Backup and the number unchanged", a)
		}
		p = call(http.MethodPatch, "/profile/momo/"+second, `{"phoneNumber":"+254722000002"}`, http.StatusOK)
		if a := momoAccounts(t, p)[1]; a["label"] != "Backup" || a["phoneNumber"] != "+254722000002" {
			t.Errorf("after PATCH phoneNumber: got %v, want +254722000002 and the label unchanged", a)
		}
		mustProblem(t, s.call(t, http.MethodPatch, "/profile/momo/"+second, ut, `{"phoneNumber":"+254712345678"}`),
			http.StatusConflict, "momo_phone_exists")
		call(http.MethodPatch, "/profile/momo/"+second, `{"phoneNumber":"+254722000002"}`, http.StatusOK) // its own number

		// isDefault false on another account changes nothing; true promotes;
		// false on the default is refused.
		n := len(s.streamEvents(t, id))
		if p = call(http.MethodPatch, "/profile/momo/"+second, `{"isDefault":false}`, http.StatusOK); p["defaultMomoAccountId"] != first {
			t.Errorf("isDefault false on a non-default: got default %v, want %s", p["defaultMomoAccountId"], first)
		}
		if after := len(s.streamEvents(t, id)); after != n {
			t.Errorf("events after a no-op PATCH: got %d, want %d", after, n)
		}
		if p = call(http.MethodPatch, "/profile/momo/"+second, `{"isDefault":true}`, http.StatusOK); p["defaultMomoAccountId"] != second {
			t.Errorf("isDefault true: got default %v, want %s", p["defaultMomoAccountId"], second)
		}
		mustProblem(t, s.call(t, http.MethodPatch, "/profile/momo/"+second, ut, `{"isDefault":false}`), http.StatusBadRequest, "default_required")
		mustProblem(t, s.call(t, http.MethodPatch, "/profile/momo/"+second, ut, `{"isDefault":false,"label":"X"}`), http.StatusBadRequest, "default_required")
		p = call(http.MethodPatch, "/profile/momo/"+first, `{"label":null}`, http.StatusOK)
		if a := momoAccounts(t, p)[0]; a["label"] != nil {
			t.Errorf("label after null: got %v, want null", a["label"])
		}

		for _, tt := range []struct {
			body, code, field string
		}{
			{`{"mobileNetwork":"MOMO"}`, "unknown_field", "mobileNetwork"},
			{`{"id":"` + first + `"}`, "unknown_field", "id"},
			{`{"IsDefault":true}`, "unknown_field", "IsDefault"},
			{`{"isDefault":null}`, "validation_failed", "isDefault"},
			{`{"isDefault":"true"}`, "validation_failed", "isDefault"},
			{`{"phoneNumber":null}`, "validation_failed", "phoneNumber"},
			{`{"phoneNumber":"+255712345678"}`, "validation_failed", "phoneNumber"},
		} {
			mustFieldError(t, mustProblem(t, s.call(t, http.MethodPatch, "/profile/momo/"+first, ut, tt.body), http.StatusBadRequest, tt.code), tt.field)
		}
		for _, path := range []string{"/profile/momo/" + uuid.Must(uuid.NewV7()).String(), "/profile/momo/not-a-uuid", "/profile/momo/1"} {
			mustProblem(t, s.call(t, http.MethodPatch, path, ut, `{"isDefault":true}`), http.StatusNotFound, "not_found")
			mustProblem(t, s.call(t, http.MethodDelete, path, ut, ""), http.StatusNotFound, "not_found")
		}

		// Removing the default leaves none; nothing is promoted, not even
		// by adding another account.
		p = call(http.MethodDelete, "/profile/momo/"+second, "", http.StatusOK)
		if ids := accountIDs(momoAccounts(t, p)); p["defaultMomoAccountId"] != nil || !slices.Equal(ids, []string{first}) {
			t.Errorf("after deleting the default: got default %v accounts %v, want null and [%s]", p["defaultMomoAccountId"], ids, first)
		}
		mustProblem(t, s.call(t, http.MethodDelete, "/profile/momo/"+second, ut, ""), http.StatusNotFound, "not_found")
		mustProblem(t, s.call(t, http.MethodPatch, "/profile/momo/"+second, ut, `{"isDefault":true}`), http.StatusNotFound, "not_found")
		p = call(http.MethodPost, "/profile/momo", momoBody("+254733000003"), http.StatusCreated)
		if p["defaultMomoAccountId"] != nil {
			t.Errorf("adding an account while there is no default: got default %v, want null", p["defaultMomoAccountId"])
		}
		if p = call(http.MethodPatch, "/profile/momo/"+first, `{"isDefault":true}`, http.StatusOK); p["defaultMomoAccountId"] != first {
			t.Errorf("promoting again: got default %v, want %s", p["defaultMomoAccountId"], first)
		}
		// A removed number can be added again.
		p = call(http.MethodPost, "/profile/momo", momoBody("+254722000002"), http.StatusCreated)
		checkJSON(t, "GET /profile", mustStatus(t, s.call(t, http.MethodGet, "/profile", ut, ""), http.StatusOK), p)

		want2 := []string{"user.created",
			"user.momo_account_added", "user.default_momo_account_changed", // first
			"user.momo_account_added",                                // second
			"user.momo_account_updated", "user.momo_account_updated", // label, number
			"user.default_momo_account_changed",                              // promote second
			"user.momo_account_updated",                                      // first's label cleared
			"user.default_momo_account_changed", "user.momo_account_removed", // delete the default
			"user.momo_account_added",           // third
			"user.default_momo_account_changed", // promote first
			"user.momo_account_added",           // the old number again
		}
		if types := s.eventTypes(t, id); !slices.Equal(types, want2) {
			t.Errorf("events:\ngot  %v\nwant %v", types, want2)
		}
	})

	t.Run("invalid accounts", func(t *testing.T) {
		id, ut := newUser(t, "invalid@example.com")
		for _, tt := range []struct {
			body, code, field string
		}{
			{momoBody("+255712345678"), "validation_failed", "phoneNumber"}, // Tanzania
			{momoBody("0712345678"), "validation_failed", "phoneNumber"},
			{momoBody("254712345678"), "validation_failed", "phoneNumber"},
			{momoBody("+25471234567"), "validation_failed", "phoneNumber"},   // 12 characters
			{momoBody("+2547123456789"), "validation_failed", "phoneNumber"}, // 14 characters
			{momoBody("+254212345678"), "validation_failed", "phoneNumber"},  // a landline
			{momoBody("+254 12345678"), "validation_failed", "phoneNumber"},
			{momoBody(""), "validation_failed", "phoneNumber"},
			{`{"mobileNetwork":"MOMO","countryCode":"KE"}`, "validation_failed", "phoneNumber"},
			{`{"phoneNumber":"+254712345678","mobileNetwork":"momo","countryCode":"KE"}`, "validation_failed", "mobileNetwork"},
			{`{"phoneNumber":"+254712345678","mobileNetwork":"MPESA","countryCode":"KE"}`, "validation_failed", "mobileNetwork"},
			{`{"phoneNumber":"+254712345678","countryCode":"KE"}`, "validation_failed", "mobileNetwork"},
			{`{"phoneNumber":"+254712345678","mobileNetwork":"MOMO","countryCode":"ke"}`, "validation_failed", "countryCode"},
			{`{"phoneNumber":"+254712345678","mobileNetwork":"MOMO","countryCode":"KEN"}`, "validation_failed", "countryCode"},
			{`{"phoneNumber":"+254712345678","mobileNetwork":"MOMO"}`, "validation_failed", "countryCode"},
			{`{"phoneNumber":"+254712345678","mobileNetwork":"MOMO","countryCode":"KE","label":"` + strings.Repeat("x", 101) + `"}`, "validation_failed", "label"},
			{`{"phoneNumber":"+254712345678","mobileNetwork":"MOMO","countryCode":"KE","isDefault":true}`, "unknown_field", "isDefault"},
			{`{"phoneNumber":"+254712345678","mobileNetwork":"MOMO","countryCode":"KE","id":"` + id + `"}`, "unknown_field", "id"},
			{`{"phonenumber":"+254712345678","mobileNetwork":"MOMO","countryCode":"KE"}`, "unknown_field", "phonenumber"},
		} {
			mustFieldError(t, mustProblem(t, s.call(t, http.MethodPost, "/profile/momo", ut, tt.body), http.StatusBadRequest, tt.code), tt.field)
			if t.Failed() {
				t.Fatalf("body %s", tt.body)
			}
		}
		if types := s.eventTypes(t, id); !slices.Equal(types, []string{"user.created"}) {
			t.Errorf("events: got %v, want [user.created]", types)
		}
	})

	t.Run("at most ten accounts", func(t *testing.T) {
		_, ut := newUser(t, "ten@example.com")
		var p map[string]any
		for i := range domain.MaxMomoAccounts {
			p = mustStatus(t, s.call(t, http.MethodPost, "/profile/momo", ut, momoBody(fmt.Sprintf("+25471000000%d", i))), http.StatusCreated)
		}
		accs := momoAccounts(t, p)
		if len(accs) != 10 {
			t.Fatalf("accounts: got %d, want 10", len(accs))
		}
		mustProblem(t, s.call(t, http.MethodPost, "/profile/momo", ut, momoBody("+254720000010")), http.StatusBadRequest, "too_many_momo_accounts")
		mustStatus(t, s.call(t, http.MethodDelete, "/profile/momo/"+accs[3]["id"].(string), ut, ""), http.StatusOK)
		mustStatus(t, s.call(t, http.MethodPost, "/profile/momo", ut, momoBody("+254720000010")), http.StatusCreated)
	})

	t.Run("whose accounts", func(t *testing.T) {
		aliceID, alice := newUser(t, "alice@example.com")
		_, bob := newUser(t, "bob@example.com")
		p := mustStatus(t, s.call(t, http.MethodPost, "/profile/momo", alice, momoBody("+254711111111")), http.StatusCreated)
		acc := momoAccounts(t, p)[0]["id"].(string)

		other := s.createTenant(t, "Othermomo")
		otherTok := s.tenantToken(t, other.APIKey, other.APISecret)
		for name, token := range map[string]string{"another user": bob, "the owner (tenant token)": tok, "another tenant": otherTok} {
			mustProblem(t, s.call(t, http.MethodPatch, "/profile/momo/"+acc, token, `{"isDefault":true}`), http.StatusNotFound, "not_found")
			mustProblem(t, s.call(t, http.MethodDelete, "/profile/momo/"+acc, token, ""), http.StatusNotFound, "not_found")
			if t.Failed() {
				t.Fatalf("%s", name)
			}
		}
		// A tenant token's momo accounts are its owner's.
		p = mustStatus(t, s.call(t, http.MethodPost, "/profile/momo", tok, momoBody("+254711111111")), http.StatusCreated)
		if p["id"] != tn.OwnerUserID || len(momoAccounts(t, p)) != 1 {
			t.Errorf("POST /profile/momo with a tenant token: got profile %v, want the owner's with one account", p["id"])
		}
		if got := mustStatus(t, s.call(t, http.MethodGet, "/profile", alice, ""), http.StatusOK); !slices.Equal(accountIDs(momoAccounts(t, got)), []string{acc}) {
			t.Errorf("alice's accounts: got %v, want [%s] untouched", got["momoAccounts"], acc)
		}
		if types := s.eventTypes(t, aliceID); len(types) != 3 {
			t.Errorf("alice's events: got %v, want created, added, default changed", types)
		}
	})

	t.Run("Idempotency-Key", func(t *testing.T) {
		id, ut := newUser(t, "idem-momo@example.com")
		key := uuid.NewString()
		first := s.call(t, http.MethodPost, "/profile/momo", ut, momoBody("+254799999999"), "Idempotency-Key", key)
		mustStatus(t, first, http.StatusCreated)
		replay := s.call(t, http.MethodPost, "/profile/momo", ut, momoBody("+254799999999"), "Idempotency-Key", key)
		if replay.Status != http.StatusCreated || string(replay.Body) != string(first.Body) || replay.Header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("replay: got %d replayed %q %s, want 201 replayed %s", replay.Status, replay.Header.Get("Idempotent-Replayed"), replay.Body, first.Body)
		}
		if types := s.eventTypes(t, id); len(types) != 3 {
			t.Errorf("events: got %v, want created, added, default changed (no second account)", types)
		}
		// Control: without the key the same body is a duplicate number.
		mustProblem(t, s.call(t, http.MethodPost, "/profile/momo", ut, momoBody("+254799999999")), http.StatusConflict, "momo_phone_exists")
	})
}

// TestMomoDefaultInvariantUnderConcurrency fires adds, promotions and
// deletes at one profile from many goroutines, with account ids taken from
// the answers as they come, then replays the user's stream as stored: after
// every event defaultMomoAccountId is null or names an existing account, no
// account is removed while it is the default, and the state folded from the
// events is what GET /profile shows (spec §3.3).
func TestMomoDefaultInvariantUnderConcurrency(t *testing.T) {
	t.Parallel()
	s := startServer(t, nil)
	tn := s.createTenant(t, "Racemomo")
	tok := s.tenantToken(t, tn.APIKey, tn.APISecret)
	id := s.createUser(t, tok, "racer@example.com", "Racer")["userId"].(string)
	ut := s.userToken(t, tok, id)

	const workers, opsEach = 8, 15
	var (
		mu          sync.Mutex
		known       = map[string]bool{} // account ids seen in answers and not known to be gone
		lastDefault string              // the default in the latest answer
		outcomes    = map[string]int{}
		phones      atomic.Int64
		wg          sync.WaitGroup
	)
	pick := func(rng *rand.Rand, preferDefault bool) (string, bool) {
		mu.Lock()
		defer mu.Unlock()
		if preferDefault && lastDefault != "" && rng.IntN(3) != 0 {
			return lastDefault, true
		}
		ids := make([]string, 0, len(known))
		for k := range known {
			ids = append(ids, k)
		}
		if len(ids) == 0 {
			return "", false
		}
		slices.Sort(ids)
		return ids[rng.IntN(len(ids))], true
	}
	// burst runs the workers once. Bursts are repeated (at most four) until
	// the stream holds promotions, removals and removals of the default,
	// so the checks below always see each kind of event.
	burst := func(round int) {
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(w), uint64(round)))
				for range opsEach {
					op := []string{"add", "promote", "delete"}[rng.IntN(3)]
					acc, ok := "", false
					if op != "add" {
						acc, ok = pick(rng, op == "delete")
					}
					if !ok {
						op = "add"
					}
					var method, path, body string
					switch op {
					case "add":
						method, path, body = http.MethodPost, "/profile/momo", momoBody(fmt.Sprintf("+2547%08d", phones.Add(1)))
					case "promote":
						method, path, body = http.MethodPatch, "/profile/momo/"+acc, `{"isDefault":true}`
					case "delete":
						method, path = http.MethodDelete, "/profile/momo/"+acc
					}
					req, err := s.callRequest(method, path, ut, body)
					if err != nil {
						t.Error(err)
						return
					}
					r, err := trySend(req)
					if err != nil {
						t.Error(err)
						return
					}
					var answer struct {
						Code                 string
						DefaultMomoAccountID *string
						MomoAccounts         []struct{ ID string }
					}
					if err := json.Unmarshal(r.Body, &answer); err != nil {
						t.Errorf("%s %s: body %s: %v", method, path, r.Body, err)
						return
					}
					mu.Lock()
					outcomes[fmt.Sprintf("%s %d %s", op, r.Status, answer.Code)]++
					switch {
					case r.Status == http.StatusOK || r.Status == http.StatusCreated:
						ids := map[string]bool{}
						for _, a := range answer.MomoAccounts {
							known[a.ID], ids[a.ID] = true, true
						}
						if op == "delete" {
							delete(known, acc)
						}
						lastDefault = ""
						if d := answer.DefaultMomoAccountID; d != nil {
							lastDefault = *d
							if !ids[*d] {
								t.Errorf("%s %s: got default %s, want null or one of the answer's accounts", method, path, *d)
							}
						}
					case r.Status == http.StatusNotFound && op != "add" && answer.Code == "not_found":
						delete(known, acc) // deleted by another worker
					case r.Status == http.StatusConflict && answer.Code == "concurrent_update":
					case r.Status == http.StatusBadRequest && op == "add" && answer.Code == "too_many_momo_accounts":
					default:
						t.Errorf("%s %s: got %d %s, want success, a 404 for a removed account, 409 concurrent_update or 400 too_many_momo_accounts",
							method, path, r.Status, r.Body)
					}
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
	}
	bursts := 0
	for bursts < 4 {
		burst(bursts)
		bursts++
		var promotions, removals, defaultRemovals int
		s.queryRow(t, `SELECT
			count(*) FILTER (WHERE type = 'user.default_momo_account_changed' AND data->>'accountId' IS NOT NULL AND data->>'previousAccountId' IS NOT NULL),
			count(*) FILTER (WHERE type = 'user.momo_account_removed'),
			count(*) FILTER (WHERE type = 'user.default_momo_account_changed' AND data->>'accountId' IS NULL)
			FROM events WHERE stream_id = $1`, []any{id}, &promotions, &removals, &defaultRemovals)
		if promotions > 0 && removals > 0 && defaultRemovals > 0 || t.Failed() {
			break
		}
	}
	t.Logf("outcomes of %d bursts: %v", bursts, outcomes)

	var promoted, defaultRemoved, removed int
	state := s.foldUser(t, id, func(v int, e domain.Event, before, after domain.User) {
		if d := after.DefaultMomoAccountID; d != nil && !slices.ContainsFunc(after.MomoAccounts, func(a domain.MomoAccount) bool { return a.ID == *d }) {
			t.Errorf("after event %d (%s): got default %s, want null or one of %d accounts", v, e.EventType(), d, len(after.MomoAccounts))
		}
		switch e := e.(type) {
		case domain.MomoAccountRemoved:
			removed++
			if d := before.DefaultMomoAccountID; d != nil && *d == e.AccountID {
				t.Errorf("event %d removes account %s while it is the default, want the default changed first", v, e.AccountID)
			}
		case domain.DefaultMomoAccountChanged:
			if e.AccountID == nil {
				defaultRemoved++
			} else if before.DefaultMomoAccountID != nil {
				promoted++
			}
		}
	})
	if promoted == 0 || removed == 0 || defaultRemoved == 0 {
		t.Errorf("events: got %d promotions, %d removals, %d of the default; want some of each", promoted, removed, defaultRemoved)
	}

	final := mustStatus(t, s.call(t, http.MethodGet, "/profile", ut, ""), http.StatusOK)
	accs := momoAccounts(t, final)
	var wantAccounts []any
	for _, a := range state.MomoAccounts {
		var label any
		if a.Label != "" {
			label = a.Label
		}
		wantAccounts = append(wantAccounts, map[string]any{"id": a.ID.String(), "label": label, "phoneNumber": a.PhoneNumber,
			"mobileNetwork": a.MobileNetwork, "countryCode": a.CountryCode})
	}
	if got := jsonValue(t, accs); jsonString(got) != jsonString(wantAccounts) {
		t.Errorf("GET /profile momoAccounts:\ngot  %s\nwant %s (folded from the events)", jsonString(got), jsonString(wantAccounts))
	}
	var wantDefault any
	if state.DefaultMomoAccountID != nil {
		wantDefault = state.DefaultMomoAccountID.String()
	}
	if final["defaultMomoAccountId"] != wantDefault {
		t.Errorf("GET /profile defaultMomoAccountId: got %v, want %v (folded from the events)", final["defaultMomoAccountId"], wantDefault)
	}
}
