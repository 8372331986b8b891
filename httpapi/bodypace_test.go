package httpapi

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// TestPacedBodyLeavesSlowHandlersAlone: once the body is in, no deadline
// is left on the connection, so a handler that works past the body's
// allowance keeps its context (net/http reads the connection for its close
// from the end of the body on, and cancels the context if that read fails).
func TestPacedBodyLeavesSlowHandlersAlone(t *testing.T) {
	t.Parallel()
	s := New(Config{BodyTimeout: 100 * time.Millisecond, BodyMinRate: 1024},
		Deps{Registry: prometheus.NewRegistry(), Log: slog.New(slog.DiscardHandler)})
	srv := httptest.NewServer(s.paceBodies(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		select {
		case <-r.Context().Done():
			http.Error(w, "context cancelled", http.StatusInternalServerError)
		case <-time.After(400 * time.Millisecond): // four times the body's allowance
			w.WriteHeader(http.StatusNoContent)
		}
	})))
	defer srv.Close()
	resp, err := http.Post(srv.URL, "application/json", strings.NewReader(`{"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		msg, _ := io.ReadAll(resp.Body)
		t.Errorf("slow handler: got %d %s, want 204", resp.StatusCode, msg)
	}
}
