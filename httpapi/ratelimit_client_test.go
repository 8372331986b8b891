package httpapi

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestTokenLimitCountsIPv6ClientsByTheirSlash64: POST /token's per-client
// bucket is shared by every address of one IPv6 /64 (one host usually has
// them all), as the dashboard's sign-in lock-out counts them; another /64
// has a bucket of its own.
func TestTokenLimitCountsIPv6ClientsByTheirSlash64(t *testing.T) {
	t.Parallel()
	s := New(Config{TokenIPRate: RateLimit{Rate: 1.0 / 3600, Burst: 1}},
		Deps{Registry: prometheus.NewRegistry(), Log: slog.New(slog.DiscardHandler)})
	token := func(remote string) int {
		t.Helper()
		r := httptest.NewRequest(http.MethodPost, "/token", strings.NewReader(`{}`)) // 400: no credentials asked for
		r.Header.Set("Content-Type", "application/json")
		r.RemoteAddr = remote
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		return w.Code
	}
	if got := token("[2001:db8:1:2::1]:40000"); got != http.StatusBadRequest {
		t.Fatalf("first request of the /64: got %d, want 400 (admitted)", got)
	}
	if got := token("[2001:db8:1:2:ffff::9]:40001"); got != http.StatusTooManyRequests {
		t.Errorf("another address of the same /64: got %d, want 429", got)
	}
	if got := token("[2001:db8:1:3::1]:40000"); got != http.StatusBadRequest {
		t.Errorf("an address of another /64: got %d, want 400 (admitted)", got)
	}
}
