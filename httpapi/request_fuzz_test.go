package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/mux"
	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/domain"
)

// requestEndpoint is one operation whose JSON body FuzzRequestBody sends.
type requestEndpoint struct {
	name   string
	h      handlerFunc
	caller *Caller           // nil: no token (POST /token)
	vars   map[string]string // the route's path variables
	body   func() any        // a new value of the type the handler decodes into
	seeds  []string          // valid bodies, and near misses
}

// FuzzRequestBody sends any body to every handler that reads a JSON body,
// with fakes behind it and a fixed caller, and checks what the caller
// gets: never a 5xx; a refusal is problem+json with a code, whose errors
// name fields the request type has, or, for an unknown field, a member the
// body sent; the same body again gets the same problem. A body with a
// member name twice in one object is 400 (I-JSON). A success is a JSON
// body. A body decode accepts also survives a round trip: encoded and
// decoded again it encodes the same.
func FuzzRequestBody(f *testing.F) {
	fx := newFixture(f)
	endpoints := requestEndpoints(fx)
	for i, ep := range endpoints {
		for _, seed := range append(ep.seeds, `{}`, `null`, `[]`, `{"nope":1}`, ``, `{"a":{"b":1,"b":2}}`) {
			f.Add(uint8(i), []byte(seed))
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		ep := endpoints[int(which)%len(endpoints)]
		rec := send(fx, ep, body)
		if rec.Code >= 500 {
			t.Fatalf("%s %q: got %d %s, want no 5xx", ep.name, body, rec.Code, rec.Body)
		}
		if hasDuplicateName(body) && rec.Code != http.StatusBadRequest {
			t.Fatalf("%s %q: got %d %s, want 400 for a member name twice in one object", ep.name, body, rec.Code, rec.Body)
		}
		if rec.Code >= 400 {
			checkProblem(t, ep, body, rec)
			// The fixture's state never changes, so neither may the answer:
			// a problem listing its errors in map order would.
			if again := send(fx, ep, body); again.Code != rec.Code || again.Body.String() != rec.Body.String() {
				t.Fatalf("%s %q: got %d %s, then %d %s", ep.name, body, rec.Code, rec.Body, again.Code, again.Body)
			}
		} else if ct := rec.Header().Get("Content-Type"); ct != "application/json" || !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("%s %q: got %d %s %s, want a JSON body", ep.name, body, rec.Code, ct, rec.Body)
		}
		checkRoundTrip(t, ep, body)
	})
}

// send posts body to ep's handler as its caller.
func send(fx *fixture, ep requestEndpoint, body []byte) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r = mux.SetURLVars(r, ep.vars)
	if ep.caller != nil {
		r = r.WithContext(context.WithValue(r.Context(), callerKey{}, *ep.caller))
	}
	rec := httptest.NewRecorder()
	fx.s.route(ep.h).ServeHTTP(rec, r)
	return rec
}

// hasDuplicateName reports whether body's first JSON value has an object
// with a member name twice, read token by token with encoding/json rather
// than with what decode uses.
func hasDuplicateName(body []byte) bool {
	type frame struct {
		names    map[string]bool // nil in an array
		nameNext bool
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			if top != nil && top.names != nil {
				top.nameNext = true // this value ends the member
			}
			f := &frame{}
			if tok == json.Delim('{') {
				f.names, f.nameNext = map[string]bool{}, true
			}
			stack = append(stack, f)
			continue
		case json.Delim('}'), json.Delim(']'):
			if stack = stack[:len(stack)-1]; len(stack) == 0 {
				return false
			}
			continue
		}
		switch {
		case top == nil:
			return false // a scalar: the whole value
		case top.names != nil && top.nameNext:
			name := tok.(string)
			if top.names[name] {
				return true
			}
			top.names[name], top.nameNext = true, false
		case top.names != nil:
			top.nameNext = true
		}
	}
}

// checkProblem fails unless rec is a problem naming only fields of the
// endpoint's request, or members the body sent.
func checkProblem(t *testing.T, ep requestEndpoint, body []byte, rec *httptest.ResponseRecorder) {
	t.Helper()
	var p problem
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || p.Code == "" || p.Status != rec.Code ||
		rec.Header().Get("Content-Type") != "application/problem+json" {
		t.Fatalf("%s %q: got %d %s, want problem+json with a code", ep.name, body, rec.Code, rec.Body)
	}
	known := requestPaths(reflect.TypeOf(ep.body()), "", map[string]bool{})
	var doc any // the first value only, as decode reads names before trailing data
	if json.NewDecoder(bytes.NewReader(body)).Decode(&doc) == nil {
		bodyPaths(doc, "", known)
	}
	for _, fe := range p.Errors {
		if !known[fe.Field] && !known[index.ReplaceAllString(fe.Field, "[]")] {
			t.Fatalf("%s %q: error names %q, which is neither a request field nor in the body (%s)",
				ep.name, body, fe.Field, rec.Body)
		}
	}
}

// index is an array index in a field path: "nationality[2]".
var index = regexp.MustCompile(`\[[0-9]+\]`)

// requestPaths adds the dotted paths of t's JSON members to paths, arrays
// written "a[]" and their elements' members "a[].b".
func requestPaths(t reflect.Type, prefix string, paths map[string]bool) map[string]bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if v, ok := optionalValue(t); ok {
		return requestPaths(v, prefix, paths)
	}
	switch {
	case t.Kind() == reflect.Slice && t != reflect.TypeFor[json.RawMessage]():
		paths[prefix+"[]"] = true
		requestPaths(t.Elem(), prefix+"[]", paths)
	case t.Kind() == reflect.Struct && !opaqueValue(t):
		for name, ft := range jsonFields(t) {
			p := name
			if prefix != "" {
				p = prefix + "." + name
			}
			paths[p] = true
			requestPaths(ft, p, paths)
		}
	}
	return paths
}

// opaqueValue reports types that decode themselves from a JSON scalar.
func opaqueValue(t reflect.Type) bool {
	return t == reflect.TypeFor[time.Time]() || t == reflect.TypeFor[uuid.UUID]() || t == reflect.TypeFor[decimal.Decimal]()
}

// bodyPaths adds the paths of every member doc holds, indices as sent.
func bodyPaths(doc any, prefix string, paths map[string]bool) {
	switch d := doc.(type) {
	case map[string]any:
		for name, v := range d {
			p := name
			if prefix != "" {
				p = prefix + "." + name
			}
			paths[p] = true
			bodyPaths(v, p, paths)
		}
	case []any:
		for i, v := range d {
			p := fmt.Sprintf("%s[%d]", prefix, i)
			paths[p] = true
			bodyPaths(v, p, paths)
		}
	}
}

// checkRoundTrip decodes body as the handler does; what decodes must
// encode to a body that decodes again and encodes the same.
func checkRoundTrip(t *testing.T, ep requestEndpoint, body []byte) {
	t.Helper()
	v := ep.body()
	if strictDecode(body, v) != nil {
		return
	}
	first, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("%s %q: decoded to %+v, which does not encode: %v", ep.name, body, v, err)
	}
	again := ep.body()
	if err := strictDecode(first, again); err != nil {
		t.Fatalf("%s %q: decoded, encoded as %s, which does not decode: %v", ep.name, body, first, err)
	}
	if second, _ := json.Marshal(again); !bytes.Equal(first, second) {
		t.Fatalf("%s %q: encoded %s, then %s", ep.name, body, first, second)
	}
}

// strictDecode runs decode on body as a request would carry it.
func strictDecode(body []byte, v any) error {
	r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	return decode(httptest.NewRecorder(), r, v)
}

// requestEndpoints are the operations that read a JSON body, with seeds.
func requestEndpoints(fx *fixture) []requestEndpoint {
	userVars := map[string]string{"userId": fx.user.ID.String()}
	return []requestEndpoint{
		{name: "POST /token", h: fx.s.issueTenantToken, body: func() any { return new(tenantTokenRequest) },
			seeds: []string{`{"apiKey":"key","apiSecret":"secret"}`, `{"apiKey":"key","apiSecret":"wrong"}`, `{"apiKey":" ","apiSecret":"x"}`}},
		{name: "POST /users/token", h: fx.s.issueUserToken, caller: &fx.tenant, body: func() any { return new(userTokenRequest) },
			seeds: []string{`{"userId":"` + fx.user.ID.String() + `"}`, `{"userId":"x"}`, `{"userId":null}`}},
		{name: "POST /users", h: fx.s.createUser, caller: &fx.tenant, body: func() any { return new(createUserRequest) },
			seeds: []string{`{"email":"ann@example.com","name":"Ann Njeri"}`, `{"email":" Ann@Example.COM "}`, `{"email":"x","name":1}`}},
		{name: "PATCH /users/{userId}", h: fx.s.updateUser, caller: &fx.tenant, vars: userVars, body: func() any { return new(domain.UserPatch) },
			seeds: []string{`{"firstName":"Ann","lastName":"Njeri","dob":"1990-04-12","nationality":["KEN"],"addressLine1":"12 Moi Avenue","addressCity":"Nairobi","addressPostalCode":"00100","addressCountry":"KEN"}`,
				`{"isVerified":true}`, `{"entityType":"business","business":{"companyName":"Acme","type":"LIMITED"},"businessPersons":[{"types":["director"],"person":{"firstName":"A","lastName":"B"}},{"types":["ubo"],"ownership":100,"person":{"firstName":"C","lastName":"D"}}]}`, `{"nationality":["KE","KEN","KEN"]}`}},
		{name: "PATCH /users/{userId} as the user", h: fx.s.updateUser, caller: &fx.self, vars: userVars, body: func() any { return new(domain.UserPatch) },
			seeds: []string{`{"isVerified":true}`, `{"dob":"2999-01-01"}`}},
		{name: "PATCH /profile", h: fx.s.updateProfile, caller: &fx.self, body: func() any { return new(domain.ProfilePatch) },
			seeds: []string{`{"name":"Ann","phoneNumber":"+254712345678","address":{"line1":"1 Moi Avenue","line2":null,"city":"Nairobi","state":"Nairobi County","postalCode":"00100","country":"KEN"}}`, `{"address":{"line1":" "}}`}},
		{name: "POST /profile/momo", h: fx.s.addMomoAccount, caller: &fx.self, body: func() any { return new(domain.AddMomoAccount) },
			seeds: []string{`{"phoneNumber":"+254712345600","mobileNetwork":"MOMO","countryCode":"KE","label":"M-Pesa"}`, `{"phoneNumber":"+254712345678","mobileNetwork":"MOMO","countryCode":"KE"}`}},
		{name: "PATCH /profile/momo/{id}", h: fx.s.updateMomoAccount, caller: &fx.self, vars: map[string]string{"id": fx.user.MomoAccounts[1].ID.String()},
			body:  func() any { return new(domain.MomoPatch) },
			seeds: []string{`{"isDefault":true,"label":"Work"}`, `{"isDefault":false}`, `{"phoneNumber":"+254712345678"}`}},
		{name: "POST /merchants", h: fx.s.createMerchant, caller: &fx.tenant, body: func() any { return new(createMerchantRequest) },
			seeds: []string{`{"name":"Cape Coffee","country":"SouthAfrica","bankName":"Capitec Bank","accountNumber":"1234567890"}`,
				`{"name":"Satoshi Tips","country":"BTC","lnurl":"tips@getalby.com"}`, `{"name":"Duka","country":"Kenya","phoneNumber":"+254712345678"}`}},
		{name: "POST /payments", h: fx.s.createPayment, caller: &fx.tenant, body: func() any { return new(createPaymentRequest) },
			seeds: []string{`{"merchantId":"` + fx.za.String() + `","amount":1500,"reference":"Invoice 42","bufferRate":0.02}`,
				`{"merchantId":"` + fx.za.String() + `","amount":1500,"reference":"Rent","fromCountry":"Europe"}`,
				`{"merchantId":"` + fx.ke.String() + `","amount":500,"fromCountry":"Kenya","meta":{"collectionMethod":"MOMO"}}`,
				`{"merchantId":"` + fx.btc.String() + `","amount":10000,"fromCountry":"USDT","webhookUrl":"http://127.0.0.1/h","webhookSecret":"s"}`,
				`{"merchantId":"` + fx.za.String() + `","amount":1e2,"bufferRate":"0.1","isSlowPayment":true}`}},
		{name: "POST /payments as the user", h: fx.s.createPayment, caller: &fx.self, body: func() any { return new(createPaymentRequest) },
			seeds: []string{`{"merchantId":"` + fx.ke.String() + `","amount":500,"fromCountry":"Kenya","meta":{"collectionMethod":"MOMO"}}`}},
		{name: "POST /sandbox/payments/{paymentId}/deposit", h: fx.s.sandboxDeposit, caller: &fx.tenant,
			vars: map[string]string{"paymentId": fx.payment.ID.String()}, body: func() any { return new(depositRequest) },
			seeds: []string{`{"amount":1}`, `{"amount":null}`, `{"amount":-1}`, `{"amount":1.5}`, `{"amount":"1"}`, `{"amount":9223372036854775807}`}},
	}
}
