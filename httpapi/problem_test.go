package httpapi

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore"
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

// recordingIdempotency runs every request and remembers whether its
// answer was final (kept for the key).
type recordingIdempotency struct{ final []bool }

func (f *recordingIdempotency) Do(ctx context.Context, _, _ string, _ []byte,
	run func(context.Context) eventstore.Response) (eventstore.Response, bool, error) {
	resp := run(ctx)
	f.final = append(f.final, resp.Final)
	return resp, false, nil
}

// TestTransientConflictIsNotKeptForTheKey: a lost race with another writer
// is a 409 with Retry-After, and an Idempotency-Key does not keep it (a
// retry with the key runs again); a conflict the request itself causes is
// kept.
func TestTransientConflictIsNotKeptForTheKey(t *testing.T) {
	for _, tc := range []struct {
		name      string
		transient bool
	}{{"lost race", true}, {"the request's own conflict", false}} {
		t.Run(tc.name, func(t *testing.T) {
			idem := &recordingIdempotency{}
			s := New(Config{}, Deps{Log: slog.New(slog.DiscardHandler), Idempotency: idem, Registry: prometheus.NewRegistry()})
			h := s.idempotent(s.route(func(http.ResponseWriter, *http.Request) error {
				return &domain.Error{Kind: domain.Conflict, Code: "concurrent_update", Message: "m", Transient: tc.transient}
			}))
			r := httptest.NewRequest(http.MethodPost, "/profile/momo", nil)
			r.Header.Set("Idempotency-Key", "k1")
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != http.StatusConflict || (w.Header().Get("Retry-After") != "") != tc.transient {
				t.Fatalf("got %d with Retry-After %q, want 409 with it only when transient", w.Code, w.Header().Get("Retry-After"))
			}
			if len(idem.final) != 1 || idem.final[0] == tc.transient {
				t.Fatalf("kept for the key: got %v, want %v", idem.final, !tc.transient)
			}
		})
	}
}
