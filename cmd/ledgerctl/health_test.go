package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestHealthCheck: the command succeeds only when the readiness URL answers
// 2xx, so a container's healthcheck reports a ledgerd that lost Postgres or
// NATS, or that does not answer at all, as unhealthy.
func TestHealthCheck(t *testing.T) {
	t.Parallel()
	ready := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(`{"status":"ok"}`))
	}))
	defer ready.Close()
	notReady := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"code":"not_ready"}`, http.StatusServiceUnavailable)
	}))
	defer notReady.Close()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := "http://" + closed.Addr().String() + "/readyz"
	closed.Close()

	getenv := func(string) string { return "" }
	for _, tc := range []struct {
		url     string
		wantErr string // "" for success
	}{
		{ready.URL + "/readyz", ""},
		{notReady.URL + "/readyz", "503"},
		{gone, "refused"},
	} {
		err := run(context.Background(), []string{"health", "check", "--url", tc.url}, getenv, io.Discard)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: got %v, want success", tc.url, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: got %v, want an error with %q", tc.url, err, tc.wantErr)
		}
	}
}
