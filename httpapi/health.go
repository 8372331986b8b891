package httpapi

import (
	_ "embed"
	"net/http"

	"github.com/ledger/ledger/domain"
)

//go:embed openapi.json
var openAPIDocument []byte

// healthz answers while the process is up.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) error {
	return writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readyz answers 200 only when Postgres and NATS are reachable and the
// migrations are applied, with the state of each configured rail.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) error {
	if err := s.ready(r.Context()); err != nil {
		s.logger(r).Warn("not ready", "err", err)
		return &domain.Error{Kind: domain.Unavailable, Code: "not_ready", Message: err.Error()}
	}
	body := map[string]any{"status": "ready"}
	if s.rails != nil {
		if rails := s.rails(r.Context()); len(rails) > 0 {
			body["rails"] = rails
		}
	}
	return writeJSON(w, http.StatusOK, body)
}

// openAPI serves the OpenAPI 3.1 document of the whole API.
func (s *Server) openAPI(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "application/json")
	_, err := w.Write(openAPIDocument)
	return err
}
