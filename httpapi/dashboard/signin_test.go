package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ledger/ledger/domain"
)

// TestSignInSetsAServerSideSession: a right password appends signed_in
// with the hash of a new random session id, whose cookie is __Host-,
// HttpOnly, SameSite=Strict and Secure; the pre-session cookie is renewed.
func TestSignInSetsAServerSideSession(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fakeCredentials{})
	h.get("/dashboard/sign-in")
	before := h.cookies[preSessionCookie].Value
	h.signIn()
	c := h.cookies[sessionCookie]
	if c == nil || len(c.Value) < 43 {
		t.Fatalf("session cookie: got %v, want a random id", c)
	}
	if !c.HttpOnly || !c.Secure || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || c.Name != "__Host-"+sessionCookie {
		t.Errorf("session cookie: got %+v, want __Host-, HttpOnly, Secure, SameSite=Strict, path /", c)
	}
	if h.cookies[preSessionCookie].Value == before {
		t.Errorf("pre-session cookie: got the pre-sign-in one, want a new one")
	}
	last := h.accounts.events[len(h.accounts.events)-1]
	in, ok := last.event.(domain.DashboardSignedIn)
	if !ok || in.SessionHash != tokenHash(c.Value) || in.SessionHash == c.Value {
		t.Fatalf("event: got %#v, want signed_in with the session id's hash, not the id", last.event)
	}
	if want := "dashboard_user:" + last.ref.ID.String(); last.meta.Actor != want {
		t.Errorf("actor: got %q, want %q", last.meta.Actor, want)
	}
	if !in.ExpiresAt.Equal(h.now.Add(12 * time.Hour)) {
		t.Errorf("expiry: got %v, want 12h after sign-in", in.ExpiresAt)
	}
	if rec := h.get("/dashboard/payments"); rec.Code != http.StatusOK {
		t.Errorf("GET /dashboard/payments signed in: got %d, want 200", rec.Code)
	}
}

func TestSignInRefusesWrongCredentialsAlike(t *testing.T) {
	t.Parallel()
	for _, form := range []url.Values{
		{"email": {testEmail}, "password": {"wrong password!"}},
		{"email": {"nobody@acme.example"}, "password": {testPassword}},
		{"email": {"not an email"}, "password": {testPassword}},
	} {
		h := newHarness(t, fakeCredentials{})
		rec := h.post("/dashboard/sign-in", form, true)
		if rec.Code != http.StatusUnauthorized || !strings.Contains(body(rec), wrongCredentials) {
			t.Errorf("%v: got %d, want 401 saying %q", form, rec.Code, wrongCredentials)
		}
		if h.cookies[sessionCookie] != nil || len(h.accounts.sessions) != 0 {
			t.Errorf("%v: got a session, want none", form)
		}
	}
}

// TestSignInLocksOut: after five failures in 15 minutes from one client
// even the right password is refused from it, until the window has passed,
// and a success clears them. Another client signs in meanwhile; its success
// clears its own attempt, not the first client's failures, which still
// lock that client out.
func TestSignInLocksOut(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fakeCredentials{})
	h.from = "192.0.2.1:40000"
	for range lockoutFailures {
		h.post("/dashboard/sign-in", url.Values{"email": {testEmail}, "password": {"wrong password!"}}, true)
	}
	rec := h.post("/dashboard/sign-in", url.Values{"email": {testEmail}, "password": {testPassword}}, true)
	if rec.Code != http.StatusTooManyRequests || h.cookies[sessionCookie] != nil {
		t.Fatalf("right password while locked out: got %d, want 429 and no session", rec.Code)
	}
	h.now = h.now.Add(lockoutWindow + time.Second)
	h.signIn()
	if n := len(h.accounts.failures[testEmail]); n != 0 {
		t.Errorf("failures after a sign-in: got %d, want them cleared", n)
	}

	other := newHarness(t, fakeCredentials{})
	other.from = "192.0.2.1:40000"
	for range lockoutFailures {
		other.post("/dashboard/sign-in", url.Values{"email": {testEmail}, "password": {"wrong password!"}}, true)
	}
	other.from = "198.51.100.7:50000"
	other.signIn()
	if n := len(other.accounts.failures[testEmail]); n != lockoutFailures {
		t.Errorf("failures after another client's sign-in: got %d, want the first client's %d", n, lockoutFailures)
	}
	other.from = "192.0.2.1:40000"
	delete(other.cookies, sessionCookie)
	if rec := other.post("/dashboard/sign-in", url.Values{"email": {testEmail}, "password": {testPassword}}, true); rec.Code != http.StatusTooManyRequests {
		t.Errorf("the first client after another's sign-in: got %d, want 429", rec.Code)
	}
}

// TestSignInLocksOutEveryClientPastTheAddressCeiling: failures spread over
// clients (one IPv6 /64 being one client) lock the address out for every
// client once they reach lockoutAddressFailures.
func TestSignInLocksOutEveryClientPastTheAddressCeiling(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fakeCredentials{})
	for i := range lockoutAddressFailures {
		h.from = fmt.Sprintf("192.0.2.%d:40000", i/lockoutFailures)
		rec := h.post("/dashboard/sign-in", url.Values{"email": {testEmail}, "password": {"wrong password!"}}, true)
		if rec.Code != http.StatusUnauthorized {
			t.Fatalf("failure %d from %s: got %d, want 401", i+1, h.from, rec.Code)
		}
	}
	h.from = "[2001:db8::1]:40000"
	rec := h.post("/dashboard/sign-in", url.Values{"email": {testEmail}, "password": {testPassword}}, true)
	if rec.Code != http.StatusTooManyRequests || h.cookies[sessionCookie] != nil {
		t.Fatalf("right password from a new client past the ceiling: got %d, want 429 and no session", rec.Code)
	}
}

func TestSignOutEndsTheSession(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fakeCredentials{})
	h.signIn()
	session := h.cookies[sessionCookie]
	if rec := h.post("/dashboard/sign-out", nil, true); rec.Code != http.StatusSeeOther {
		t.Fatalf("sign out: got %d, want 303", rec.Code)
	}
	if _, ok := h.accounts.events[len(h.accounts.events)-1].event.(domain.DashboardSignedOut); !ok {
		t.Errorf("last event: got %#v, want signed_out", h.accounts.events[len(h.accounts.events)-1].event)
	}
	h.cookies[sessionCookie] = session // the old cookie, replayed
	if rec := h.get("/dashboard/payments"); rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/dashboard/sign-in" {
		t.Errorf("old session after sign-out: got %d to %q, want 303 to the sign-in page", rec.Code, rec.Header().Get("Location"))
	}
}

func TestPagesNeedASession(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fakeCredentials{})
	for _, path := range []string{"/dashboard/payments", "/dashboard/api-keys", "/dashboard/users", "/dashboard/events", "/dashboard/balances", "/dashboard/unmatched"} {
		if rec := h.get(path); rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/dashboard/sign-in" {
			t.Errorf("GET %s signed out: got %d to %q, want 303 to the sign-in page", path, rec.Code, rec.Header().Get("Location"))
		}
	}
	if rec := h.get("/dashboard/live"); rec.Code != http.StatusUnauthorized {
		t.Errorf("GET /dashboard/live signed out: got %d, want 401", rec.Code)
	}
}

func TestSetPassword(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fakeCredentials{})
	id := h.accounts.add(h.tenant, "new@acme.example", "", "the-token")
	if rec := h.get("/dashboard/set-password?token=wrong"); rec.Code != http.StatusNotFound {
		t.Errorf("wrong token: got %d, want 404", rec.Code)
	}
	if rec := h.get("/dashboard/set-password?token=the-token"); rec.Code != http.StatusOK || !strings.Contains(body(rec), "new@acme.example") {
		t.Fatalf("the link: got %d, want the form for new@acme.example", rec.Code)
	}
	for _, form := range []url.Values{
		{"token": {"the-token"}, "password": {"short"}, "confirm": {"short"}},
		{"token": {"the-token"}, "password": {"a long enough one"}, "confirm": {"a different one!!"}},
	} {
		if rec := h.post("/dashboard/set-password", form, true); rec.Code != http.StatusBadRequest {
			t.Errorf("%v: got %d, want 400", form, rec.Code)
		}
	}
	rec := h.post("/dashboard/set-password", url.Values{"token": {"the-token"}, "password": {"a long enough one"},
		"confirm": {"a long enough one"}}, true)
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("set password: got %d, want 303 (%s)", rec.Code, body(rec))
	}
	// The event keeps the hash sealed: readers of the events (GET /events,
	// the events page) cannot guess at it offline.
	u := h.accounts.users[id]
	hash, err := fakeSecrets{}.Open(context.Background(), u.PasswordHash)
	if !strings.HasPrefix(u.PasswordHash, fakeSealed) || err != nil || !checkPassword(hash, "a long enough one") ||
		u.SetupTokenHash != "" {
		t.Errorf("after set password: got %+v, want the password's hash sealed and the link used up", u)
	}
	// And the password signs in, through the sealed hash.
	rec = h.post("/dashboard/sign-in", url.Values{"email": {"new@acme.example"}, "password": {"a long enough one"}}, true)
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/dashboard/payments" {
		t.Errorf("sign in with the new password: got %d to %q, want 303 to /dashboard/payments", rec.Code, rec.Header().Get("Location"))
	}
	if rec := h.get("/dashboard/set-password?token=the-token"); rec.Code != http.StatusNotFound {
		t.Errorf("the link again: got %d, want 404", rec.Code)
	}
}

// TestSignInLocksOutAClientTryingManyAddresses: one client failing at
// lockoutClientFailures addresses, once each, is refused at the next
// address too, even with the right password there, before any password
// is checked; another client signs in to it.
func TestSignInLocksOutAClientTryingManyAddresses(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fakeCredentials{})
	h.from = "192.0.2.1:40000"
	for i := range lockoutClientFailures {
		email := fmt.Sprintf("guess%d@example.com", i)
		if rec := h.post("/dashboard/sign-in", url.Values{"email": {email}, "password": {"wrong password!"}}, true); rec.Code != http.StatusUnauthorized {
			t.Fatalf("failure %d at %s: got %d, want 401", i+1, email, rec.Code)
		}
	}
	rec := h.post("/dashboard/sign-in", url.Values{"email": {testEmail}, "password": {testPassword}}, true)
	if rec.Code != http.StatusTooManyRequests || h.cookies[sessionCookie] != nil {
		t.Fatalf("right password at a new address past the client's ceiling: got %d, want 429 and no session", rec.Code)
	}
	h.from = "198.51.100.7:50000"
	h.signIn()
}
