package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ledger/ledger/domain"
)

// Helpers of the tests of the users, profile and momo endpoints (spec
// §2.1-2.7, §3.2, §3.3, §4.2-4.4, contract §3-4).

// call performs method path with a bearer token (when token is not empty)
// and a JSON body (when body is not empty).
func (s *testServer) call(t *testing.T, method, path, token, body string, headers ...string) response {
	t.Helper()
	req, err := s.callRequest(method, path, token, body, headers...)
	if err != nil {
		t.Fatal(err)
	}
	return send(t, req)
}

// callRequest builds call's request; it is safe to use from any goroutine.
func (s *testServer) callRequest(method, path, token, body string, headers ...string) (*http.Request, error) {
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.URL+path, r)
	if err != nil {
		return nil, fmt.Errorf("new request: %w", err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return req, nil
}

// mustStatus fails t unless r has status and a JSON body, and returns the
// body as an object.
func mustStatus(t *testing.T, r response, status int) map[string]any {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status: got %d, want %d (body %s)", r.Status, status, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type: got %q, want application/json", ct)
	}
	var m map[string]any
	mustDecode(t, r.Body, &m)
	return m
}

// A want value of checkJSON may be a check: it returns what is wrong with
// the value it got, or "".
type check func(got any) string

// isTimestamp checks contract §1's format: ISO 8601 UTC with milliseconds.
var isTimestamp check = func(got any) string {
	if s, ok := got.(string); !ok || !isoMillis.MatchString(s) {
		return "want an ISO 8601 UTC timestamp with milliseconds"
	}
	return ""
}

// isUUIDv7 checks an id (contract §1: UUID version 7).
var isUUIDv7 check = func(got any) string {
	s, _ := got.(string)
	if id, err := uuid.Parse(s); err != nil || id.Version() != 7 || id.String() != s {
		return "want a UUIDv7 in canonical form"
	}
	return ""
}

// checkJSON compares a decoded JSON object with want: the same member names
// and, member by member, equal values (or values passing a check).
func checkJSON(t *testing.T, what string, got, want map[string]any) {
	t.Helper()
	gotKeys, wantKeys := sortedKeys(got), sortedKeys(want)
	if !slices.Equal(gotKeys, wantKeys) {
		t.Errorf("%s members: got %v, want %v", what, gotKeys, wantKeys)
	}
	for _, k := range wantKeys {
		g, ok := got[k]
		if !ok {
			continue
		}
		if c, ok := want[k].(check); ok {
			if msg := c(g); msg != "" {
				t.Errorf("%s.%s: got %v, %s", what, k, g, msg)
			}
			continue
		}
		if !reflect.DeepEqual(g, want[k]) {
			t.Errorf("%s.%s: got %s, want %s", what, k, jsonString(g), jsonString(want[k]))
		}
	}
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func jsonString(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// jsonValue turns v into what encoding/json decodes its JSON into
// (map[string]any, []any, float64...), to compare with decoded bodies.
func jsonValue(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	mustDecode(t, b, &out)
	return out
}

// newUserJSON is the User body (spec §2.1 plus contract §3's members) of a
// user just created: every field not given at creation is null, and the
// arrays are empty.
func newUserJSON(userID, email, name string) map[string]any {
	return map[string]any{
		"userId": userID, "email": email, "name": name, "status": "Active", "userRole": "Normal User",
		"isVerified": false, "entityType": nil, "firstName": nil, "middleName": nil, "lastName": nil, "dob": nil,
		"nationality": []any{}, "birthCountry": nil, "address": nil, "idDocumentType": nil,
		"idDocumentNumber": nil, "sector": nil, "business": nil, "businessPersons": []any{},
		"createdAt": isTimestamp, "updatedAt": isTimestamp,
	}
}

// createUser creates a user with POST /users and returns its body.
func (s *testServer) createUser(t *testing.T, tenantToken, email, name string) map[string]any {
	t.Helper()
	r := s.call(t, http.MethodPost, "/users", tenantToken, fmt.Sprintf(`{"email":%q,"name":%q}`, email, name))
	return mustStatus(t, r, http.StatusCreated)
}

// storedEvent is one row of the events table.
type storedEvent struct {
	ID            uuid.UUID
	Version       int
	Type          string
	SchemaVersion int
	Data          []byte
}

// streamEvents returns a stream's stored events in version order.
func (s *testServer) streamEvents(t *testing.T, streamID string) []storedEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.DatabaseURL)
	if err != nil {
		t.Fatalf("connect to test database: %v", err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(ctx, `SELECT id, stream_version, type, schema_version, data FROM events
		WHERE stream_id = $1 ORDER BY stream_version`, streamID)
	if err != nil {
		t.Fatalf("read events: %v", err)
	}
	evs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (storedEvent, error) {
		var e storedEvent
		err := row.Scan(&e.ID, &e.Version, &e.Type, &e.SchemaVersion, &e.Data)
		return e, err
	})
	if err != nil {
		t.Fatalf("read events: %v", err)
	}
	return evs
}

// eventTypes returns the types of a stream's events in version order.
func (s *testServer) eventTypes(t *testing.T, streamID string) []string {
	t.Helper()
	var types []string
	for _, e := range s.streamEvents(t, streamID) {
		types = append(types, e.Type)
	}
	return types
}

// foldUser replays a user's stream as stored, with the domain's own decoder
// and fold, checks that its versions run 1, 2, 3... without gaps, and calls
// each (when not nil) with every event and the states before and after it.
func (s *testServer) foldUser(t *testing.T, userID string, each func(version int, e domain.Event, before, after domain.User)) domain.User {
	t.Helper()
	var u domain.User
	for i, rec := range s.streamEvents(t, userID) {
		if rec.Version != i+1 {
			t.Fatalf("stream %s: got version %d at index %d, want %d (no gaps)", userID, rec.Version, i, i+1)
		}
		e, err := domain.DecodeEvent(rec.Type, rec.SchemaVersion, rec.Data)
		if err != nil {
			t.Fatalf("decode event %d (%s): %v", rec.Version, rec.Type, err)
		}
		before := u
		u = domain.ApplyUser(u, e)
		if each != nil {
			each(rec.Version, e, before, u)
		}
	}
	return u
}

// listItem is one item of GET /users.
type listItem struct {
	ID, UserID, Email, Name, UserRole, Status, CreatedAt, UpdatedAt string
}

// listPage is GET /users's body.
type listPage struct {
	Items        []listItem
	OffsetMarker *string
}

// listUsers performs GET /users?query and decodes the page, checking every
// item's members.
func (s *testServer) listUsers(t *testing.T, token, query string) listPage {
	t.Helper()
	r := s.call(t, http.MethodGet, "/users?"+query, token, "")
	m := mustStatus(t, r, http.StatusOK)
	if got := sortedKeys(m); !slices.Equal(got, []string{"items", "offsetMarker"}) {
		t.Errorf("page members: got %v, want [items offsetMarker]", got)
	}
	var raw struct{ Items []map[string]any }
	mustDecode(t, r.Body, &raw)
	if raw.Items == nil {
		t.Errorf("items: got %s, want an array", r.Body)
	}
	for i, it := range raw.Items {
		checkJSON(t, fmt.Sprintf("items[%d]", i), it, map[string]any{
			"id": isUUIDv7, "userId": isUUIDv7, "email": it["email"], "name": it["name"], "userRole": it["userRole"],
			"status": it["status"], "createdAt": isTimestamp, "updatedAt": isTimestamp,
		})
	}
	var p listPage
	mustDecode(t, r.Body, &p)
	return p
}

func userIDs(items []listItem) []string {
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i] = it.UserID
	}
	return ids
}

// createUsers creates n users of a tenant, in order, named prefix-1...
// prefix-n, and returns their ids.
func (s *testServer) createUsers(t *testing.T, tok, prefix string, n int) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range n {
		ids[i] = s.createUser(t, tok, fmt.Sprintf("%s-%d@example.com", prefix, i+1), fmt.Sprintf("%s %d", prefix, i+1))["userId"].(string)
	}
	return ids
}
