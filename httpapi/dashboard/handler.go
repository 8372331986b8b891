package dashboard

import (
	"errors"
	"net/http"

	"github.com/ledger/ledger/domain"
)

// handlerFunc is a dashboard handler that returns its error instead of
// writing it.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

var (
	errNotFound = domain.Errorf(domain.NotFound, "not_found", "There is nothing here, or it belongs to another account.")
	errCSRF     = domain.Errorf(domain.Forbidden, "csrf_failed",
		"This form has expired or did not come from this dashboard. Go back, reload the page and try again.")
)

// handle adapts h: an error it returns is shown as an error page with the
// status its kind calls for. Internal errors are logged and shown without
// detail.
func (d *Dashboard) handle(h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := h(w, r)
		if err == nil {
			return
		}
		var e *domain.Error
		if !errors.As(err, &e) || e.Kind == domain.Internal {
			d.Log.Error("dashboard", "method", r.Method, "path", r.URL.Path, "err", err)
			e = domain.Errorf(domain.Internal, "internal", "Something went wrong on our side. Try again in a moment.")
		}
		status := statusOf(e.Kind)
		d.render(w, r, status, "error", "Error", errorView{Status: status, Title: http.StatusText(status), Message: e.Message})
	})
}

type errorView struct {
	Status         int
	Title, Message string
}

// statusOf is the HTTP status of an error kind, as the JSON API maps it.
func statusOf(k domain.Kind) int {
	switch k {
	case domain.Invalid:
		return http.StatusBadRequest
	case domain.Unauthenticated:
		return http.StatusUnauthorized
	case domain.Forbidden:
		return http.StatusForbidden
	case domain.NotFound:
		return http.StatusNotFound
	case domain.Conflict:
		return http.StatusConflict
	case domain.Unavailable:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}
