package dashboard

import (
	"net/http"
)

// statusWriter remembers the status a handler wrote, for the request log.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (the live
// stream flushes and lifts the write deadline through it).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// logRequest logs one line per dashboard request: the path (never the
// query, which may hold a set-password token), status and duration.
func (d *Dashboard) logRequest(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := d.now()
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		d.Log.Info("dashboard request", "method", r.Method, "path", r.URL.Path, "status", sw.status,
			"durationMs", d.now().Sub(start).Milliseconds())
	})
}
