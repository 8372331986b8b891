package dashboard

import (
	"net/http"
	"net/url"
	"testing"

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
	token := h.cookies[csrfCookie].Value
	delete(h.cookies, csrfCookie)
	if rec := h.post("/dashboard/api-keys", url.Values{"csrf": {token}}, false); rec.Code != http.StatusForbidden {
		t.Errorf("POST with the token but not the cookie: got %d, want 403", rec.Code)
	}
	if created != 0 {
		t.Errorf("keys created by refused posts: got %d, want 0", created)
	}
	if rec := h.post("/dashboard/api-keys", nil, true); rec.Code != http.StatusSeeOther || created != 1 {
		t.Errorf("POST with the token: got %d and %d keys, want 303 and 1", rec.Code, created)
	}
}
