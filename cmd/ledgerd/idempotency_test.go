package main

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// TestIdempotencyKey checks Idempotency-Key on POST /users/token (contract
// §1). Issuing a token has no stored effect, but each run signs a new token
// with a new jti, so a replay is visible: the same accessToken comes back.
func TestIdempotencyKey(t *testing.T) {
	t.Parallel()
	s := startServer(t, nil)
	a := s.createTenant(t, "Oscorp")
	b := s.createTenant(t, "Aperture")
	tokA := s.tenantToken(t, a.APIKey, a.APISecret)
	tokB := s.tenantToken(t, b.APIKey, b.APISecret)
	bodyA := fmt.Sprintf(`{"userId":%q}`, a.OwnerUserID)

	t.Run("same key and body replays", func(t *testing.T) {
		key := uuid.NewString()
		first := s.post(t, "/users/token", tokA, bodyA, "Idempotency-Key", key)
		if first.Status != http.StatusOK {
			t.Fatalf("first: got %d %s, want 200", first.Status, first.Body)
		}
		if got := first.Header.Get("Idempotent-Replayed"); got != "" {
			t.Errorf("first Idempotent-Replayed: got %q, want none", got)
		}
		second := s.post(t, "/users/token", tokA, bodyA, "Idempotency-Key", key)
		if second.Status != first.Status || !bytes.Equal(second.Body, first.Body) {
			t.Errorf("replay: got %d %s, want %d %s", second.Status, second.Body, first.Status, first.Body)
		}
		if got := second.Header.Get("Idempotent-Replayed"); got != "true" {
			t.Errorf("replay Idempotent-Replayed: got %q, want true", got)
		}
		if got := second.Header.Get("Content-Type"); got != "application/json" {
			t.Errorf("replay Content-Type: got %q, want application/json", got)
		}
		if got := second.Header.Get("Cache-Control"); got != "no-store" {
			t.Errorf("replay of a token Cache-Control: got %q, want no-store", got)
		}
		if got := second.Header.Get("Pragma"); got != "no-cache" {
			t.Errorf("replay of a token Pragma: got %q, want no-cache", got)
		}
		// Control: without the key every call signs a new token.
		x := s.post(t, "/users/token", tokA, bodyA)
		y := s.post(t, "/users/token", tokA, bodyA)
		if bytes.Equal(x.Body, y.Body) {
			t.Errorf("without a key: got the same body twice, want distinct tokens")
		}
	})
	t.Run("an upload retried with a new multipart boundary replays", func(t *testing.T) {
		// Clients draw a new boundary for every request: the retry of an
		// upload differs from its first try in that alone.
		key := uuid.NewString()
		upload := func(file []byte) response {
			body, contentType := multipartBody(t, filePart("passport.pdf", file), typePart("passport"))
			return send(t, s.newRequest(t, http.MethodPost, "/users/"+a.OwnerUserID+"/kyc-documents", body,
				"Content-Type", contentType, "Authorization", "Bearer "+tokA, "Idempotency-Key", key))
		}
		first := mustStatus(t, upload(pdfBytes), http.StatusCreated)
		second := upload(pdfBytes)
		if second.Status != http.StatusCreated || second.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("retry: got %d %s (replayed %q), want the first answer replayed", second.Status, second.Body,
				second.Header.Get("Idempotent-Replayed"))
		}
		var again map[string]any
		mustDecode(t, second.Body, &again)
		if again["id"] != first["id"] {
			t.Errorf("retry: got document %v, want %v", again["id"], first["id"])
		}
		other := append(bytes.Clone(pdfBytes), '\n')
		mustProblem(t, upload(other), http.StatusUnprocessableEntity, "idempotency_key_reused")
	})
	t.Run("two keys", func(t *testing.T) {
		req := s.newRequest(t, http.MethodPost, "/users/token", strings.NewReader(bodyA), "Content-Type", "application/json",
			"Authorization", "Bearer "+tokA, "Idempotency-Key", uuid.NewString())
		req.Header.Add("Idempotency-Key", uuid.NewString())
		mustFieldError(t, mustProblem(t, send(t, req), http.StatusBadRequest, "validation_failed"), "Idempotency-Key")
	})
	t.Run("same key, different body", func(t *testing.T) {
		key := uuid.NewString()
		if r := s.post(t, "/users/token", tokA, bodyA, "Idempotency-Key", key); r.Status != http.StatusOK {
			t.Fatalf("first: got %d %s, want 200", r.Status, r.Body)
		}
		other := fmt.Sprintf(`{"userId":%q}`, uuid.NewString())
		mustProblem(t, s.post(t, "/users/token", tokA, other, "Idempotency-Key", key), http.StatusUnprocessableEntity, "idempotency_key_reused")
	})
	t.Run("keys are scoped per caller", func(t *testing.T) {
		// Tenant B sends the very request A sent with the same key: not a
		// replay of A's answer (that would hand B a token for A's user),
		// but B's own answer.
		key := uuid.NewString()
		if r := s.post(t, "/users/token", tokA, bodyA, "Idempotency-Key", key); r.Status != http.StatusOK {
			t.Fatalf("tenant A: got %d %s, want 200", r.Status, r.Body)
		}
		r := s.post(t, "/users/token", tokB, bodyA, "Idempotency-Key", key)
		mustProblem(t, r, http.StatusNotFound, "not_found")
		if got := r.Header.Get("Idempotent-Replayed"); got != "" {
			t.Errorf("Idempotent-Replayed for another tenant: got %q, want none", got)
		}

		// With its own user and a key A used for another body, B gets its
		// own token, not a 422.
		key = uuid.NewString()
		if r := s.post(t, "/users/token", tokA, bodyA, "Idempotency-Key", key); r.Status != http.StatusOK {
			t.Fatalf("tenant A: got %d %s, want 200", r.Status, r.Body)
		}
		own := s.post(t, "/users/token", tokB, fmt.Sprintf(`{"userId":%q}`, b.OwnerUserID), "Idempotency-Key", key)
		if own.Status != http.StatusOK || own.Header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("tenant B: got %d replayed %q %s, want 200 not replayed", own.Status, own.Header.Get("Idempotent-Replayed"), own.Body)
		}
		var tr tokenResponse
		mustDecode(t, own.Body, &tr)
		if _, c := decodeJWT(t, tr.AccessToken); c["tenantId"] != b.TenantID {
			t.Errorf("tenant B's token tenantId: got %v, want %s", c["tenantId"], b.TenantID)
		}
	})
	t.Run("key syntax", func(t *testing.T) {
		if r := s.post(t, "/users/token", tokA, bodyA, "Idempotency-Key", strings.Repeat("k", 255)); r.Status != http.StatusOK {
			t.Errorf("255 characters: got %d %s, want 200", r.Status, r.Body)
		}
		for name, key := range map[string]string{"256 characters": strings.Repeat("k", 256), "not ASCII": "k\xffey", "non-ASCII UTF-8": "clé", "empty": "", "spaces only": "   "} {
			p := mustProblem(t, s.post(t, "/users/token", tokA, bodyA, "Idempotency-Key", key), http.StatusBadRequest, "validation_failed")
			if t.Failed() {
				t.Fatalf("key %s", name)
			}
			mustFieldError(t, p, "Idempotency-Key")
		}
	})
	t.Run("key is checked after authentication", func(t *testing.T) {
		key := uuid.NewString()
		mustProblem(t, s.post(t, "/users/token", "", bodyA, "Idempotency-Key", key), http.StatusUnauthorized, "invalid_token")
		if r := s.post(t, "/users/token", tokA, bodyA, "Idempotency-Key", key); r.Status != http.StatusOK || r.Header.Get("Idempotent-Replayed") != "" {
			t.Errorf("after a 401 with the key: got %d replayed %q, want 200 not replayed", r.Status, r.Header.Get("Idempotent-Replayed"))
		}
	})
	t.Run("concurrent requests with one key run once", func(t *testing.T) {
		key := uuid.NewString()
		const n = 8
		reqs := make([]*http.Request, n)
		for i := range reqs {
			reqs[i] = s.newRequest(t, http.MethodPost, "/users/token", strings.NewReader(bodyA), "Content-Type", "application/json",
				"Authorization", "Bearer "+tokA, "Idempotency-Key", key)
		}
		var ok [][]byte
		for _, r := range sendTogether(t, reqs) {
			switch r.Status {
			case http.StatusOK:
				ok = append(ok, r.Body)
			case http.StatusConflict:
				mustProblem(t, r, http.StatusConflict, "idempotency_key_in_flight")
			default:
				t.Errorf("status: got %d %s, want 200 or 409", r.Status, r.Body)
			}
		}
		if len(ok) == 0 {
			t.Fatalf("got no 200 among %d concurrent requests, want at least one", n)
		}
		for _, body := range ok[1:] {
			if !bytes.Equal(body, ok[0]) {
				t.Errorf("200 bodies differ: got %s and %s, want one run replayed", body, ok[0])
			}
		}
	})
}
