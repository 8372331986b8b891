package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/mux"
	"github.com/prometheus/client_golang/prometheus"
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
// body sent. A body decode accepts also survives a round trip: encoded and
// decoded again it encodes the same.
func FuzzRequestBody(f *testing.F) {
	s, endpoints := requestFixture(f)
	for i, ep := range endpoints {
		for _, seed := range append(ep.seeds, `{}`, `null`, `[]`, `{"nope":1}`, ``) {
			f.Add(uint8(i), []byte(seed))
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		ep := endpoints[int(which)%len(endpoints)]
		r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r = mux.SetURLVars(r, ep.vars)
		if ep.caller != nil {
			r = r.WithContext(context.WithValue(r.Context(), callerKey{}, *ep.caller))
		}
		rec := httptest.NewRecorder()
		s.route(ep.h).ServeHTTP(rec, r)
		if rec.Code >= 500 {
			t.Fatalf("%s %q: got %d %s, want no 5xx", ep.name, body, rec.Code, rec.Body)
		}
		if rec.Code >= 400 {
			checkProblem(t, ep, body, rec)
		}
		checkRoundTrip(t, ep, body)
	})
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

// requestFixture is a sandbox Server over fakes holding one active user
// with two momo accounts, merchants of every payout method and one
// created payment, and the endpoints that read a JSON body.
func requestFixture(f *testing.F) (*Server, []requestEndpoint) {
	tenantID := uuid.MustParse("01937f4e-5a00-7000-8000-000000000001")
	user := fixtureUser(f)
	loc, err := time.LoadLocation("Africa/Johannesburg")
	if err != nil {
		f.Fatal(err)
	}
	merchants := &fakeMerchants{byID: map[uuid.UUID]domain.Merchant{}}
	merchantIDs := map[string]uuid.UUID{}
	for i, c := range []domain.CreateMerchant{
		{Name: "Cape Coffee", Country: "SouthAfrica", BankName: "Capitec Bank", AccountNumber: "1234567890"},
		{Name: "Duka", Country: "Kenya", PhoneNumber: "+254712345678"},
		{Name: "Tips", Country: "BTC", LNURL: "tips@getalby.com"},
	} {
		c.MerchantID = uuid.MustParse(fmt.Sprintf("01937f4e-5a00-7000-8000-0000000001%02d", i))
		events, err := domain.DecideCreateMerchant(domain.Merchant{}, c)
		if err != nil {
			f.Fatal(err)
		}
		merchants.byID[c.MerchantID] = fold(domain.Merchant{}, domain.ApplyMerchant, events)
		merchantIDs[c.Country] = c.MerchantID
	}
	payments := &fakePayments{}
	s := New(Config{Validity: domain.DefaultValidity, OTCFeeRate: decimal.RequireFromString("0.01"), Location: loc,
		InsecureWebhooks: true, Sandbox: true, TenantTokenTTL: time.Hour, UserTokenTTL: 24 * time.Hour},
		Deps{Registry: prometheus.NewRegistry(), Log: slog.New(slog.DiscardHandler), Keys: testKeys,
			Credentials: fakeCredentials{tenantID: tenantID}, Users: &fixtureUsers{user: user},
			Merchants: merchants, Payments: payments, Rails: fakeRails{}})
	s.now = func() time.Time { return time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC) } // a Tuesday, 10:00 in Johannesburg
	tenant := &Caller{TenantID: tenantID, Kind: KindTenant, APIKey: "key"}
	self := &Caller{TenantID: tenantID, UserID: user.ID, Kind: KindUser, APIKey: "key"}
	za, ke, btc := merchantIDs["SouthAfrica"].String(), merchantIDs["Kenya"].String(), merchantIDs["BTC"].String()

	// The sandbox deposit needs a payment: create one through the handler.
	r := httptest.NewRequest(http.MethodPost, "/payments", strings.NewReader(`{"merchantId":"`+za+`","amount":1500,"reference":"Invoice 42"}`))
	r.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	s.route(s.createPayment).ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), callerKey{}, *tenant)))
	if rec.Code != http.StatusCreated {
		f.Fatalf("create the fixture payment: got %d %s", rec.Code, rec.Body)
	}
	payments.payment = payments.created

	userVars := map[string]string{"userId": user.ID.String()}
	return s, []requestEndpoint{
		{name: "POST /token", h: s.issueTenantToken, body: func() any { return new(tenantTokenRequest) },
			seeds: []string{`{"apiKey":"key","apiSecret":"secret"}`, `{"apiKey":"key","apiSecret":"wrong"}`, `{"apiKey":" ","apiSecret":"x"}`}},
		{name: "POST /users/token", h: s.issueUserToken, caller: tenant, body: func() any { return new(userTokenRequest) },
			seeds: []string{`{"userId":"` + user.ID.String() + `"}`, `{"userId":"x"}`, `{"userId":null}`}},
		{name: "POST /users", h: s.createUser, caller: tenant, body: func() any { return new(createUserRequest) },
			seeds: []string{`{"email":"ann@example.com","name":"Ann Njeri"}`, `{"email":" Ann@Example.COM "}`, `{"email":"x","name":1}`}},
		{name: "PATCH /users/{userId}", h: s.updateUser, caller: tenant, vars: userVars, body: func() any { return new(domain.UserPatch) },
			seeds: []string{`{"firstName":"Ann","lastName":"Njeri","dob":"1990-04-12","nationality":["KEN"],"addressLine1":"12 Moi Avenue","addressCity":"Nairobi","addressPostalCode":"00100","addressCountry":"KEN"}`,
				`{"isVerified":true}`, `{"entityType":"business","business":{"companyName":"Acme","type":"LIMITED"},"businessPersons":[{"types":["director"],"person":{"firstName":"A","lastName":"B"}},{"types":["ubo"],"ownership":100,"person":{"firstName":"C","lastName":"D"}}]}`, `{"nationality":["KE","KEN","KEN"]}`}},
		{name: "PATCH /users/{userId} as the user", h: s.updateUser, caller: self, vars: userVars, body: func() any { return new(domain.UserPatch) },
			seeds: []string{`{"isVerified":true}`, `{"dob":"2999-01-01"}`}},
		{name: "PATCH /profile", h: s.updateProfile, caller: self, body: func() any { return new(domain.ProfilePatch) },
			seeds: []string{`{"name":"Ann","phoneNumber":"+254712345678","address":{"line1":"1 Moi Avenue","line2":null,"city":"Nairobi","state":"Nairobi County","postalCode":"00100","country":"KEN"}}`, `{"address":{"line1":" "}}`}},
		{name: "POST /profile/momo", h: s.addMomoAccount, caller: self, body: func() any { return new(domain.AddMomoAccount) },
			seeds: []string{`{"phoneNumber":"+254712345600","mobileNetwork":"MOMO","countryCode":"KE","label":"M-Pesa"}`, `{"phoneNumber":"+254712345678","mobileNetwork":"MOMO","countryCode":"KE"}`}},
		{name: "PATCH /profile/momo/{id}", h: s.updateMomoAccount, caller: self, vars: map[string]string{"id": user.MomoAccounts[1].ID.String()},
			body:  func() any { return new(domain.MomoPatch) },
			seeds: []string{`{"isDefault":true,"label":"Work"}`, `{"isDefault":false}`, `{"phoneNumber":"+254712345678"}`}},
		{name: "POST /merchants", h: s.createMerchant, caller: tenant, body: func() any { return new(createMerchantRequest) },
			seeds: []string{`{"name":"Cape Coffee","country":"SouthAfrica","bankName":"Capitec Bank","accountNumber":"1234567890"}`,
				`{"name":"Satoshi Tips","country":"BTC","lnurl":"tips@getalby.com"}`, `{"name":"Duka","country":"Kenya","phoneNumber":"+254712345678"}`}},
		{name: "POST /payments", h: s.createPayment, caller: tenant, body: func() any { return new(createPaymentRequest) },
			seeds: []string{`{"merchantId":"` + za + `","amount":1500,"reference":"Invoice 42","bufferRate":0.02}`,
				`{"merchantId":"` + za + `","amount":1500,"reference":"Rent","fromCountry":"Europe"}`,
				`{"merchantId":"` + ke + `","amount":500,"fromCountry":"Kenya","meta":{"collectionMethod":"MOMO"}}`,
				`{"merchantId":"` + btc + `","amount":10000,"fromCountry":"USDT","webhookUrl":"http://127.0.0.1/h","webhookSecret":"s"}`,
				`{"merchantId":"` + za + `","amount":1e2,"bufferRate":"0.1","isSlowPayment":true}`}},
		{name: "POST /payments as the user", h: s.createPayment, caller: self, body: func() any { return new(createPaymentRequest) },
			seeds: []string{`{"merchantId":"` + ke + `","amount":500,"fromCountry":"Kenya","meta":{"collectionMethod":"MOMO"}}`}},
		{name: "POST /sandbox/payments/{paymentId}/deposit", h: s.sandboxDeposit, caller: tenant,
			vars: map[string]string{"paymentId": payments.payment.ID.String()}, body: func() any { return new(depositRequest) },
			seeds: []string{`{"amount":1}`, `{"amount":null}`, `{"amount":-1}`, `{"amount":1.5}`, `{"amount":"1"}`, `{"amount":9223372036854775807}`}},
	}
}

// fixtureUser is an active user with KYC details and two momo accounts.
func fixtureUser(f *testing.F) domain.User {
	id := uuid.MustParse("01937f4e-5a00-7000-8000-000000000002")
	events, err := domain.DecideCreateUser(domain.User{}, domain.CreateUser{UserID: id, Email: "ann@example.com", Name: "Ann"})
	if err != nil {
		f.Fatal(err)
	}
	u := fold(domain.User{}, domain.ApplyUser, events)
	for i, phone := range []string{"+254712345678", "+254712345679"} {
		events, err := domain.DecideAddMomoAccount(u, domain.AddMomoAccount{AccountID: uuid.MustParse(fmt.Sprintf("01937f4e-5a00-7000-8000-0000000002%02d", i)),
			PhoneNumber: phone, MobileNetwork: "MOMO", CountryCode: "KE"})
		if err != nil {
			f.Fatal(err)
		}
		u = fold(u, domain.ApplyUser, events)
	}
	return u
}

func fold[S any](s S, apply func(S, domain.Event) S, events []domain.Event) S {
	for _, e := range events {
		s = apply(s, e)
	}
	return s
}

// fixtureUsers holds one user; any other id is a user not created yet.
type fixtureUsers struct{ user domain.User }

func (f *fixtureUsers) state(id uuid.UUID) domain.User {
	if id == f.user.ID {
		return f.user
	}
	return domain.User{}
}

func (f *fixtureUsers) ExecuteUser(_ context.Context, ref domain.StreamRef, _ domain.Metadata,
	decide func(domain.User) ([]domain.Event, error)) (domain.UserSnapshot, error) {
	u := f.state(ref.ID)
	events, err := decide(u)
	if err != nil {
		return domain.UserSnapshot{}, err
	}
	return domain.UserSnapshot{User: fold(u, domain.ApplyUser, events)}, nil
}

func (f *fixtureUsers) User(_ context.Context, _, id uuid.UUID) (domain.UserSnapshot, error) {
	if id != f.user.ID {
		return domain.UserSnapshot{}, errNotFound
	}
	return domain.UserSnapshot{User: f.user}, nil
}

func (f *fixtureUsers) UserIDByEmail(context.Context, uuid.UUID, string) (uuid.UUID, error) {
	return uuid.Nil, errNotFound
}

func (f *fixtureUsers) ListUsers(context.Context, uuid.UUID, string, int, string) ([]domain.UserListItem, string, error) {
	return nil, "", nil
}

func (f *fixtureUsers) OwnerUserID(context.Context, uuid.UUID) (uuid.UUID, error) {
	return f.user.ID, nil
}

// fakeCredentials knows one API key, "key", whose secret is "secret", and
// takes every user for active.
type fakeCredentials struct{ tenantID uuid.UUID }

func (c fakeCredentials) Credential(_ context.Context, apiKey string) (domain.Credential, error) {
	if apiKey != "key" {
		return domain.Credential{}, errNotFound
	}
	return domain.Credential{APIKey: apiKey, TenantID: c.tenantID,
		SecretHash: "2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b"}, nil // SHA-256 of "secret"
}

func (fakeCredentials) PrincipalActive(context.Context, uuid.UUID, string, uuid.UUID) (bool, error) {
	return true, nil
}

func (fakeCredentials) UserStatus(context.Context, uuid.UUID, uuid.UUID) (string, error) {
	return domain.UserActive, nil
}

// fakeMerchants holds fixed merchants; a new one is decided and not kept.
type fakeMerchants struct{ byID map[uuid.UUID]domain.Merchant }

func (m *fakeMerchants) CreateMerchant(_ context.Context, _ domain.StreamRef, _ domain.Metadata,
	decide func(domain.Merchant) ([]domain.Event, error)) (domain.MerchantSnapshot, error) {
	events, err := decide(domain.Merchant{})
	if err != nil {
		return domain.MerchantSnapshot{}, err
	}
	return domain.MerchantSnapshot{Merchant: fold(domain.Merchant{}, domain.ApplyMerchant, events)}, nil
}

func (m *fakeMerchants) Merchant(_ context.Context, _, id uuid.UUID) (domain.MerchantSnapshot, error) {
	if mm, ok := m.byID[id]; ok {
		return domain.MerchantSnapshot{Merchant: mm}, nil
	}
	return domain.MerchantSnapshot{}, errNotFound
}

func (m *fakeMerchants) ListMerchants(context.Context, uuid.UUID, int, string) ([]domain.MerchantSnapshot, string, error) {
	return nil, "", nil
}

// fakePayments decides on one fixed payment and keeps nothing but the
// last payment created.
type fakePayments struct{ payment, created domain.PaymentSnapshot }

func (p *fakePayments) ExecutePayment(_ context.Context, _ domain.StreamRef, _ domain.Metadata,
	decide func(domain.Payment) ([]domain.Event, error)) (domain.PaymentSnapshot, error) {
	events, err := decide(p.payment.Payment)
	if err != nil {
		return domain.PaymentSnapshot{}, err
	}
	return domain.PaymentSnapshot{Payment: fold(p.payment.Payment, domain.ApplyPayment, events)}, nil
}

func (p *fakePayments) CreatePayment(_ context.Context, _ domain.StreamRef, _ domain.Metadata,
	decide func(domain.Payment) ([]domain.Event, error)) (domain.PaymentSnapshot, error) {
	events, err := decide(domain.Payment{})
	if err != nil {
		return domain.PaymentSnapshot{}, err
	}
	p.created = domain.PaymentSnapshot{Payment: fold(domain.Payment{}, domain.ApplyPayment, events)}
	return p.created, nil
}

func (p *fakePayments) Payment(_ context.Context, _, id uuid.UUID) (domain.PaymentSnapshot, error) {
	if id != p.payment.ID {
		return domain.PaymentSnapshot{}, errNotFound
	}
	return p.payment, nil
}

func (p *fakePayments) ListPayments(context.Context, uuid.UUID, domain.PaymentFilter, int, string) ([]domain.PaymentSnapshot, string, error) {
	return nil, "", nil
}

func (p *fakePayments) ListPaymentDocuments(context.Context, uuid.UUID, uuid.UUID, int, string) ([]domain.PaymentDocumentItem, string, error) {
	return nil, "", nil
}

func (p *fakePayments) ListWebhookAttempts(context.Context, uuid.UUID, uuid.UUID) ([]domain.WebhookAttemptItem, error) {
	return nil, nil
}

// fakeRails prices at the sandbox's prices and funds every rail.
type fakeRails struct{}

func (fakeRails) BTCPrices(context.Context) (domain.BTCPrices, error) {
	prices := domain.BTCPrices{}
	for cur, p := range map[string]int64{"ZAR": 1_800_000, "KES": 12_900_000, "NGN": 150_000_000, "GBP": 76_000, "EUR": 87_000, "USD": 100_000} {
		prices[cur] = decimal.NewFromInt(p)
	}
	return prices, nil
}

func (fakeRails) LightningInvoice(_ context.Context, _ uuid.UUID, amountSats int64, _ string, createdAt time.Time,
	expiry time.Duration) (domain.LightningInvoice, error) {
	return domain.LightningInvoice{PaymentRequest: "lnbcrt1", PaymentHash: strings.Repeat("0", 64), AmountSats: amountSats,
		ExpiresAt: createdAt.Add(expiry)}, nil
}

func (fakeRails) USDTDepositAddress(context.Context, uuid.UUID) (string, error) {
	return "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", nil
}

func (fakeRails) CollectionAccount(string) (domain.CollectionAccount, bool) {
	return domain.CollectionAccount{Name: "Ledger Collections", Number: "62000000001"}, true
}
