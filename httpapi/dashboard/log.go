package dashboard

import (
	"net/http"

	"github.com/ledger/ledger/httpapi/statusrec"
)

// logRequest logs one line per dashboard request: the path (never the
// query, which may hold a set-password token), status and duration.
func (d *Dashboard) logRequest(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := d.now()
		rec := &statusrec.Recorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		d.Log.Info("dashboard request", "method", r.Method, "path", r.URL.Path, "status", rec.Status(),
			"durationMs", d.now().Sub(start).Milliseconds())
	})
}
