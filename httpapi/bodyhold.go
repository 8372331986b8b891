package httpapi

import (
	"io"
	"net/http"
)

// holdBodies reads the JSON body of a request without an Idempotency-Key
// into memory under the process's ceiling on request bytes held at once,
// before the handler decodes it: a body is held somewhere either way, and
// only counted bytes can be refused (503 server_busy) instead of growing
// the process. Keyed requests are held by idempotent, uploads stream to
// the database in chunks and are not held.
func (s *Server) holdBodies(next http.Handler) http.Handler {
	return s.route(func(w http.ResponseWriter, r *http.Request) error {
		if r.Body == nil || r.Body == http.NoBody || len(r.Header.Values("Idempotency-Key")) > 0 {
			next.ServeHTTP(w, r)
			return nil
		}
		limit := routeBodyLimit(r)
		if limit != jsonBodyLimit {
			next.ServeHTTP(w, r)
			return nil
		}
		body, err := s.holdBody(r, limit, io.Discard)
		if err != nil {
			return err
		}
		defer body.release()
		r.Body = body.reader()
		next.ServeHTTP(w, r)
		return nil
	})
}
