package main

import "testing"

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
