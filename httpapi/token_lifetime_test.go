package httpapi

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
)

// An instance configured for longer tokens than its signing key allows
// signs them for the key's lifetime, so that every instance verifies them.
func TestIssueCapsTheLifetimeAtTheKeys(t *testing.T) {
	t.Parallel()
	s := New(Config{TenantTokenTTL: 2 * time.Hour, UserTokenTTL: 30 * time.Minute},
		Deps{Registry: prometheus.NewRegistry(), Log: slog.New(slog.DiscardHandler), Keys: testKeys})
	now := k1RetiredAt
	s.now = func() time.Time { return now }
	for _, tt := range []struct {
		kind string
		ttl  time.Duration
		want time.Duration
	}{
		{KindTenant, s.cfg.TenantTokenTTL, time.Hour}, // k2 allows an hour
		{KindUser, s.cfg.UserTokenTTL, 30 * time.Minute},
	} {
		c := Caller{TenantID: uuid.New(), UserID: uuid.New(), Kind: tt.kind, APIKey: "key"}
		resp, err := s.issue(context.Background(), c, tt.ttl)
		if err != nil {
			t.Fatal(err)
		}
		if got := time.Duration(resp.ExpiresIn) * time.Second; got != tt.want {
			t.Errorf("%s token configured for %v: got expiresIn %v, want %v", tt.kind, tt.ttl, got, tt.want)
		}
		if _, err := s.verify(context.Background(), resp.AccessToken); err != nil {
			t.Errorf("%s token: got %v, want it verified", tt.kind, err)
		}
	}
}
