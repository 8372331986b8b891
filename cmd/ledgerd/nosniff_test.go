package main

import (
	"net/http"
	"strings"
	"testing"
)

// TestEveryAPIResponseIsNoSniff: whatever the route and outcome (success,
// problem, 404, 405, metrics), browsers are told not to sniff the type.
func TestEveryAPIResponseIsNoSniff(t *testing.T) {
	t.Parallel()
	s := startServer(t, nil)
	for _, tc := range []struct{ method, path, body string }{
		{http.MethodGet, "/healthz", ""},
		{http.MethodGet, "/openapi.json", ""},
		{http.MethodGet, "/metrics", ""},
		{http.MethodGet, "/no-such-route", ""},
		{http.MethodDelete, "/healthz", ""},
		{http.MethodPost, "/token", `{"apiKey":`},
		{http.MethodGet, "/payments", ""},
	} {
		req, err := http.NewRequest(tc.method, s.URL+tc.path, strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		r := send(t, req)
		if got := r.Header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s %s (%d): X-Content-Type-Options %q, want nosniff", tc.method, tc.path, r.Status, got)
		}
	}
}
