package dashboard

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/ledger/ledger/domain"
)

// browser talks to a real server as one browser: its own cookies, no
// redirects followed.
type browser struct {
	t       *testing.T
	url     string
	cookies []*http.Cookie
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func (b *browser) send(method, path string, form url.Values) (*http.Response, string) {
	b.t.Helper()
	req, err := http.NewRequest(method, b.url+path, strings.NewReader(form.Encode()))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for _, c := range b.cookies {
		req.AddCookie(c)
	}
	client := http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, set := range resp.Cookies() {
		b.cookies = slices.DeleteFunc(b.cookies, func(c *http.Cookie) bool { return c.Name == set.Name })
		if set.MaxAge >= 0 {
			b.cookies = append(b.cookies, set)
		}
	}
	return resp, string(body)
}

// token is the CSRF token of the page at path.
func (b *browser) token(path string) string {
	b.t.Helper()
	resp, body := b.send(http.MethodGet, path, nil)
	m := csrfField.FindStringSubmatch(body)
	if resp.StatusCode != http.StatusOK || m == nil {
		b.t.Fatalf("GET %s: got %d without a CSRF field", path, resp.StatusCode)
	}
	return m[1]
}

func (b *browser) signIn(email, password string) {
	b.t.Helper()
	token := b.token("/dashboard/sign-in")
	resp, _ := b.send(http.MethodPost, "/dashboard/sign-in", url.Values{"email": {email}, "password": {password}, "csrf": {token}})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/dashboard/payments" {
		b.t.Fatalf("sign in as %s: got %d to %q", email, resp.StatusCode, resp.Header.Get("Location"))
	}
}

// TestCSRFTokenIsBoundToTheSession: a signed-in form is accepted with its
// page's token only: not with a cookie and field an attacker chose
// together (a cookie a sibling subdomain planted), nor with the token of
// the attacker's own session.
func TestCSRFTokenIsBoundToTheSession(t *testing.T) {
	t.Parallel()
	created := 0
	h := newHarness(t, fakeCredentials{create: func(uuid.UUID, domain.Metadata) (string, string, error) {
		created++
		return "lk_x", "lsk_x", nil
	}})
	h.accounts.add(h.tenant, "mallory@acme.example", testPassword, "")
	srv := httptest.NewServer(h.d)
	t.Cleanup(srv.Close)
	victim, mallory := &browser{t: t, url: srv.URL}, &browser{t: t, url: srv.URL}
	victim.signIn(testEmail, testPassword)
	mallory.signIn("mallory@acme.example", testPassword)
	malloryToken := mallory.token("/dashboard/payments")

	const chosen = "chosen-by-the-attacker-chosen-by-the-attacker"
	planted := []*http.Cookie{{Name: "ledger_csrf", Value: chosen}, {Name: "__Host-ledger_csrf", Value: chosen}}
	for _, tc := range []struct {
		name  string
		plant []*http.Cookie
		token string
	}{
		{"a planted cookie and field", planted, chosen},
		{"another session's token", nil, malloryToken},
	} {
		b := &browser{t: t, url: srv.URL, cookies: append(slices.Clone(victim.cookies), tc.plant...)}
		if resp, _ := b.send(http.MethodPost, "/dashboard/api-keys", url.Values{"csrf": {tc.token}}); resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s: got %d, want 403", tc.name, resp.StatusCode)
		}
	}
	if created != 0 {
		t.Fatalf("keys created by refused posts: got %d, want 0", created)
	}
	token := victim.token("/dashboard/payments")
	if resp, _ := victim.send(http.MethodPost, "/dashboard/api-keys", url.Values{"csrf": {token}}); resp.StatusCode != http.StatusSeeOther || created != 1 {
		t.Errorf("the page's own token: got %d and %d keys, want 303 and 1", resp.StatusCode, created)
	}
}

// TestSignInCSRFIsBoundToAPreSessionCookie: before there is a session, the
// sign-in form's token is made by the server for the pre-session cookie it
// set: a cookie and field chosen together, or a token for another cookie,
// sign nobody in.
func TestSignInCSRFIsBoundToAPreSessionCookie(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fakeCredentials{})
	srv := httptest.NewServer(h.d)
	t.Cleanup(srv.Close)
	mallory := &browser{t: t, url: srv.URL}
	malloryToken := mallory.token("/dashboard/sign-in")

	const chosen = "chosen-by-the-attacker-chosen-by-the-attacker"
	creds := func(token string) url.Values {
		return url.Values{"email": {testEmail}, "password": {testPassword}, "csrf": {token}}
	}
	for _, tc := range []struct {
		name  string
		plant []*http.Cookie
		token string
	}{
		{"a planted CSRF cookie and field", []*http.Cookie{{Name: "ledger_csrf", Value: chosen}, {Name: "__Host-ledger_csrf", Value: chosen}}, chosen},
		{"a planted pre-session cookie and field", []*http.Cookie{{Name: "__Host-ledger_presession", Value: chosen}}, chosen},
		{"another pre-session's token", []*http.Cookie{{Name: "__Host-ledger_presession", Value: chosen}}, malloryToken},
	} {
		b := &browser{t: t, url: srv.URL, cookies: tc.plant}
		resp, _ := b.send(http.MethodPost, "/dashboard/sign-in", creds(tc.token))
		if resp.StatusCode != http.StatusForbidden || len(h.accounts.sessions) != 0 {
			t.Errorf("%s: got %d and %d sessions, want 403 and none", tc.name, resp.StatusCode, len(h.accounts.sessions))
		}
	}
	if resp, _ := mallory.send(http.MethodPost, "/dashboard/sign-in", creds(malloryToken)); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("the page's own token: got %d, want 303", resp.StatusCode)
	}
}

// TestCookiesAreHostPrefixedOverHTTPS: served over https the dashboard's
// cookies are __Host- (Secure, Path=/, no Domain: no sibling subdomain can
// set them); on a plain-http loopback they keep their plain names.
func TestCookiesAreHostPrefixedOverHTTPS(t *testing.T) {
	t.Parallel()
	for _, secure := range []bool{true, false} {
		h := newHarness(t, fakeCredentials{})
		h.d.cfg.SecureCookies = secure
		srv := httptest.NewServer(h.d)
		t.Cleanup(srv.Close)
		b := &browser{t: t, url: srv.URL}
		b.signIn(testEmail, testPassword)
		names := map[string]bool{}
		for _, c := range b.cookies {
			names[c.Name] = true
			if want := strings.HasPrefix(c.Name, "__Host-"); want != secure || c.Secure != secure || c.Domain != "" ||
				secure && c.Path != "/" {
				t.Errorf("secure=%v: cookie %s: got Secure=%v Path=%q Domain=%q", secure, c.Name, c.Secure, c.Path, c.Domain)
			}
		}
		prefix := map[bool]string{true: "__Host-", false: ""}[secure]
		if !names[prefix+sessionCookie] || !names[prefix+preSessionCookie] {
			t.Errorf("secure=%v: cookies %v, want %s and %s", secure, names, prefix+sessionCookie, prefix+preSessionCookie)
		}
	}
}
