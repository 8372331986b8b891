package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestMetricsOnTheirOwnAddress: with LEDGER_METRICS_ADDR, GET /metrics is
// served there, and only there: the API's address answers 404 for it, and
// the metrics address serves nothing else.
func TestMetricsOnTheirOwnAddress(t *testing.T) {
	t.Parallel()
	s := startServer(t, map[string]string{"LEDGER_METRICS_ADDR": "127.0.0.1:0"})
	s.get(t, "/healthz") // a request for the metrics to count
	if r := s.get(t, "/metrics"); r.Status != http.StatusNotFound {
		t.Errorf("GET /metrics on the API address: got %d, want 404", r.Status)
	}
	metrics := "http://" + s.app.metrics.ln.Addr().String()
	r := send(t, mustRequest(t, http.MethodGet, metrics+"/metrics"))
	if r.Status != http.StatusOK || !strings.Contains(string(r.Body), `ledger_http_requests_total{method="GET",route="/healthz"`) {
		t.Errorf("GET /metrics on the metrics address: got %d, want 200 with the API's request counts:\n%.500s", r.Status, r.Body)
	}
	for _, path := range []string{"/healthz", "/dashboard/sign-in", "/"} {
		if r := send(t, mustRequest(t, http.MethodGet, metrics+path)); r.Status != http.StatusNotFound {
			t.Errorf("GET %s on the metrics address: got %d, want 404", path, r.Status)
		}
	}
}

// TestMetricsAddrMustBeHostPort: a LEDGER_METRICS_ADDR that is not
// host:port stops the start rather than leaving the metrics unserved.
func TestMetricsAddrMustBeHostPort(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"9090", "http://127.0.0.1:9090"} {
		getenv := func(k string) string { return map[string]string{"LEDGER_METRICS_ADDR": v}[k] }
		if _, err := loadConfig(nil, getenv, io.Discard); err == nil {
			t.Errorf("LEDGER_METRICS_ADDR=%s: got no error, want one", v)
		}
	}
}

func mustRequest(t *testing.T, method, url string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}
