package dashboard

import (
	"net/http"

	"github.com/google/uuid"

	"github.com/ledger/ledger/domain"
)

type breaksView struct {
	Breaks []domain.Break
	All    bool // resolved breaks listed too
}

// breaksPage is GET /dashboard/reconciliation: the reconciliation breaks,
// the open ones unless ?status=all, oldest first, each with a form to
// resolve it. Only the operator's dashboard users see it; for a tenant's
// it does not exist.
func (d *Dashboard) breaksPage(w http.ResponseWriter, r *http.Request) error {
	v := viewerFrom(r.Context())
	if !v.Operator() {
		return errNotFound
	}
	view := breaksView{All: r.URL.Query().Get("status") == "all"}
	status := domain.BreakOpen
	if view.All {
		status = ""
	}
	breaks, err := d.Breaks.ListBreaks(r.Context(), status)
	if err != nil {
		return err
	}
	view.Breaks = breaks
	d.render(w, r, http.StatusOK, "reconciliation", "Reconciliation", view)
	return nil
}

// resolveBreak is POST /dashboard/reconciliation/{breakId}/resolve: close
// an open break with the reason given (reconciliation.break_resolved, the
// dashboard user as actor), then back to the list.
func (d *Dashboard) resolveBreak(w http.ResponseWriter, r *http.Request) error {
	v := viewerFrom(r.Context())
	id, err := uuid.Parse(r.PathValue("breakId"))
	if !v.Operator() || err != nil {
		return errNotFound
	}
	if _, err := d.Breaks.ResolveBreak(r.Context(), id, r.PostFormValue("reason"), v.actor(), v.metadata()); err != nil {
		if domain.ErrorKind(err) == domain.NotFound {
			return errNotFound
		}
		return err
	}
	http.Redirect(w, r, "/dashboard/reconciliation", http.StatusSeeOther)
	return nil
}
