package httpapi

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func TestMethodNotAllowedListsAllowedMethods(t *testing.T) {
	t.Parallel()
	s := New(Config{}, Deps{Registry: prometheus.NewRegistry(), Log: slog.New(slog.DiscardHandler)})
	tests := []struct {
		method, path, want string
	}{
		{http.MethodPut, "/users/0190a3c6-0000-7000-8000-000000000000", "GET, PATCH, DELETE"},
		{http.MethodDelete, "/token", "POST"},
		{http.MethodPost, "/healthz", "GET"},
		{http.MethodPut, "/profile", "GET, PATCH"},
	}
	for _, tt := range tests {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, nil))
		if rec.Code != http.StatusMethodNotAllowed {
			t.Errorf("%s %s: got status %d, want 405", tt.method, tt.path, rec.Code)
		}
		if got := rec.Header().Get("Allow"); got != tt.want {
			t.Errorf("%s %s: got Allow %q, want %q", tt.method, tt.path, got, tt.want)
		}
	}
}
