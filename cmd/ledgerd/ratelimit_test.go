package main

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"testing"

	"github.com/ledger/ledger/httpapi"
)

// mustRateLimited checks a 429 answer: problem+json rate_limited with a
// Retry-After of whole seconds from 1 to at most max.
func mustRateLimited(t *testing.T, r response, max int) {
	t.Helper()
	mustProblem(t, r, http.StatusTooManyRequests, "rate_limited")
	secs, err := strconv.Atoi(r.Header.Get("Retry-After"))
	if err != nil || secs < 1 || secs > max {
		t.Errorf("Retry-After: got %q, want whole seconds from 1 to %d", r.Header.Get("Retry-After"), max)
	}
}

// TestRateLimits runs with a burst of 3 and then one request an hour, per
// API key and per client IP on POST /token: the fourth request is 429 with
// Retry-After (the hour, less the moments the test took), a user token
// shares its API key's bucket, another key of the same tenant is not
// affected, and the IP limit holds whichever key is asked for.
func TestRateLimits(t *testing.T) {
	t.Parallel()
	s := startServer(t, map[string]string{"LEDGER_RATE_LIMIT": "1/h,burst=3", "LEDGER_TOKEN_RATE_LIMIT": "1/h,burst=3"})
	tn := s.createTenant(t, "Throttled")
	var second tenant
	mustDecode(t, s.ledgerctl(t, "apikey", "create", "--tenant", tn.TenantID), &second)

	tok := s.tenantToken(t, tn.APIKey, tn.APISecret)                 // this IP: 1 of 3
	otherKeyTok := s.tenantToken(t, second.APIKey, second.APISecret) // this IP: 2 of 3
	userTok := s.userToken(t, tok, tn.OwnerUserID)                   // the first key: 1 of 3
	const banks = "/utils/banks?country=Kenya"
	for range 2 { // the first key: 3 of 3
		mustStatus(t, s.call(t, http.MethodGet, banks, tok, ""), http.StatusOK)
	}
	mustRateLimited(t, s.call(t, http.MethodGet, banks, tok, ""), 3600)
	mustRateLimited(t, s.call(t, http.MethodGet, banks, userTok, ""), 3600)
	for range 3 {
		mustStatus(t, s.call(t, http.MethodGet, banks, otherKeyTok, ""), http.StatusOK)
	}

	credentials := func(k tenant) string { return fmt.Sprintf(`{"apiKey":%q,"apiSecret":%q}`, k.APIKey, k.APISecret) }
	mustStatus(t, s.post(t, "/token", "", credentials(tn)), http.StatusOK) // this IP: 3 of 3
	mustRateLimited(t, s.post(t, "/token", "", credentials(tn)), 3600)
	mustRateLimited(t, s.post(t, "/token", "", credentials(second)), 3600)
	mustRateLimited(t, s.post(t, "/token", "", `{"apiKey":"lk_guess","apiSecret":"guess"}`), 3600)
}

func TestRateLimitSetting(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		value string
		want  httpapi.RateLimit
	}{
		{"100/s,burst=200", httpapi.RateLimit{Rate: 100, Burst: 200}},
		{"10/s", httpapi.RateLimit{Rate: 10, Burst: 10}},
		{"60/m, burst=5", httpapi.RateLimit{Rate: 1, Burst: 5}},
		{"0", httpapi.RateLimit{}},
	} {
		cfg, err := loadConfig(nil, func(k string) string {
			if k == "LEDGER_RATE_LIMIT" {
				return tt.value
			}
			return ""
		}, io.Discard)
		if err != nil || cfg.RateLimit != tt.want {
			t.Errorf("LEDGER_RATE_LIMIT=%s: got %+v, %v, want %+v", tt.value, cfg.RateLimit, err, tt.want)
		}
	}
	for _, bad := range []string{"100", "100/d", "-1/s", "1.5/s", "10/s,burst=0", "10/s,bursts=5", "10/s,20", "off"} {
		args := []string{"-token-rate-limit", bad}
		if _, err := loadConfig(args, func(string) string { return "" }, io.Discard); err == nil {
			t.Errorf("-token-rate-limit %s: got no error, want one", bad)
		}
	}
}
