package main

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestBadInput sends bodies the strict decoder must refuse (contract §1) to
// both POST routes. Each body holds credentials or a user id that would
// succeed if it were decoded leniently. Every answer is problem+json, and
// nothing is appended to the event store.
func TestBadInput(t *testing.T) {
	t.Parallel()
	s := startServer(t, nil)
	tn := s.createTenant(t, "Soylent")
	tok := s.tenantToken(t, tn.APIKey, tn.APISecret)
	creds := fmt.Sprintf(`"apiKey":%q,"apiSecret":%q`, tn.APIKey, tn.APISecret)
	user := fmt.Sprintf(`"userId":%q`, tn.OwnerUserID)
	before := s.countEvents(t)

	const mib = 1 << 20
	pad := func(obj string, size int) string { return strings.Repeat(" ", size-len(obj)) + obj }

	// Controls: the valid bodies are accepted, up to exactly 1 MiB.
	for _, tt := range []struct{ name, path, body string }{
		{"token", "/token", "{" + creds + "}"},
		{"token exactly 1 MiB", "/token", pad("{"+creds+"}", mib)},
		{"users/token", "/users/token", "{" + user + "}"},
		{"users/token exactly 1 MiB", "/users/token", pad("{"+user+"}", mib)},
	} {
		if r := s.post(t, tt.path, tok, tt.body); r.Status != http.StatusOK {
			t.Fatalf("control %s: got %d %s, want 200", tt.name, r.Status, r.Body)
		}
	}

	tests := []struct {
		name        string
		path        string
		contentType string
		body        string
		status      int
		code        string
		field       string
	}{
		{"malformed JSON", "/token", "application/json", "{" + creds, 400, "malformed_json", ""},
		{"not JSON", "/token", "application/json", "apiKey=x", 400, "malformed_json", ""},
		{"empty body", "/token", "application/json", "", 400, "malformed_json", ""},
		{"null", "/token", "application/json", "null", 400, "", ""},
		{"array", "/token", "application/json", "[{" + creds + "}]", 400, "malformed_json", ""},
		{"unknown field", "/token", "application/json", "{" + creds + `,"scope":"all"}`, 400, "unknown_field", "scope"},
		{"field in the wrong case", "/token", "application/json", fmt.Sprintf(`{"apikey":%q,"apiSecret":%q}`, tn.APIKey, tn.APISecret), 400, "unknown_field", "apikey"},
		{"trailing garbage", "/token", "application/json", "{" + creds + "} x", 400, "malformed_json", ""},
		{"two objects", "/token", "application/json", "{" + creds + "}{" + creds + "}", 400, "malformed_json", ""},
		{"over 1 MiB", "/token", "application/json", pad("{"+creds+"}", mib+1), 413, "body_too_large", ""},
		{"wrong content type", "/token", "text/plain", "{" + creds + "}", 415, "unsupported_media_type", ""},
		{"form content type", "/token", "application/x-www-form-urlencoded", "{" + creds + "}", 415, "unsupported_media_type", ""},
		{"no content type", "/token", "", "{" + creds + "}", 415, "unsupported_media_type", ""},
		{"number for a string", "/token", "application/json", fmt.Sprintf(`{"apiKey":12,"apiSecret":%q}`, tn.APISecret), 400, "validation_failed", "apiKey"},
		{"object for a string", "/token", "application/json", fmt.Sprintf(`{"apiKey":%q,"apiSecret":{}}`, tn.APIKey), 400, "validation_failed", "apiSecret"},

		{"users/token malformed JSON", "/users/token", "application/json", "{" + user, 400, "malformed_json", ""},
		{"users/token unknown field", "/users/token", "application/json", "{" + user + `,"role":"Admin"}`, 400, "unknown_field", "role"},
		{"users/token trailing garbage", "/users/token", "application/json", "{" + user + "}]", 400, "malformed_json", ""},
		{"users/token over 1 MiB", "/users/token", "application/json", pad("{"+user+"}", mib+1), 413, "body_too_large", ""},
		{"users/token wrong content type", "/users/token", "text/plain", "{" + user + "}", 415, "unsupported_media_type", ""},
		{"users/token number for a string", "/users/token", "application/json", `{"userId":7}`, 400, "validation_failed", "userId"},
		{"users/token array for a string", "/users/token", "application/json", fmt.Sprintf(`{"userId":[%q]}`, tn.OwnerUserID), 400, "validation_failed", "userId"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := []string{"Authorization", "Bearer " + tok}
			if tt.contentType != "" {
				h = append(h, "Content-Type", tt.contentType)
			}
			r := send(t, s.newRequest(t, http.MethodPost, tt.path, strings.NewReader(tt.body), h...))
			p := mustProblem(t, r, tt.status, tt.code)
			if tt.field != "" {
				mustFieldError(t, p, tt.field)
			}
			if p.Instance != tt.path {
				t.Errorf("instance: got %q, want %q", p.Instance, tt.path)
			}
		})
	}
	t.Cleanup(func() {
		if after := s.countEvents(t); after != before {
			t.Errorf("events: got %d, want %d (bad input appended events)", after, before)
		}
	})
}

// TestRequestID checks X-Request-Id on every kind of answer: echoed when
// the caller sent a sane one, generated otherwise.
func TestRequestID(t *testing.T) {
	t.Parallel()
	s := startServer(t, nil)
	tn := s.createTenant(t, "Stark")

	requests := []struct {
		name, method, path, body string
		status                   int
	}{
		{"healthz", http.MethodGet, "/healthz", "", 200},
		{"token", http.MethodPost, "/token", fmt.Sprintf(`{"apiKey":%q,"apiSecret":%q}`, tn.APIKey, tn.APISecret), 200},
		{"bad credentials", http.MethodPost, "/token", fmt.Sprintf(`{"apiKey":%q,"apiSecret":"x"}`, tn.APIKey), 401},
		{"no token", http.MethodPost, "/users/token", `{}`, 401},
		{"unknown path", http.MethodGet, "/nope", "", 404},
		{"wrong method", http.MethodGet, "/token", "", 405},
	}
	for _, tt := range requests {
		t.Run(tt.name, func(t *testing.T) {
			req := s.newRequest(t, tt.method, tt.path, strings.NewReader(tt.body), "Content-Type", "application/json",
				"X-Request-Id", "req-"+tt.name[:2]+"-0042")
			r := send(t, req)
			if r.Status != tt.status {
				t.Fatalf("status: got %d %s, want %d", r.Status, r.Body, tt.status)
			}
			if got, want := r.Header.Get("X-Request-Id"), "req-"+tt.name[:2]+"-0042"; got != want {
				t.Errorf("echoed X-Request-Id: got %q, want %q", got, want)
			}
			a := send(t, s.newRequest(t, tt.method, tt.path, strings.NewReader(tt.body), "Content-Type", "application/json"))
			b := send(t, s.newRequest(t, tt.method, tt.path, strings.NewReader(tt.body), "Content-Type", "application/json"))
			if a.Header.Get("X-Request-Id") == "" || a.Header.Get("X-Request-Id") == b.Header.Get("X-Request-Id") {
				t.Errorf("generated X-Request-Id: got %q and %q, want two distinct non-empty ids",
					a.Header.Get("X-Request-Id"), b.Header.Get("X-Request-Id"))
			}
		})
	}
	t.Run("unsafe id is replaced", func(t *testing.T) {
		for _, id := range []string{"has space", strings.Repeat("a", 129), "<script>"} {
			r := s.get(t, "/healthz", "X-Request-Id", id)
			if got := r.Header.Get("X-Request-Id"); got == id || got == "" {
				t.Errorf("X-Request-Id for %q: got %q, want a generated id", id, got)
			}
		}
	})
}

// TestServiceEndpoints checks the unauthenticated endpoints and the router's
// own answers.
func TestServiceEndpoints(t *testing.T) {
	t.Parallel()
	s := startServer(t, nil)

	t.Run("healthz", func(t *testing.T) {
		if r := s.get(t, "/healthz"); r.Status != http.StatusOK || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("got %d %q %s, want 200 application/json", r.Status, r.Header.Get("Content-Type"), r.Body)
		}
	})
	t.Run("readyz", func(t *testing.T) {
		if r := s.get(t, "/readyz"); r.Status != http.StatusOK {
			t.Errorf("got %d %s, want 200", r.Status, r.Body)
		}
	})
	t.Run("metrics", func(t *testing.T) {
		s.get(t, "/healthz") // so that the request counter has a sample
		r := s.get(t, "/metrics")
		if r.Status != http.StatusOK {
			t.Fatalf("status: got %d, want 200", r.Status)
		}
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
			t.Errorf("Content-Type: got %q, want text/plain (Prometheus text format)", ct)
		}
		for _, name := range []string{"ledger_http_requests_total", "ledger_http_request_duration_seconds",
			"ledger_relay_lag_seconds", "ledger_append_duration_seconds", "ledger_append_group_size", "ledger_outbox_pending", "ledger_relay_leader"} {
			if !strings.Contains(string(r.Body), "\n# TYPE "+name+" ") {
				t.Errorf("metrics: got no %s, want it", name)
			}
		}
		if want := `ledger_http_requests_total{method="GET",route="/healthz",status="200"}`; !strings.Contains(string(r.Body), want) {
			t.Errorf("metrics: got no %s, want it (requests by route template)", want)
		}
	})
	t.Run("openapi.json", func(t *testing.T) {
		r := s.get(t, "/openapi.json")
		if r.Status != http.StatusOK || r.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("got %d %q, want 200 application/json", r.Status, r.Header.Get("Content-Type"))
		}
		var doc struct {
			OpenAPI string         `json:"openapi"`
			Paths   map[string]any `json:"paths"`
		}
		mustDecode(t, r.Body, &doc)
		if doc.OpenAPI != "3.1.0" || doc.Paths["/users/token"] == nil {
			t.Errorf("document: got openapi %q with %d paths, want 3.1.0 describing /users/token", doc.OpenAPI, len(doc.Paths))
		}
	})

	routerAnswers := []struct {
		name, method, path string
		status             int
		code               string
	}{
		{"unknown path", http.MethodGet, "/nope", 404, "not_found"},
		// /users/{userId} now matches one segment under /users, so an
		// unknown path there has two, and a method no route of the path
		// takes is PUT.
		{"unknown path under the authenticated routes", http.MethodPost, "/users/nope/deeper", 404, "not_found"},
		{"GET /token", http.MethodGet, "/token", 405, "method_not_allowed"},
		{"DELETE /healthz", http.MethodDelete, "/healthz", 405, "method_not_allowed"},
		{"PUT /users/token", http.MethodPut, "/users/token", 405, "method_not_allowed"},
		{"POST /users/{userId}", http.MethodPost, "/users/nope", 405, "method_not_allowed"},
		{"PUT /profile", http.MethodPut, "/profile", 405, "method_not_allowed"},
	}
	for _, tt := range routerAnswers {
		t.Run(tt.name, func(t *testing.T) {
			mustProblem(t, send(t, s.newRequest(t, tt.method, tt.path, nil)), tt.status, tt.code)
		})
	}
}

// TestOversizedBodyIsCutOff streams a body far past 1 MiB: the server stops
// reading at the limit and answers 413 instead of buffering it all.
func TestOversizedBodyIsCutOff(t *testing.T) {
	t.Parallel()
	s := startServer(t, nil)
	pr, pw := io.Pipe()
	go func() {
		chunk := []byte(strings.Repeat(" ", 64<<10))
		for i := 0; i < 64; i++ { // 4 MiB, well past the limit
			if _, err := pw.Write(chunk); err != nil {
				return
			}
		}
		pw.Close()
	}()
	req := s.newRequest(t, http.MethodPost, "/token", pr, "Content-Type", "application/json")
	resp, err := client.Do(req)
	pr.CloseWithError(io.ErrClosedPipe)
	if err != nil {
		t.Fatalf("POST /token with 4 MiB: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("status: got %d, want 413", resp.StatusCode)
	}
}
