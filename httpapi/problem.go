package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/ledger/ledger/domain"
)

// problem is an RFC 9457 problem details body with this API's extensions.
type problem struct {
	Type     string              `json:"type"`
	Title    string              `json:"title"`
	Status   int                 `json:"status"`
	Detail   string              `json:"detail"`
	Instance string              `json:"instance,omitempty"`
	Code     string              `json:"code"`
	Errors   []domain.FieldError `json:"errors,omitempty"`
}

var kindStatus = map[domain.Kind]int{
	domain.Internal:        http.StatusInternalServerError,
	domain.Invalid:         http.StatusBadRequest,
	domain.Unauthenticated: http.StatusUnauthorized,
	domain.Forbidden:       http.StatusForbidden,
	domain.NotFound:        http.StatusNotFound,
	domain.Conflict:        http.StatusConflict,
	domain.TooLarge:        http.StatusRequestEntityTooLarge,
	domain.Unsupported:     http.StatusUnsupportedMediaType,
	domain.Unprocessable:   http.StatusUnprocessableEntity,
	domain.Unavailable:     http.StatusServiceUnavailable,
}

var (
	errMethodNotAllowed = &domain.Error{Kind: domain.Invalid, Code: "method_not_allowed", Message: "method not allowed on this resource"}
)

// codeStatus are the statuses of errors that arise at the HTTP edge and
// never in a domain decision, so no Kind names them.
var codeStatus = map[string]int{
	errMethodNotAllowed.Code: http.StatusMethodNotAllowed,
	errRateLimited.Code:      http.StatusTooManyRequests,
	errBodyTooSlow.Code:      http.StatusRequestTimeout,
}

// statusClientClosedRequest is what the request log and metrics record for
// a request whose client went away before its answer.
const statusClientClosedRequest = 499

// errDatabaseUnavailable is the answer while Postgres cannot be reached:
// whatever the request was, it did not take effect or its outcome is
// unknown, and a retry with the same Idempotency-Key is safe either way.
func errDatabaseUnavailable(cause error) *domain.Error {
	return &domain.Error{Kind: domain.Unavailable, Code: "service_unavailable", Err: cause,
		Message: "the service cannot reach its database right now; retry shortly, with the same Idempotency-Key"}
}

// writeProblem writes err as problem+json. Errors that are not a
// *domain.Error are internal: logged with the request id, never shown.
func (s *Server) writeProblem(w http.ResponseWriter, r *http.Request, err error) {
	var de *domain.Error
	if !errors.As(err, &de) || de.Kind == domain.Internal {
		de = &domain.Error{Kind: domain.Internal, Code: "internal_error", Err: err}
		if s.unavailable != nil && s.unavailable(err) {
			de = errDatabaseUnavailable(err)
		}
	}
	status, ok := codeStatus[de.Code]
	if !ok {
		status = kindStatus[de.Kind]
	}
	p := problem{Type: "/problems/" + de.Code, Title: http.StatusText(status), Status: status,
		Detail: de.Message, Instance: r.URL.Path, Code: de.Code, Errors: de.Fields}
	if de.Kind == domain.Internal && errors.Is(err, context.Canceled) && r.Context().Err() != nil {
		// The client went away mid-request: nothing failed on our side and
		// nobody is left to read an answer; a retry with the same
		// Idempotency-Key finds whatever committed. 499 (nginx's "client
		// closed request") is for the request log and metrics only.
		s.logger(r).Info("request cancelled by the client", "err", err)
		w.WriteHeader(statusClientClosedRequest)
		return
	}
	if de.Kind == domain.Internal {
		s.logger(r).Error("internal error", "err", err)
		p.Type, p.Detail = "about:blank", "an internal error occurred; it is safe to retry"
	} else if de.Err != nil {
		s.logger(r).Info("request failed", "code", de.Code, "err", de.Err)
	}
	if de.Kind == domain.Unauthenticated {
		if r.Header.Get("Authorization") == "" {
			w.Header().Set("WWW-Authenticate", "Bearer")
		} else {
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		}
	}
	if status == http.StatusServiceUnavailable || de.Transient {
		w.Header().Set("Retry-After", "1")
	}
	body, _ := json.Marshal(p)
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	w.Write(append(body, '\n'))
}
