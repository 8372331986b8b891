package dashboard

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ledger/ledger/domain"
)

// TestNewKeySecretShownOnce: after a create, the API keys page shows the
// secret once; the next view does not, and the flash cookie opens only
// with the session that asked for the key.
func TestNewKeySecretShownOnce(t *testing.T) {
	t.Parallel()
	var gotTenant uuid.UUID
	var gotMeta domain.Metadata
	h := newHarness(t, fakeCredentials{
		create: func(tenant uuid.UUID, meta domain.Metadata) (string, string, error) {
			gotTenant, gotMeta = tenant, meta
			return "lk_new", "lsk_the_secret", nil
		},
		apiKeys: func(uuid.UUID) ([]domain.APIKeyItem, error) {
			return []domain.APIKeyItem{{APIKey: "lk_new", CreatedAt: time.Now()}}, nil
		},
	})
	h.signIn()
	rec := h.post("/dashboard/api-keys", nil, true)
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/dashboard/api-keys" {
		t.Fatalf("create: got %d to %q, want 303 to the list", rec.Code, rec.Header().Get("Location"))
	}
	if gotTenant != h.tenant || !strings.HasPrefix(gotMeta.Actor, "dashboard_user:") {
		t.Errorf("create: got tenant %s actor %q, want the session's tenant and dashboard user", gotTenant, gotMeta.Actor)
	}
	flash := h.cookies[flashCookie]
	if flash == nil || strings.Contains(flash.Value, "lsk_the_secret") || flash.Path != "/" || !flash.HttpOnly {
		t.Fatalf("flash cookie: got %+v, want the secret sealed, HttpOnly, for the list page only", flash)
	}

	other := newHarness(t, h.d.Credentials.(fakeCredentials))
	other.signIn()
	other.cookies[flashCookie] = flash
	if rec := other.get("/dashboard/api-keys"); strings.Contains(body(rec), "lsk_the_secret") {
		t.Errorf("the flash in another session: got the secret shown, want it sealed to its own session")
	}

	if rec := h.get("/dashboard/api-keys"); !strings.Contains(body(rec), "lsk_the_secret") {
		t.Fatalf("list after create: got no secret, want it shown once")
	}
	if rec := h.get("/dashboard/api-keys"); strings.Contains(body(rec), "lsk_the_secret") {
		t.Errorf("list again: got the secret, want it gone")
	}
}

func TestRevokeAPIKeyScopedToTheSessionTenant(t *testing.T) {
	t.Parallel()
	var revoked []string
	var h *harness
	h = newHarness(t, fakeCredentials{revoke: func(tenant uuid.UUID, apiKey string, _ domain.Metadata) error {
		if tenant != h.tenant || apiKey != "lk_ours" {
			return domain.Errorf(domain.NotFound, "not_found", "api key not found")
		}
		revoked = append(revoked, apiKey)
		return nil
	}})
	h.signIn()
	if rec := h.post("/dashboard/api-keys/lk_theirs/revoke", nil, true); rec.Code != http.StatusNotFound {
		t.Errorf("revoke another tenant's key: got %d, want 404", rec.Code)
	}
	if rec := h.post("/dashboard/api-keys/lk_ours/revoke", nil, true); rec.Code != http.StatusSeeOther || len(revoked) != 1 {
		t.Errorf("revoke our key: got %d and %v, want 303 and the key revoked", rec.Code, revoked)
	}
}
