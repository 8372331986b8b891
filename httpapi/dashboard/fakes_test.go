package dashboard

import (
	"context"
	"encoding/base64"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/domain"
)

// fakeAccounts keeps dashboard users, their sessions and sign-in failures
// in memory, deciding commands with the real domain functions.
type fakeAccounts struct {
	mu       sync.Mutex
	users    map[uuid.UUID]domain.DashboardUser
	tenants  map[uuid.UUID]uuid.UUID // user -> tenant
	sessions map[string]domain.DashboardSession
	failures map[string][]signInFailure // by address
	events   []recorded
}

// recorded is an event a command appended, with its metadata.
type recorded struct {
	ref   domain.StreamRef
	meta  domain.Metadata
	event domain.Event
}

func newFakeAccounts() *fakeAccounts {
	return &fakeAccounts{users: map[uuid.UUID]domain.DashboardUser{}, tenants: map[uuid.UUID]uuid.UUID{},
		sessions: map[string]domain.DashboardSession{}, failures: map[string][]signInFailure{}}
}

// add creates a dashboard user of tenant with a password (none when empty)
// and an unused set-password token when setupToken is not empty.
func (f *fakeAccounts) add(tenant uuid.UUID, email, password, setupToken string) uuid.UUID {
	id := uuid.New()
	u := domain.DashboardUser{ID: id, Email: email, SetupExpiresAt: time.Now().Add(time.Hour)}
	if password != "" {
		u.PasswordHash = hashPassword(password)
	}
	if setupToken != "" {
		u.SetupTokenHash = tokenHash(setupToken)
	}
	f.users[id], f.tenants[id] = u, tenant
	return id
}

func (f *fakeAccounts) account(match func(domain.DashboardUser) bool) (domain.DashboardAccount, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for id, u := range f.users {
		if match(u) {
			return domain.DashboardAccount{ID: id, TenantID: f.tenants[id], Email: u.Email, PasswordHash: u.PasswordHash}, nil
		}
	}
	return domain.DashboardAccount{}, domain.Errorf(domain.NotFound, "not_found", "not found")
}

func (f *fakeAccounts) DashboardAccountByEmail(_ context.Context, email string) (domain.DashboardAccount, error) {
	return f.account(func(u domain.DashboardUser) bool { return u.Email == email })
}

func (f *fakeAccounts) DashboardAccountBySetupToken(_ context.Context, hash string) (domain.DashboardAccount, error) {
	return f.account(func(u domain.DashboardUser) bool { return u.SetupTokenHash != "" && u.SetupTokenHash == hash })
}

func (f *fakeAccounts) DashboardSession(_ context.Context, hash string, now time.Time) (domain.DashboardSession, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.sessions[hash]
	if !ok || !now.Before(s.ExpiresAt) {
		return s, domain.Errorf(domain.NotFound, "not_found", "not found")
	}
	return s, nil
}

// signInFailure is a failed sign-in the fake keeps: where from, when.
type signInFailure struct {
	client string
	at     time.Time
}

func (f *fakeAccounts) ReserveSignInAttempt(_ context.Context, email, client string, at time.Time, lockout domain.SignInLockout) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var n domain.SignInFailures
	for address, failures := range f.failures {
		for _, failed := range failures {
			if !failed.at.After(lockout.Since) {
				continue
			}
			if failed.client == client {
				n.FromClientAllAddresses++
			}
			if address == email {
				n.FromAnywhere++
				if failed.client == client {
					n.FromClient++
				}
			}
		}
	}
	if !lockout.Admits(n) {
		return false, nil
	}
	f.failures[email] = append(f.failures[email], signInFailure{client, at})
	return true, nil
}

func (f *fakeAccounts) ClearSignInFailures(_ context.Context, email, client string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failures[email] = slices.DeleteFunc(f.failures[email], func(failed signInFailure) bool { return failed.client == client })
	return nil
}

func (f *fakeAccounts) SignInDashboardUser(ctx context.Context, tenantID, userID uuid.UUID, sessionHash string,
	expiresAt time.Time, meta domain.Metadata) error {
	return f.execute(tenantID, userID, meta, func(u domain.DashboardUser) ([]domain.Event, error) {
		return domain.DecideDashboardSignIn(u, sessionHash, expiresAt)
	})
}

func (f *fakeAccounts) SignOutDashboardUser(ctx context.Context, tenantID, userID uuid.UUID, sessionHash string, meta domain.Metadata) error {
	return f.execute(tenantID, userID, meta, func(u domain.DashboardUser) ([]domain.Event, error) {
		return domain.DecideDashboardSignOut(u, sessionHash)
	})
}

func (f *fakeAccounts) SetDashboardPassword(ctx context.Context, tenantID, userID uuid.UUID, setupTokenHash, passwordHash string,
	now time.Time, meta domain.Metadata) error {
	return f.execute(tenantID, userID, meta, func(u domain.DashboardUser) ([]domain.Event, error) {
		return domain.DecideSetDashboardPassword(u, setupTokenHash, passwordHash, now)
	})
}

// execute decides on the user's state and applies the events as the
// projection would: sessions open on signed_in, close on signed_out.
func (f *fakeAccounts) execute(tenantID, userID uuid.UUID, meta domain.Metadata,
	decide func(domain.DashboardUser) ([]domain.Event, error)) error {
	ref := domain.StreamRef{TenantID: tenantID, Type: "dashboard_user", ID: userID}
	f.mu.Lock()
	defer f.mu.Unlock()
	u := f.users[ref.ID]
	if f.tenants[ref.ID] != ref.TenantID {
		u = domain.DashboardUser{}
	}
	events, err := decide(u)
	if err != nil {
		return err
	}
	for _, e := range events {
		u = domain.ApplyDashboardUser(u, e)
		f.events = append(f.events, recorded{ref: ref, meta: meta, event: e})
		switch e := e.(type) {
		case domain.DashboardSignedIn:
			f.sessions[e.SessionHash] = domain.DashboardSession{UserID: ref.ID, TenantID: ref.TenantID, Email: u.Email, ExpiresAt: e.ExpiresAt}
		case domain.DashboardSignedOut:
			delete(f.sessions, e.SessionHash)
		case domain.DashboardPasswordSet:
			for hash, s := range f.sessions {
				if s.UserID == ref.ID {
					delete(f.sessions, hash)
				}
			}
		}
	}
	f.users[ref.ID] = u
	return nil
}

// fakeCredentials has func fields for the calls a test cares about.
type fakeCredentials struct {
	apiKeys func(tenantID uuid.UUID) ([]domain.APIKeyItem, error)
	create  func(tenantID uuid.UUID, meta domain.Metadata) (string, string, error)
	revoke  func(tenantID uuid.UUID, apiKey string, meta domain.Metadata) error
}

func (f fakeCredentials) APIKeys(_ context.Context, tenantID uuid.UUID) ([]domain.APIKeyItem, error) {
	return f.apiKeys(tenantID)
}

func (f fakeCredentials) CreateAPIKey(_ context.Context, tenantID uuid.UUID, meta domain.Metadata) (string, string, error) {
	return f.create(tenantID, meta)
}

func (f fakeCredentials) RevokeAPIKey(_ context.Context, tenantID uuid.UUID, apiKey string, meta domain.Metadata) error {
	return f.revoke(tenantID, apiKey, meta)
}

// fakePayments serves the payments of one tenant; any other tenant has
// none. It is safe for a test to change while a live stream reads it.
type fakePayments struct {
	mu       sync.Mutex
	tenant   uuid.UUID
	payments map[uuid.UUID]domain.PaymentSnapshot
	filter   domain.PaymentFilter // the last list's filter
}

func (f *fakePayments) put(p domain.PaymentSnapshot) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.payments[p.ID] = p
}

// moveTo gives every payment to another tenant.
func (f *fakePayments) moveTo(tenant uuid.UUID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tenant = tenant
}

func (f *fakePayments) lastFilter() domain.PaymentFilter {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.filter
}

var errFakeNotFound = domain.Errorf(domain.NotFound, "not_found", "not found")

func (f *fakePayments) Payment(_ context.Context, tenantID, id uuid.UUID) (domain.PaymentSnapshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, ok := f.payments[id]
	if !ok || tenantID != f.tenant {
		return p, errFakeNotFound
	}
	return p, nil
}

func (f *fakePayments) ListPayments(_ context.Context, tenantID uuid.UUID, filter domain.PaymentFilter, _ int, _ string) ([]domain.PaymentSnapshot, string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.filter = filter
	var out []domain.PaymentSnapshot
	for _, p := range f.payments {
		if tenantID == f.tenant {
			out = append(out, p)
		}
	}
	return out, "", nil
}

func (f *fakePayments) ListPaymentDocuments(context.Context, uuid.UUID, uuid.UUID, int, string) ([]domain.PaymentDocumentItem, string, error) {
	return nil, "", nil
}

func (f *fakePayments) ListWebhookAttempts(context.Context, uuid.UUID, uuid.UUID) ([]domain.WebhookAttemptItem, error) {
	return nil, nil
}

func (f *fakePayments) ListMerchants(context.Context, uuid.UUID, int, string) ([]domain.MerchantSnapshot, string, error) {
	return nil, "", nil
}

func (f *fakePayments) Merchant(context.Context, uuid.UUID, uuid.UUID) (domain.MerchantSnapshot, error) {
	return domain.MerchantSnapshot{}, errFakeNotFound
}

// tenantLog records the tenant of every read, to check reads are scoped
// to the session's tenant.
type tenantLog struct {
	mu      sync.Mutex
	tenants []uuid.UUID
}

func (l *tenantLog) saw(tenant uuid.UUID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.tenants = append(l.tenants, tenant)
}

func (l *tenantLog) all() []uuid.UUID {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]uuid.UUID(nil), l.tenants...)
}

// fakeEvents has no events; it records the tenants asked about.
type fakeEvents struct{ *tenantLog }

func (f fakeEvents) TenantEvents(_ context.Context, tenant uuid.UUID, _ int64, _ int, _ string) ([]domain.Record, error) {
	f.saw(tenant)
	return nil, nil
}

func (f fakeEvents) StreamHistory(_ context.Context, ref domain.StreamRef) ([]domain.Record, error) {
	f.saw(ref.TenantID)
	return nil, nil
}

// fakeUsers has one user per tenant id it is asked about, named after it.
type fakeUsers struct{ *tenantLog }

func (f fakeUsers) User(_ context.Context, tenant, id uuid.UUID) (domain.UserSnapshot, error) {
	f.saw(tenant)
	return domain.UserSnapshot{User: domain.User{ID: id, Email: "ann@example.com", Name: "Ann", Status: domain.UserActive}}, nil
}

func (f fakeUsers) SearchUsers(_ context.Context, tenant uuid.UUID, _ string, _ int, _ string) ([]domain.UserListItem, string, error) {
	f.saw(tenant)
	return nil, "", nil
}

func (f fakeUsers) ListKYCDocuments(_ context.Context, tenant, _ uuid.UUID, _ int, _ string) ([]domain.KYCDocumentItem, string, error) {
	f.saw(tenant)
	return nil, "", nil
}

// fakeLedger has no postings.
type fakeLedger struct{ *tenantLog }

func (f fakeLedger) TrialBalance(_ context.Context, tenant uuid.UUID, _ time.Time) ([]domain.AccountBalance, error) {
	f.saw(tenant)
	return nil, nil
}

// ListTenantUnmatched returns fakeUnmatched, whatever the tenant.
func (f fakeLedger) ListTenantUnmatched(_ context.Context, tenant uuid.UUID, _ int) ([]domain.UnmatchedFunds, error) {
	f.saw(tenant)
	return fakeUnmatched, nil
}

var (
	fakeUnmatchedPayment = uuid.MustParse("01937f4e-5a00-7000-8000-00000000abcd")
	fakeUnmatched        = []domain.UnmatchedFunds{
		{ID: uuid.New(), Status: domain.UnmatchedOpen, Reason: domain.UnmatchedWrongCurrency, Amount: decimal.NewFromInt(12),
			Currency: "GBP", References: []string{"LDGABCDEFGHIJKL"}, PaymentID: &fakeUnmatchedPayment,
			ReceivedAt: time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC)},
		{ID: uuid.New(), Status: domain.UnmatchedAssigned, Reason: domain.UnmatchedOverpaid, Amount: decimal.RequireFromString("5.5"),
			Currency: "EUR", PaymentID: &fakeUnmatchedPayment, AssignedTo: &fakeUnmatchedPayment, ResolvedBy: "operator:ann",
			ReceivedAt: time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)},
	}
)

// fakeLinks signs nothing: it names the document.
type fakeLinks struct{}

func (fakeLinks) Sign(_ context.Context, id uuid.UUID) (string, error) {
	return "https://ledger.example/documents/" + id.String() + "?signature=x", nil
}

// fakeFeed hands out one channel per subscription and remembers the tenant.
type fakeFeed struct {
	mu      sync.Mutex
	tenants []uuid.UUID
	ch      chan uuid.UUID
}

func (f *fakeFeed) PaymentChanges(_ context.Context, tenantID uuid.UUID) (<-chan uuid.UUID, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tenants = append(f.tenants, tenantID)
	return f.ch, nil
}

// harness is a dashboard over fakes, with a browser-like cookie jar.
type harness struct {
	t        *testing.T
	d        *Dashboard
	accounts *fakeAccounts
	payments *fakePayments
	feed     *fakeFeed
	breaks   *fakeBreaks
	runs     *fakeRuns
	reads    *tenantLog // tenants the users, events and ledger reads were asked about
	tenant   uuid.UUID
	now      time.Time
	cookies  map[string]*http.Cookie
	from     string // the requests' RemoteAddr; httptest's when empty
}

const (
	testEmail    = "ops@acme.example"
	testPassword = "correct horse battery"
)

func newHarness(t *testing.T, creds fakeCredentials) *harness {
	t.Helper()
	h := &harness{t: t, accounts: newFakeAccounts(), tenant: uuid.New(), now: time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC),
		feed: &fakeFeed{ch: make(chan uuid.UUID, 4)}, reads: &tenantLog{}, cookies: map[string]*http.Cookie{}}
	h.payments = &fakePayments{tenant: h.tenant, payments: map[uuid.UUID]domain.PaymentSnapshot{}}
	h.breaks = newFakeBreaks()
	h.runs = &fakeRuns{}
	h.accounts.add(h.tenant, testEmail, testPassword, "")
	h.d = New(Config{SecureCookies: true}, Deps{Log: slog.New(slog.DiscardHandler), Accounts: h.accounts,
		Credentials: creds, Payments: h.payments, Users: fakeUsers{h.reads}, Events: fakeEvents{h.reads},
		Ledger: fakeLedger{h.reads}, Documents: fakeLinks{}, Feed: h.feed, Secrets: fakeSecrets{}, Keys: fakeKeys{}, Breaks: h.breaks,
		Runs: h.runs})
	h.d.now = func() time.Time { return h.now }
	return h
}

// do sends a request with the jar's cookies and keeps the ones set, by
// their names without the __Host- prefix.
func (h *harness) do(req *http.Request) *httptest.ResponseRecorder {
	h.t.Helper()
	for _, c := range h.cookies {
		req.AddCookie(c)
	}
	if h.from != "" {
		req.RemoteAddr = h.from
	}
	rec := httptest.NewRecorder()
	h.d.ServeHTTP(rec, req)
	for _, c := range rec.Result().Cookies() {
		if c.MaxAge < 0 {
			delete(h.cookies, strings.TrimPrefix(c.Name, "__Host-"))
		} else {
			h.cookies[strings.TrimPrefix(c.Name, "__Host-")] = c
		}
	}
	return rec
}

func (h *harness) get(path string) *httptest.ResponseRecorder {
	h.t.Helper()
	return h.do(httptest.NewRequest(http.MethodGet, path, nil))
}

// post sends a form; csrf adds the CSRF token its page would carry.
func (h *harness) post(path string, form url.Values, csrf bool) *httptest.ResponseRecorder {
	h.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	if csrf {
		form.Set("csrf", h.csrfToken(path))
	}
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return h.do(req)
}

// signIn signs in with the test user's password and fails t otherwise.
func (h *harness) signIn() {
	h.t.Helper()
	rec := h.post("/dashboard/sign-in", url.Values{"email": {testEmail}, "password": {testPassword}}, true)
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/dashboard/payments" {
		h.t.Fatalf("sign in: got %d to %q, want 303 to /dashboard/payments (body %s)", rec.Code, rec.Header().Get("Location"), body(rec))
	}
}

func body(rec *httptest.ResponseRecorder) string { return rec.Body.String() }

// fakeSecrets seals as sealing.Sealer does, in form only: a prefix and
// base64, so a sealed value never holds the secret as it is. A value
// without the prefix (stored before sealing) opens as it is.
type fakeSecrets struct{}

const fakeSealed = "sealed:test:"

func (fakeSecrets) Seal(_ context.Context, secret string) (string, error) {
	return fakeSealed + base64.StdEncoding.EncodeToString([]byte(secret)), nil
}

func (fakeSecrets) Open(_ context.Context, stored string) (string, error) {
	b64, ok := strings.CutPrefix(stored, fakeSealed)
	if !ok {
		return stored, nil
	}
	b, err := base64.StdEncoding.DecodeString(b64)
	return string(b), err
}

// csrfToken is the token the page of a form posting to path carries: bound
// to the session behind sign-in, to the pre-session cookie before (which a
// page sets when the jar has none).
func (h *harness) csrfToken(path string) string {
	h.t.Helper()
	kind, value := "session", ""
	if c := h.cookies[sessionCookie]; c != nil {
		value = c.Value
	}
	if path == "/dashboard/sign-in" || strings.HasPrefix(path, "/dashboard/set-password") {
		if h.cookies[preSessionCookie] == nil {
			h.get("/dashboard/sign-in")
		}
		kind, value = "pre-session", h.cookies[preSessionCookie].Value
	}
	token, err := h.d.csrfFor(context.Background(), kind, value)
	if err != nil {
		h.t.Fatal(err)
	}
	return token
}

// fakeKeys gives every purpose the same fixed key.
type fakeKeys struct{}

func (fakeKeys) Key(context.Context, string) ([]byte, error) {
	return []byte("0123456789abcdef0123456789abcdef"), nil
}
