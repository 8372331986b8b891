package dashboard

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ledger/ledger/domain"
)

// TestFormsNeedTheCSRFToken: every POST without the token, with a forged
// one, or without the cookie is refused before its handler runs.
func TestFormsNeedTheCSRFToken(t *testing.T) {
	t.Parallel()
	created := 0
	h := newHarness(t, fakeCredentials{create: func(uuid.UUID, domain.Metadata) (string, string, error) {
		created++
		return "lk_x", "lsk_x", nil
	}})
	h.signIn()
	for _, path := range []string{"/dashboard/api-keys", "/dashboard/sign-out", "/dashboard/api-keys/lk_x/revoke", "/dashboard/sign-in"} {
		if rec := h.post(path, nil, false); rec.Code != http.StatusForbidden {
			t.Errorf("POST %s without the token: got %d, want 403", path, rec.Code)
		}
		if rec := h.post(path, url.Values{"csrf": {"forged-forged-forged-forged-forged-forged-forged"}}, false); rec.Code != http.StatusForbidden {
			t.Errorf("POST %s with a forged token: got %d, want 403", path, rec.Code)
		}
	}
	token := h.csrfToken("/dashboard/api-keys")
	session := h.cookies[sessionCookie]
	delete(h.cookies, sessionCookie)
	if rec := h.post("/dashboard/api-keys", url.Values{"csrf": {token}}, false); rec.Code != http.StatusSeeOther ||
		rec.Header().Get("Location") != "/dashboard/sign-in" {
		t.Errorf("POST with the token but not the session: got %d to %q, want 303 to sign-in", rec.Code, rec.Header().Get("Location"))
	}
	h.cookies[sessionCookie] = session
	if created != 0 {
		t.Errorf("keys created by refused posts: got %d, want 0", created)
	}
	if rec := h.post("/dashboard/api-keys", nil, true); rec.Code != http.StatusSeeOther || created != 1 {
		t.Errorf("POST with the token: got %d and %d keys, want 303 and 1", rec.Code, created)
	}
}

// TestSlowFormIsCutOff: a form body trickled slower than FormReadTimeout
// is answered (refused) instead of holding the handler.
func TestSlowFormIsCutOff(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fakeCredentials{})
	h.d.cfg.FormReadTimeout = 200 * time.Millisecond
	srv := httptest.NewServer(h.d)
	t.Cleanup(srv.Close)
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /dashboard/sign-in HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n"+
		"Content-Length: 1000\r\n\r\nemail=a")
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("a trickled form: got %v, want an answer once the read deadline passed", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("a trickled form: got %d, want 403 (nothing usable arrived)", resp.StatusCode)
	}
}
