package main

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
)

// TestCreateUser covers POST /users (spec §4.2, contract §3): the User body
// of a new user, idempotency by email, a disabled user's email, validation,
// the token kind, and racing creates of one email.
func TestCreateUser(t *testing.T) {
	t.Parallel()
	s := startServer(t, nil)
	tn := s.createTenant(t, "Initech")
	tok := s.tenantToken(t, tn.APIKey, tn.APISecret)

	t.Run("new user, then the same email again", func(t *testing.T) {
		r := s.call(t, http.MethodPost, "/users", tok, `{"email":"Ada.Lovelace@Example.COM","name":"Ada Lovelace"}`)
		created := mustStatus(t, r, http.StatusCreated)
		id, _ := created["userId"].(string)
		want := newUserJSON(id, "ada.lovelace@example.com", "Ada Lovelace")
		want["userId"] = isUUIDv7
		checkJSON(t, "201 body", created, want)
		if created["createdAt"] != created["updatedAt"] {
			t.Errorf("updatedAt of a new user: got %v, want createdAt %v", created["updatedAt"], created["createdAt"])
		}
		want["userId"] = id
		if got := s.eventTypes(t, id); !slices.Equal(got, []string{"user.created"}) {
			t.Errorf("events: got %v, want [user.created]", got)
		}

		// The same address, differently cased and padded, is the same user:
		// 200 with the existing record, whatever name is sent.
		again := s.call(t, http.MethodPost, "/users", tok, `{"email":"  ADA.lovelace@example.com \t","name":"Someone Else"}`)
		checkJSON(t, "200 body", mustStatus(t, again, http.StatusOK), created)
		checkJSON(t, "GET body", mustStatus(t, s.call(t, http.MethodGet, "/users/"+id, tok, ""), http.StatusOK), created)
		if got := s.eventTypes(t, id); !slices.Equal(got, []string{"user.created"}) {
			t.Errorf("events after the repeat: got %v, want [user.created]", got)
		}
	})

	t.Run("email of a disabled user", func(t *testing.T) {
		u := s.createUser(t, tok, "gone@example.com", "Gone")
		mustStatus(t, s.call(t, http.MethodDelete, "/users/"+u["userId"].(string), tok, ""), http.StatusOK)
		mustProblem(t, s.call(t, http.MethodPost, "/users", tok, `{"email":"Gone@example.com","name":"Gone"}`),
			http.StatusConflict, "user_inactive")
	})

	t.Run("invalid bodies", func(t *testing.T) {
		// A tenant of its own, so other subtests' events are not counted.
		own := s.createTenant(t, "Invalidco")
		tok := s.tenantToken(t, own.APIKey, own.APISecret)
		countEvents := func() (n int) {
			s.queryRow(t, `SELECT count(*) FROM events WHERE tenant_id = $1`, []any{own.TenantID}, &n)
			return n
		}
		before := countEvents()
		for _, tt := range []struct {
			name, body, code, field string
		}{
			{"empty object", `{}`, "validation_failed", "email"},
			{"no name", `{"email":"noname@example.com"}`, "validation_failed", "name"},
			{"blank name", `{"email":"blank@example.com","name":"  "}`, "validation_failed", "name"},
			{"null name", `{"email":"nullname@example.com","name":null}`, "validation_failed", "name"},
			{"no email", `{"name":"No Email"}`, "validation_failed", "email"},
			{"not an email", `{"email":"not-an-email","name":"X"}`, "validation_failed", "email"},
			{"two addresses", `{"email":"a@example.com, b@example.com","name":"X"}`, "validation_failed", "email"},
			{"display name", `{"email":"X <x@example.com>","name":"X"}`, "validation_failed", "email"},
			{"number for the email", `{"email":7,"name":"X"}`, "validation_failed", "email"},
			{"unknown field", `{"email":"role@example.com","name":"X","userRole":"Admin"}`, "unknown_field", "userRole"},
		} {
			p := mustProblem(t, s.call(t, http.MethodPost, "/users", tok, tt.body), http.StatusBadRequest, tt.code)
			mustFieldError(t, p, tt.field)
			if t.Failed() {
				t.Fatalf("body %s (%s)", tt.body, tt.name)
			}
		}
		if after := countEvents(); after != before {
			t.Errorf("events: got %d, want %d (invalid bodies appended events)", after, before)
		}
	})

	t.Run("user token", func(t *testing.T) {
		ut := s.userToken(t, tok, tn.OwnerUserID)
		mustProblem(t, s.call(t, http.MethodPost, "/users", ut, `{"email":"byuser@example.com","name":"X"}`),
			http.StatusForbidden, "forbidden")
		mustProblem(t, s.call(t, http.MethodPost, "/users", "", `{"email":"anon@example.com","name":"X"}`),
			http.StatusUnauthorized, "invalid_token")
	})

	t.Run("concurrent creates of one email", func(t *testing.T) {
		const n = 8
		reqs := make([]*http.Request, n)
		for i := range n {
			// The requests spell the address differently.
			email := strings.Repeat(" ", i%3) + "Race.Condition@example.com" + strings.Repeat(" ", i%2)
			if i%2 == 1 {
				email = strings.ToUpper(email)
			}
			req, err := s.callRequest(http.MethodPost, "/users", tok, fmt.Sprintf(`{"email":%q,"name":"Racer %d"}`, email, i))
			if err != nil {
				t.Fatal(err)
			}
			reqs[i] = req
		}
		created, ids := 0, map[string]bool{}
		for i, r := range sendTogether(t, reqs) {
			switch r.Status {
			case http.StatusCreated:
				created++
			case http.StatusOK:
			default:
				t.Errorf("request %d: got %d %s, want 201 or 200", i, r.Status, r.Body)
				continue
			}
			var u map[string]any
			mustDecode(t, r.Body, &u)
			ids[fmt.Sprint(u["userId"])] = true
		}
		if created != 1 {
			t.Errorf("201 answers: got %d, want exactly 1", created)
		}
		if len(ids) != 1 {
			t.Errorf("userIds: got %v, want one", ids)
		}
		var events, users int
		s.queryRow(t, `SELECT count(*) FROM events WHERE type = 'user.created' AND data->>'email' = $1`,
			[]any{"race.condition@example.com"}, &events)
		s.queryRow(t, `SELECT count(*) FROM users WHERE email = $1`, []any{"race.condition@example.com"}, &users)
		if events != 1 || users != 1 {
			t.Errorf("user.created events and users rows: got %d and %d, want 1 and 1", events, users)
		}
	})

	t.Run("Idempotency-Key", func(t *testing.T) {
		key := uuid.NewString()
		body := `{"email":"idem@example.com","name":"Idem Potent"}`
		first := s.call(t, http.MethodPost, "/users", tok, body, "Idempotency-Key", key)
		u := mustStatus(t, first, http.StatusCreated)
		id := u["userId"].(string)
		countEvents := func() (n int) {
			s.queryRow(t, `SELECT count(*) FROM events WHERE stream_id = $1 OR data->>'email' = $2`,
				[]any{id, "idem@example.com"}, &n)
			return n
		}
		before := countEvents()

		// A replay is the first answer, 201 and all; a new request for the
		// same email would be a 200.
		replay := s.call(t, http.MethodPost, "/users", tok, body, "Idempotency-Key", key)
		if replay.Status != http.StatusCreated || string(replay.Body) != string(first.Body) {
			t.Errorf("replay: got %d %s, want 201 %s", replay.Status, replay.Body, first.Body)
		}
		if got := replay.Header.Get("Idempotent-Replayed"); got != "true" {
			t.Errorf("replay Idempotent-Replayed: got %q, want true", got)
		}
		if after := countEvents(); after != before {
			t.Errorf("events after the replay: got %d, want %d", after, before)
		}
		if got := s.eventTypes(t, id); !slices.Equal(got, []string{"user.created"}) {
			t.Errorf("events of the user: got %v, want [user.created]", got)
		}
		// Control: without the key the same body is answered afresh.
		fresh := s.call(t, http.MethodPost, "/users", tok, body)
		checkJSON(t, "without a key", mustStatus(t, fresh, http.StatusOK), u)
		if got := fresh.Header.Get("Idempotent-Replayed"); got != "" {
			t.Errorf("without a key Idempotent-Replayed: got %q, want none", got)
		}
		mustProblem(t, s.call(t, http.MethodPost, "/users", tok, `{"email":"idem2@example.com","name":"Other"}`,
			"Idempotency-Key", key), http.StatusUnprocessableEntity, "idempotency_key_reused")
	})
}

// TestListUsers covers GET /users (spec §4.2, contract §1, §3): order,
// status filter, limits, markers and paging while others write.
func TestListUsers(t *testing.T) {
	t.Parallel()
	s := startServer(t, nil)

	t.Run("items, order and status", func(t *testing.T) {
		tn := s.createTenant(t, "Listco")
		tok := s.tenantToken(t, tn.APIKey, tn.APISecret)
		ids := s.createUsers(t, tok, "listed", 4)
		mustStatus(t, s.call(t, http.MethodDelete, "/users/"+ids[1], tok, ""), http.StatusOK)

		want := []string{ids[3], ids[2], ids[0], tn.OwnerUserID} // newest first, the disabled one left out
		for _, q := range []string{"", "status=active", "limit=100"} {
			p := s.listUsers(t, tok, q)
			if got := userIDs(p.Items); !slices.Equal(got, want) {
				t.Errorf("GET /users?%s: got %v, want %v", q, got, want)
			}
			if p.OffsetMarker != nil {
				t.Errorf("GET /users?%s offsetMarker: got %q, want null on the only page", q, *p.OffsetMarker)
			}
		}
		p := s.listUsers(t, tok, "")
		for i := 1; i < len(p.Items); i++ {
			if p.Items[i].CreatedAt > p.Items[i-1].CreatedAt {
				t.Errorf("createdAt order: got %s after %s, want newest first", p.Items[i].CreatedAt, p.Items[i-1].CreatedAt)
			}
		}
		for _, it := range p.Items {
			var recordID string
			s.queryRow(t, `SELECT id::text FROM events WHERE stream_id = $1 AND stream_version = 1`, []any{it.UserID}, &recordID)
			if it.ID == it.UserID || it.ID != recordID {
				t.Errorf("item id of %s: got %s, want the record id %s, not the userId", it.UserID, it.ID, recordID)
			}
			wantRole, wantStatus := "Normal User", "Active"
			if it.UserID == tn.OwnerUserID {
				wantRole = "Admin"
			}
			if it.UserRole != wantRole || it.Status != wantStatus {
				t.Errorf("item %s: got userRole %q status %q, want %q %q", it.UserID, it.UserRole, it.Status, wantRole, wantStatus)
			}
		}
		if p.Items[0].Email != "listed-4@example.com" || p.Items[0].Name != "listed 4" {
			t.Errorf("first item: got %s %q, want listed-4@example.com %q", p.Items[0].Email, p.Items[0].Name, "listed 4")
		}

		inactive := s.listUsers(t, tok, "status=inactive")
		if got := userIDs(inactive.Items); !slices.Equal(got, []string{ids[1]}) {
			t.Errorf("status=inactive: got %v, want [%s]", got, ids[1])
		} else if inactive.Items[0].Status != "Inactive" {
			t.Errorf("status=inactive item status: got %q, want Inactive", inactive.Items[0].Status)
		}

		for _, q := range []string{"status=deleted", "status=all", "status=Active"} {
			mustFieldError(t, mustProblem(t, s.call(t, http.MethodGet, "/users?"+q, tok, ""), http.StatusBadRequest, "validation_failed"), "status")
		}
		for _, q := range []string{"limit=0", "limit=101", "limit=abc", "limit=-1", "limit=1.5"} {
			p := mustProblem(t, s.call(t, http.MethodGet, "/users?"+q, tok, ""), http.StatusBadRequest, "validation_failed")
			mustFieldError(t, p, "limit")
			if t.Failed() {
				t.Fatalf("GET /users?%s", q)
			}
		}
		ut := s.userToken(t, tok, ids[0])
		mustProblem(t, s.call(t, http.MethodGet, "/users", ut, ""), http.StatusForbidden, "forbidden")
	})

	t.Run("default limit is 100", func(t *testing.T) {
		tn := s.createTenant(t, "Bulkco")
		tok := s.tenantToken(t, tn.APIKey, tn.APISecret)
		// 100 users and the owner: 101, created by a few workers.
		var wg sync.WaitGroup
		next := atomic.Int32{}
		for range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := next.Add(1); i <= 100; i = next.Add(1) {
					req, err := s.callRequest(http.MethodPost, "/users", tok, fmt.Sprintf(`{"email":"bulk-%d@example.com","name":"Bulk"}`, i))
					if err != nil {
						t.Error(err)
						return
					}
					if r, err := trySend(req); err != nil || r.Status != http.StatusCreated {
						t.Errorf("create bulk-%d: got %v %d %s, want 201", i, err, r.Status, r.Body)
						return
					}
				}
			}()
		}
		wg.Wait()
		if t.Failed() {
			t.FailNow()
		}
		first := s.listUsers(t, tok, "")
		if len(first.Items) != 100 || first.OffsetMarker == nil {
			t.Fatalf("first page: got %d items and marker %v, want 100 and a marker", len(first.Items), first.OffsetMarker)
		}
		rest := s.listUsers(t, tok, "offset="+*first.OffsetMarker)
		if len(rest.Items) != 1 || rest.Items[0].UserID != tn.OwnerUserID || rest.OffsetMarker != nil {
			t.Errorf("second page: got %v marker %v, want the owner only and no marker", userIDs(rest.Items), rest.OffsetMarker)
		}
	})

	t.Run("paging while others write", func(t *testing.T) {
		tn := s.createTenant(t, "Pageco")
		tok := s.tenantToken(t, tn.APIKey, tn.APISecret)
		existing := s.createUsers(t, tok, "paged", 11)
		want := slices.Clone(existing)
		slices.Reverse(want) // newest first, the owner oldest
		want = append(want, tn.OwnerUserID)

		// A writer creates users for as long as paging lasts; after each
		// page the reader waits until it has created one more, so every
		// page is read with new rows in between.
		var created atomic.Int32
		stop := make(chan struct{})
		writerDone := make(chan struct{})
		go func() {
			defer close(writerDone)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				req, err := s.callRequest(http.MethodPost, "/users", tok, fmt.Sprintf(`{"email":"during-%d@example.com","name":"During"}`, i))
				if err != nil {
					t.Error(err)
					return
				}
				if r, err := trySend(req); err != nil || r.Status != http.StatusCreated {
					t.Errorf("create during paging: got %v %d %s, want 201", err, r.Status, r.Body)
					return
				}
				created.Add(1)
			}
		}()
		defer func() { close(stop); <-writerDone }()

		var seen []string
		query := "limit=2"
		for pages := 0; ; pages++ {
			if pages > 50 {
				t.Fatalf("got more than 50 pages of 2, want about %d", len(want)/2)
			}
			mark := created.Load()
			p := s.listUsers(t, tok, query)
			if len(p.Items) > 2 {
				t.Fatalf("page %d: got %d items, want at most 2", pages, len(p.Items))
			}
			seen = append(seen, userIDs(p.Items)...)
			if p.OffsetMarker == nil {
				break
			}
			query = "limit=2&offset=" + *p.OffsetMarker
			for deadline := time.Now().Add(5 * time.Second); created.Load() == mark; time.Sleep(2 * time.Millisecond) {
				if time.Now().After(deadline) || t.Failed() {
					t.Fatalf("the writer created no user within 5 s")
				}
			}
		}
		counts := map[string]int{}
		var old []string
		for _, id := range seen {
			if counts[id]++; counts[id] == 2 {
				t.Errorf("user %s: got it on two pages, want it once", id)
			}
			if slices.Contains(want, id) {
				old = append(old, id)
			}
		}
		if !slices.Equal(old, want) {
			t.Errorf("users that existed before paging: got %v, want %v (none skipped or repeated, newest first)", old, want)
		}
		if created.Load() < 3 {
			t.Errorf("users created during paging: got %d, want several", created.Load())
		}
	})

	t.Run("markers", func(t *testing.T) {
		a := s.createTenant(t, "Markera")
		b := s.createTenant(t, "Markerb")
		tokA := s.tenantToken(t, a.APIKey, a.APISecret)
		tokB := s.tenantToken(t, b.APIKey, b.APISecret)
		idsA := s.createUsers(t, tokA, "marka", 3)
		s.createUsers(t, tokB, "markb", 2)
		for _, id := range idsA[:2] {
			mustStatus(t, s.call(t, http.MethodDelete, "/users/"+id, tokA, ""), http.StatusOK)
		}

		active := s.listUsers(t, tokA, "limit=1")
		inactive := s.listUsers(t, tokA, "status=inactive&limit=1")
		foreign := s.listUsers(t, tokB, "limit=1")
		if active.OffsetMarker == nil || inactive.OffsetMarker == nil || foreign.OffsetMarker == nil {
			t.Fatalf("markers: got %v %v %v, want three", active.OffsetMarker, inactive.OffsetMarker, foreign.OffsetMarker)
		}
		// Controls: each marker works where it came from.
		if p := s.listUsers(t, tokA, "limit=1&offset="+*active.OffsetMarker); len(p.Items) != 1 || p.Items[0].UserID != a.OwnerUserID {
			t.Errorf("active page 2: got %v, want the owner", userIDs(p.Items))
		}
		if p := s.listUsers(t, tokA, "status=inactive&limit=1&offset="+*inactive.OffsetMarker); len(p.Items) != 1 || p.Items[0].UserID != idsA[0] {
			t.Errorf("inactive page 2: got %v, want [%s]", userIDs(p.Items), idsA[0])
		}
		for name, q := range map[string]string{
			"malformed":                       "offset=%25%25not-a-marker",
			"not base64":                      "offset=***",
			"base64 of garbage":               "offset=Z2FyYmFnZQ",
			"another tenant's":                "offset=" + *foreign.OffsetMarker,
			"the inactive list's on active":   "status=active&offset=" + *inactive.OffsetMarker,
			"the active list's on inactive":   "status=inactive&offset=" + *active.OffsetMarker,
			"the active list's, truncated":    "offset=" + (*active.OffsetMarker)[:len(*active.OffsetMarker)-3],
			"a valid marker with a bad limit": "limit=0&offset=" + *active.OffsetMarker,
		} {
			p := mustProblem(t, s.call(t, http.MethodGet, "/users?"+q, tokA, ""), http.StatusBadRequest, "validation_failed")
			if len(p.Errors) != 1 || (p.Errors[0].Field != "offset" && p.Errors[0].Field != "limit") {
				t.Errorf("%s marker: got errors %+v, want the offset (or limit) named", name, p.Errors)
			}
		}
	})
}

// TestGetUser covers GET /users/{userId} (spec §4.2, contract §2): who may
// read a user, and the 404s that do not say why.
func TestGetUser(t *testing.T) {
	t.Parallel()
	s := startServer(t, nil)
	a := s.createTenant(t, "Getco")
	b := s.createTenant(t, "Otherco")
	tokA := s.tenantToken(t, a.APIKey, a.APISecret)
	tokB := s.tenantToken(t, b.APIKey, b.APISecret)
	u := s.createUser(t, tokA, "reader@example.com", "Reader")
	v := s.createUser(t, tokA, "other@example.com", "Other")
	gone := s.createUser(t, tokA, "gone@example.com", "Gone")
	id, vid, goneID := u["userId"].(string), v["userId"].(string), gone["userId"].(string)
	utok := s.userToken(t, tokA, id)
	mustStatus(t, s.call(t, http.MethodDelete, "/users/"+goneID, tokA, ""), http.StatusOK)

	checkJSON(t, "tenant token", mustStatus(t, s.call(t, http.MethodGet, "/users/"+id, tokA, ""), http.StatusOK), u)
	checkJSON(t, "own user token", mustStatus(t, s.call(t, http.MethodGet, "/users/"+id, utok, ""), http.StatusOK), u)
	owner := mustStatus(t, s.call(t, http.MethodGet, "/users/"+a.OwnerUserID, tokA, ""), http.StatusOK)
	if owner["userRole"] != "Admin" || owner["email"] != "getco@example.com" {
		t.Errorf("owner: got userRole %v email %v, want Admin getco@example.com", owner["userRole"], owner["email"])
	}

	for _, tt := range []struct{ name, token, path string }{
		{"user token for another user", utok, "/users/" + vid},
		{"user token for the owner", utok, "/users/" + a.OwnerUserID},
		{"another tenant's user", tokB, "/users/" + id},
		{"disabled user", tokA, "/users/" + goneID},
		{"no such user", tokA, "/users/" + uuid.Must(uuid.NewV7()).String()},
		{"not a UUID", tokA, "/users/not-a-uuid"},
		{"not a UUID, user token", utok, "/users/12345"},
	} {
		mustProblem(t, s.call(t, http.MethodGet, tt.path, tt.token, ""), http.StatusNotFound, "not_found")
		if t.Failed() {
			t.Fatalf("%s: GET %s", tt.name, tt.path)
		}
	}
	mustProblem(t, s.call(t, http.MethodGet, "/users/"+id, "", ""), http.StatusUnauthorized, "invalid_token")
}
