package httpapi

import (
	"net/http"
	"strings"

	"github.com/gorilla/mux"
)

// routeMethods are the methods the API routes on.
var routeMethods = []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// methodNotAllowed answers 405 with the Allow header RFC 9110 requires: the
// methods the router would accept on this path.
func (s *Server) methodNotAllowed(w http.ResponseWriter, r *http.Request) error {
	var allowed []string
	for _, m := range routeMethods {
		probe := r.Clone(r.Context())
		probe.Method = m
		var match mux.RouteMatch
		if s.router.Match(probe, &match) && match.MatchErr == nil {
			allowed = append(allowed, m)
		}
	}
	w.Header().Set("Allow", strings.Join(allowed, ", "))
	return errMethodNotAllowed
}
