package httpapi

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestProblemWhenTheClientLeft: a request cancelled by its client is
// recorded as 499 without a body, not logged as an internal error; the same
// error while the client still waits is a 500 problem.
func TestProblemWhenTheClientLeft(t *testing.T) {
	s := &Server{log: slog.New(slog.DiscardHandler)}
	for _, tc := range []struct {
		name     string
		gone     bool
		want     int
		wantBody bool
	}{
		{"the client went away", true, statusClientClosedRequest, false},
		{"the client still waits", false, http.StatusInternalServerError, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.gone {
				cancel()
			}
			r := httptest.NewRequest(http.MethodPost, "/users", nil).WithContext(ctx)
			w := httptest.NewRecorder()
			s.writeProblem(w, r, fmt.Errorf("idempotency: commit: %w", context.Canceled))
			if w.Code != tc.want {
				t.Fatalf("status %d, want %d", w.Code, tc.want)
			}
			if got := w.Body.Len() > 0; got != tc.wantBody {
				t.Fatalf("body %q, want a body: %v", w.Body, tc.wantBody)
			}
		})
	}
}
