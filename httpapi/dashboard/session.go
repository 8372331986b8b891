package dashboard

import (
	"context"
	"net/http"

	"github.com/google/uuid"

	"github.com/ledger/ledger/domain"
)

// viewer is the signed-in dashboard user of a request. Every read is
// scoped to its TenantID, which comes from the server-side session, never
// from the URL.
type viewer struct {
	domain.DashboardSession
	SessionID string // the raw id from the cookie (seals the API key flash)
}

type viewerKey struct{}

func viewerFrom(ctx context.Context) viewer {
	v, _ := ctx.Value(viewerKey{}).(viewer)
	return v
}

// Operator says whether the viewer works the operator's books (a
// dashboard user of domain.OperatorBooks), whose pages no tenant's user sees.
func (v viewer) Operator() bool { return v.TenantID == domain.OperatorBooks }

// actor names the dashboard user in event metadata.
func (v viewer) actor() string { return "dashboard_user:" + v.UserID.String() }

// metadata is the event metadata of a dashboard action.
func (v viewer) metadata() domain.Metadata {
	id := uuid.Must(uuid.NewV7()).String()
	return domain.Metadata{Actor: v.actor(), RequestID: id, CorrelationID: id}
}

// signedIn admits requests with an open session and puts its viewer in the
// context; anyone else is sent to the sign-in page.
func (d *Dashboard) signedIn(next http.Handler) http.Handler {
	return d.handle(func(w http.ResponseWriter, r *http.Request) error {
		c, err := r.Cookie(d.cookieName(sessionCookie))
		if err != nil || c.Value == "" {
			return d.toSignIn(w, r)
		}
		s, err := d.Accounts.DashboardSession(r.Context(), tokenHash(c.Value), d.now())
		if domain.ErrorKind(err) == domain.NotFound {
			d.clearCookie(w, sessionCookie, "/dashboard")
			return d.toSignIn(w, r)
		}
		if err != nil {
			return err
		}
		ctx := context.WithValue(r.Context(), viewerKey{}, viewer{DashboardSession: s, SessionID: c.Value})
		next.ServeHTTP(w, r.WithContext(ctx))
		return nil
	})
}

// toSignIn redirects to the sign-in page. An event stream gets 401: an
// EventSource cannot follow a redirect to a page.
func (d *Dashboard) toSignIn(w http.ResponseWriter, r *http.Request) error {
	if r.URL.Path == "/dashboard/live" {
		http.Error(w, "sign in first", http.StatusUnauthorized)
		return nil
	}
	http.Redirect(w, r, "/dashboard/sign-in", http.StatusSeeOther)
	return nil
}
