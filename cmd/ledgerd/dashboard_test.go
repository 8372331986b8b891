package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestSecureCookies(t *testing.T) {
	t.Parallel()
	for url, want := range map[string]bool{
		"http://127.0.0.1:8080":     false,
		"http://localhost:8080":     false,
		"http://[::1]:8080":         false,
		"https://127.0.0.1:8443":    true,
		"http://ledger.example":     true,
		"http://10.0.0.5:8080":      true,
		"https://ledger.example/":   true,
		"http://%zz":                true,
		"http://127.0.0.1.nip.io:1": true,
	} {
		if got := secureCookies(url); got != want {
			t.Errorf("secureCookies(%q): got %v, want %v", url, got, want)
		}
	}
}

func TestWithDashboardRoutesByPrefix(t *testing.T) {
	t.Parallel()
	tag := func(name string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, name) })
	}
	h := withDashboard(tag("api"), tag("dashboard"))
	for path, want := range map[string]string{
		"/dashboard": "dashboard", "/dashboard/payments": "dashboard", "/dashboards": "api",
		"/payments": "api", "/payments//events": "api", "/": "api",
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Body.String() != want {
			t.Errorf("GET %s: got %s, want %s", path, rec.Body.String(), want)
		}
	}
}
