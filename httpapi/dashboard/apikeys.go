package dashboard

import (
	"net/http"
	"time"

	"github.com/ledger/ledger/domain"
)

type apiKeysView struct {
	Keys []domain.APIKeyItem
	// New is the key pair just created, shown on this one page view only.
	New *newKeyView
}

type newKeyView struct {
	APIKey, Secret string
}

// apiKeysPage is GET /dashboard/api-keys: the tenant's keys and, right
// after POST /dashboard/api-keys, the new key's secret, once.
func (d *Dashboard) apiKeysPage(w http.ResponseWriter, r *http.Request) error {
	v := viewerFrom(r.Context())
	keys, err := d.Credentials.APIKeys(r.Context(), v.TenantID)
	if err != nil {
		return err
	}
	view := apiKeysView{Keys: keys}
	if c, err := r.Cookie(d.cookieName(flashCookie)); err == nil {
		d.clearCookie(w, flashCookie, "/dashboard/api-keys") // read once: a reload shows nothing
		if apiKey, secret, ok := openFlash(v.SessionID, c.Value); ok {
			view.New = &newKeyView{APIKey: apiKey, Secret: secret}
		}
	}
	d.render(w, r, http.StatusOK, "api-keys", "API keys", view)
	return nil
}

// flashTTL bounds how long a sealed secret waits for its one display.
const flashTTL = 2 * time.Minute

// createAPIKey is POST /dashboard/api-keys: issue a key pair
// (tenant.api_key_created, the dashboard user as actor) and redirect to the
// list, which shows the secret once. The secret travels in a cookie sealed
// with the session id, which only the browser holds: the server never
// stores it, and a reload or a back button cannot show it again.
func (d *Dashboard) createAPIKey(w http.ResponseWriter, r *http.Request) error {
	v := viewerFrom(r.Context())
	apiKey, secret, err := d.Credentials.CreateAPIKey(r.Context(), v.TenantID, v.metadata())
	if err != nil {
		return err
	}
	d.setCookie(w, flashCookie, sealFlash(v.SessionID, apiKey, secret), "/dashboard/api-keys", flashTTL)
	http.Redirect(w, r, "/dashboard/api-keys", http.StatusSeeOther)
	return nil
}

// revokeAPIKey is POST /dashboard/api-keys/{apiKey}/revoke. A key of another
// tenant is not found.
func (d *Dashboard) revokeAPIKey(w http.ResponseWriter, r *http.Request) error {
	v := viewerFrom(r.Context())
	if err := d.Credentials.RevokeAPIKey(r.Context(), v.TenantID, r.PathValue("apiKey"), v.metadata()); err != nil {
		if domain.ErrorKind(err) == domain.NotFound {
			return errNotFound
		}
		return err
	}
	http.Redirect(w, r, "/dashboard/api-keys", http.StatusSeeOther)
	return nil
}
