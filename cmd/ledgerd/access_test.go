package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

// The access matrix (contract §2): every route of the router, called with
// each kind of credential, answers what the contract says. Its rows are
// checked against the router's own route table, so a route added without a
// row fails the test.

// outcome is the contract's answer in one cell of the matrix.
type outcome struct {
	status int    // 0: admitted, answered on the caller's behalf (neither 401, 403, 404 nor 5xx)
	code   string // the problem code of a refusal
	field  string // the field a 400 names
}

var (
	admitted  = outcome{}
	notFound  = outcome{status: http.StatusNotFound, code: "not_found"}
	forbidden = outcome{status: http.StatusForbidden, code: "forbidden"}
)

func invalidField(name string) outcome {
	return outcome{status: http.StatusBadRequest, code: "validation_failed", field: name}
}

// accessRow is one route's expectations. Paths and bodies address tenant
// A's resources, which belong to A's user (the "user" column).
type accessRow struct {
	path        string // the request path (and query) with real ids; "" is the template itself
	contentType string // of body; application/json when empty
	body        string // sent when not empty

	public int // a route served without a token: the status it answers anyway; 0 for authenticated routes

	tenantOnly bool    // a user token is 403 forbidden
	tenant     outcome // tenant A's token; admitted unless set
	foreign    outcome // tenant B's token
	otherUser  outcome // another user of A, with its user token (ignored when tenantOnly)
	shows      string  // an id the answers admitted for A and its user contain, which proves the leak check can fail
}

// accessWorld is tenant A with a user who owns momo accounts, a payment and
// documents, a second user of A, a user to disable, and tenant B.
type accessWorld struct {
	s                                                  *testServer
	tenantTok, userTok, foreignTok, otherUserTok       string
	tampered, expired                                  string
	tenantID, ownerID, userID, otherUserID, spare      string // spare is the user DELETE /users disables
	momo, spareMomo, merchant, payment, kycDoc, payDoc string
	kycBody, kycType, payDocBody, payDocType           string
}

func newAccessWorld(t *testing.T) accessWorld {
	t.Helper()
	s := startServer(t, nil)
	a, b := s.createTenant(t, "Matrixa"), s.createTenant(t, "Matrixb")
	w := accessWorld{s: s, tenantID: a.TenantID, ownerID: a.OwnerUserID,
		tenantTok: s.tenantToken(t, a.APIKey, a.APISecret), foreignTok: s.tenantToken(t, b.APIKey, b.APISecret)}
	w.userID = s.createUser(t, w.tenantTok, "owner-of-things@example.com", "Owner Of Things")["userId"].(string)
	w.otherUserID = s.createUser(t, w.tenantTok, "neighbour@example.com", "Neighbour")["userId"].(string)
	w.spare = s.createUser(t, w.tenantTok, "spare@example.com", "Spare")["userId"].(string)
	w.userTok = s.userToken(t, w.tenantTok, w.userID)
	w.otherUserTok = s.userToken(t, w.tenantTok, w.otherUserID)

	mustStatus(t, s.call(t, http.MethodPost, "/profile/momo", w.userTok, momoBody("+254712345678")), http.StatusCreated)
	profile := mustStatus(t, s.call(t, http.MethodPost, "/profile/momo", w.userTok, momoBody("+254712345679")), http.StatusCreated)
	ids := accountIDs(momoAccounts(t, profile))
	w.momo, w.spareMomo = ids[0], ids[1]
	w.merchant = mustStatus(t, s.call(t, http.MethodPost, "/merchants", w.tenantTok,
		`{"name":"Shoprite","country":"SouthAfrica","bankName":"Capitec Bank","accountNumber":"1234567890"}`), http.StatusCreated)["id"].(string)
	w.payment = mustStatus(t, s.call(t, http.MethodPost, "/payments", w.userTok,
		fmt.Sprintf(`{"merchantId":%q,"amount":60000,"reference":"matrix"}`, w.merchant)), http.StatusCreated)["id"].(string)

	kyc, kycType := multipartBody(t, filePart("passport.pdf", pdfBytes), typePart("passport"))
	w.kycBody, w.kycType = kyc.String(), kycType
	w.kycDoc = mustStatus(t, send(t, s.newRequest(t, http.MethodPost, "/users/"+w.userID+"/kyc-documents",
		strings.NewReader(w.kycBody), "Content-Type", w.kycType, "Authorization", "Bearer "+w.userTok)),
		http.StatusCreated)["id"].(string)
	payDoc, payDocType := multipartBody(t, filePart("invoice.pdf", pdfBytes))
	w.payDocBody, w.payDocType = payDoc.String(), payDocType
	w.payDoc = mustStatus(t, send(t, s.newRequest(t, http.MethodPost, "/payments/"+w.payment+"/document",
		strings.NewReader(w.payDocBody), "Content-Type", w.payDocType, "Authorization", "Bearer "+w.userTok)),
		http.StatusCreated)["documentId"].(string)

	w.tampered, w.expired = tamperedToken(t, w.tenantTok, b.TenantID), expiredToken(t, s, a)
	return w
}

// tamperedToken is token with its tenant changed and its signature kept.
func tamperedToken(t *testing.T, token, tenantID string) string {
	t.Helper()
	_, c := decodeJWT(t, token)
	c["tenantId"], c["sub"] = tenantID, tenantID
	raw, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(token, ".")
	return parts[0] + "." + base64.RawURLEncoding.EncodeToString(raw) + "." + parts[2]
}

// expiredToken is a tenant token of tn signed with the server's real key
// that expired a minute ago.
func expiredToken(t *testing.T, s *testServer, tn tenant) string {
	t.Helper()
	kid, secret := s.signingKey(t)
	now := time.Now().Unix()
	return signJWT(t, map[string]any{"alg": "HS256", "typ": "JWT", "kid": kid},
		map[string]any{"iss": "ledger", "sub": tn.TenantID, "tenantId": tn.TenantID, "kind": "tenant", "azp": tn.APIKey,
			"iat": now - 3600, "exp": now - 60, "jti": uuid.NewString()}, secret)
}

// rows are the matrix: one row per operation of the router, keyed
// "METHOD /template".
func (w accessWorld) rows() map[string]accessRow {
	return map[string]accessRow{
		"GET /healthz":                {public: http.StatusOK},
		"GET /readyz":                 {public: http.StatusOK},
		"GET /metrics":                {public: http.StatusOK},
		"GET /openapi.json":           {public: http.StatusOK},
		"POST /token":                 {public: http.StatusBadRequest, body: `{}`},
		"GET /documents/{documentId}": {public: http.StatusForbidden, path: "/documents/" + w.kycDoc}, // unsigned

		"POST /users/token": {body: fmt.Sprintf(`{"userId":%q}`, w.userID), tenantOnly: true, foreign: notFound},
		"POST /users":       {body: `{}`, tenantOnly: true},
		"GET /users":        {tenantOnly: true, shows: w.userID},
		"GET /users/{userId}": {path: "/users/" + w.userID, foreign: notFound, otherUser: notFound,
			shows: w.userID},
		"PATCH /users/{userId}": {path: "/users/" + w.userID, body: `{"firstName":"Renamed"}`, foreign: notFound,
			otherUser: notFound},
		"DELETE /users/{userId}": {path: "/users/" + w.spare, tenantOnly: true, foreign: notFound},
		"POST /users/{userId}/kyc-documents": {path: "/users/" + w.userID + "/kyc-documents", contentType: w.kycType,
			body: w.kycBody, foreign: notFound, otherUser: notFound},
		"GET /users/{userId}/kyc-documents": {path: "/users/" + w.userID + "/kyc-documents", foreign: notFound,
			otherUser: notFound, shows: w.kycDoc},
		"GET /users/{userId}/events": {path: "/users/" + w.userID + "/events", foreign: notFound, otherUser: notFound,
			shows: w.userID},

		// The profile is the caller's own (a tenant token's is its owner's):
		// there is no one else's to reach, only momo accounts by id.
		"GET /profile":       {},
		"PATCH /profile":     {body: `{"name":"Renamed"}`},
		"POST /profile/momo": {body: `{}`},
		"PATCH /profile/momo/{id}": {path: "/profile/momo/" + w.momo, body: `{"label":"Renamed"}`, tenant: notFound,
			foreign: notFound, otherUser: notFound},
		"DELETE /profile/momo/{id}": {path: "/profile/momo/" + w.spareMomo, tenant: notFound, foreign: notFound,
			otherUser: notFound},

		// Merchants are the tenant's, shared by its users.
		"POST /merchants":             {body: `{}`},
		"GET /merchants":              {shows: w.merchant},
		"GET /merchants/{merchantId}": {path: "/merchants/" + w.merchant, foreign: notFound, shows: w.merchant},
		"GET /utils/banks":            {path: "/utils/banks?country=Kenya"},

		"POST /payments": {body: fmt.Sprintf(`{"merchantId":%q,"amount":1000,"reference":"matrix"}`, w.merchant),
			foreign: invalidField("merchantId")},
		"GET /payments": {shows: w.payment},
		"GET /payments/{paymentId}": {path: "/payments/" + w.payment, foreign: notFound, otherUser: notFound,
			shows: w.payment},
		"POST /payments/{paymentId}/document": {path: "/payments/" + w.payment + "/document", contentType: w.payDocType,
			body: w.payDocBody, foreign: notFound, otherUser: notFound},
		"GET /payments/{paymentId}/documents": {path: "/payments/" + w.payment + "/documents", foreign: notFound,
			otherUser: notFound, shows: w.payDoc},
		"GET /payments/{paymentId}/webhooks": {path: "/payments/" + w.payment + "/webhooks", foreign: notFound,
			otherUser: notFound},
		"GET /payments/{paymentId}/events": {path: "/payments/" + w.payment + "/events", foreign: notFound,
			otherUser: notFound, shows: w.payment},
		// amount 0 is refused after the payment is found: no deposit is made.
		"POST /sandbox/payments/{paymentId}/deposit": {path: "/sandbox/payments/" + w.payment + "/deposit",
			body: `{"amount":0}`, foreign: notFound, otherUser: notFound},
		"GET /sandbox/payouts": {path: "/sandbox/payouts?paymentId=" + w.payment, foreign: notFound, otherUser: notFound},

		"GET /events":          {tenantOnly: true},
		"GET /ledger/balances": {tenantOnly: true},
	}
}

// TestAccessMatrix calls every route of the router with no token, a
// tampered token, an expired token, each token kind, another tenant's
// token and another user's token, and checks the contract's answer.
// Refused requests reveal nothing of tenant A (or of A's user, to the
// other user): none of their ids is in the answer.
func TestAccessMatrix(t *testing.T) {
	t.Parallel()
	w := newAccessWorld(t)
	routes, err := w.s.app.api.Routes()
	if err != nil {
		t.Fatalf("routes: %v", err)
	}
	rows := w.rows()
	served := map[string]bool{}
	for _, r := range routes {
		served[r.Method+" "+r.Path] = true
	}
	for key := range rows {
		if !served[key] {
			t.Errorf("matrix row %s: got no such route, want rows only for what the router serves", key)
		}
	}
	tenantIDs := []string{w.tenantID, w.ownerID, w.userID, w.otherUserID, w.spare, w.momo, w.spareMomo,
		w.merchant, w.payment, w.kycDoc, w.payDoc}
	userIDs := []string{w.userID, w.momo, w.spareMomo, w.payment, w.kycDoc, w.payDoc}

	for _, route := range routes {
		key := route.Method + " " + route.Path
		row, ok := rows[key]
		if !ok {
			t.Errorf("route %s: got no row in the access matrix, want its expectations written down", key)
			continue
		}
		if row.path == "" {
			row.path = route.Path
		}
		t.Run(key, func(t *testing.T) {
			if route.Public != (row.public != 0) {
				t.Fatalf("public: got %v from the router, want %v", route.Public, row.public != 0)
			}
			if row.public != 0 {
				w.checkPublic(t, route.Method, row)
				return
			}
			for _, c := range []struct {
				name, token, header string
				want                outcome
			}{
				{"no token", "", "Bearer", outcome{http.StatusUnauthorized, "invalid_token", ""}},
				{"tampered token", w.tampered, `Bearer error="invalid_token"`, outcome{http.StatusUnauthorized, "invalid_token", ""}},
				{"expired token", w.expired, `Bearer error="invalid_token"`, outcome{http.StatusUnauthorized, "token_expired", ""}},
			} {
				r := w.call(t, route.Method, row, c.token)
				checkOutcome(t, c.name, r, c.want)
				if got := r.Header.Get("WWW-Authenticate"); got != c.header {
					t.Errorf("%s: WWW-Authenticate: got %q, want %q", c.name, got, c.header)
				}
			}

			user, otherUser := admitted, row.otherUser
			if row.tenantOnly {
				user, otherUser = forbidden, forbidden
			}
			// The admitted cells come last: they may change what they reach.
			for _, c := range []struct {
				name, token string
				want        outcome
				hidden      []string // ids the answer must not contain
				owner       bool     // a call of the resources' owner: an admitted answer shows row.shows
			}{
				{"another tenant's token", w.foreignTok, row.foreign, tenantIDs, false},
				{"another user's token", w.otherUserTok, otherUser, userIDs, false},
				{"user token", w.userTok, user, nil, true},
				{"tenant token", w.tenantTok, row.tenant, nil, true},
			} {
				r := w.call(t, route.Method, row, c.token)
				checkOutcome(t, c.name, r, c.want)
				// A problem's instance echoes the request path, which the
				// caller knew; anything else of the hidden ids is a leak.
				body := strings.ReplaceAll(string(r.Body), strings.SplitN(row.path, "?", 2)[0], "")
				var leaked []string
				for _, id := range c.hidden {
					if strings.Contains(body, id) {
						leaked = append(leaked, id)
					}
				}
				if leaked != nil {
					t.Errorf("%s: got %d %s, want none of %v", c.name, r.Status, brief(r.Body), leaked)
				}
				if c.owner && c.want == admitted && row.shows != "" && !strings.Contains(body, row.shows) {
					t.Errorf("%s: got %d %s, want it to show %s", c.name, r.Status, brief(r.Body), row.shows)
				}
				if c.want.status == http.StatusNotFound {
					w.checkLikeAbsent(t, c.name, route.Method, row, c.token, c.hidden, r)
				}
			}
		})
	}
}

// checkLikeAbsent checks that a 404 hiding someone else's resource is the
// answer to the same call for resources that do not exist (the hidden ids
// replaced by new ones): nothing in it tells "not yours" from "not there".
func (w accessWorld) checkLikeAbsent(t *testing.T, cell, method string, row accessRow, token string, hidden []string, got response) {
	t.Helper()
	absent := row
	for _, id := range hidden {
		fresh := uuid.NewString()
		absent.path = strings.ReplaceAll(absent.path, id, fresh)
		absent.body = strings.ReplaceAll(absent.body, id, fresh)
	}
	want := w.call(t, method, absent, token)
	var p, q problem
	mustDecode(t, got.Body, &p)
	mustDecode(t, want.Body, &q)
	p.Instance, q.Instance = "", ""
	if got.Status != want.Status || !reflect.DeepEqual(p, q) {
		t.Errorf("%s: got %d %s, want what absent resources answer: %d %s", cell, got.Status, brief(got.Body), want.Status, brief(want.Body))
	}
}

// checkPublic checks a route served without a token: it answers its status
// without one, and a bad token changes nothing.
func (w accessWorld) checkPublic(t *testing.T, method string, row accessRow) {
	t.Helper()
	for name, token := range map[string]string{"no token": "", "tampered token": w.tampered} {
		r := w.call(t, method, row, token)
		if r.Status != row.public {
			t.Errorf("%s: got %d %s, want %d", name, r.Status, r.Body, row.public)
		}
		if r.Status >= 400 {
			mustProblem(t, r, row.public, "")
		}
		if got := r.Header.Get("WWW-Authenticate"); got != "" {
			t.Errorf("%s: WWW-Authenticate: got %q, want none on a public route", name, got)
		}
	}
}

// call sends row's request with token ("" for none).
func (w accessWorld) call(t *testing.T, method string, row accessRow, token string) response {
	t.Helper()
	var headers []string
	if token != "" {
		headers = append(headers, "Authorization", "Bearer "+token)
	}
	if row.body == "" {
		return send(t, w.s.newRequest(t, method, row.path, nil, headers...))
	}
	ct := row.contentType
	if ct == "" {
		ct = "application/json"
	}
	return send(t, w.s.newRequest(t, method, row.path, strings.NewReader(row.body), append(headers, "Content-Type", ct)...))
}

// checkOutcome checks r against one cell's expectation: a refusal is the
// problem+json of contract §1 with that status and code; an admitted call
// is neither refused for its credentials nor hidden nor a server error.
func checkOutcome(t *testing.T, cell string, r response, want outcome) {
	t.Helper()
	if want.status == 0 {
		if slices.Contains([]int{http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound}, r.Status) || r.Status >= 500 {
			t.Errorf("%s: got %d %s, want the call admitted", cell, r.Status, brief(r.Body))
		} else if r.Status >= 400 {
			mustProblem(t, r, r.Status, "")
		}
		return
	}
	if r.Status != want.status {
		t.Errorf("%s: got %d %s, want %d %s", cell, r.Status, brief(r.Body), want.status, want.code)
		return
	}
	p := mustProblem(t, r, want.status, want.code)
	if want.field != "" {
		mustFieldError(t, p, want.field)
	}
}

// brief is the start of a body, enough to tell what answered.
func brief(body []byte) string {
	if len(body) > 300 {
		return string(body[:300]) + "..."
	}
	return string(body)
}
