package main

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

// TestTokenAttacks sends forged, tampered and expired tokens to POST
// /users/token (the authenticated route). Every forgery is built by hand from
// a control token that the server accepts, so each rejection is due to the
// one thing changed.
func TestTokenAttacks(t *testing.T) {
	t.Parallel()
	s := startServer(t, nil)
	tn := s.createTenant(t, "Umbrella")
	other := s.createTenant(t, "Tyrell")
	good := s.tenantToken(t, tn.APIKey, tn.APISecret)
	kid, secret := s.signingKey(t)
	body := fmt.Sprintf(`{"userId":%q}`, tn.OwnerUserID)

	now := time.Now().Unix()
	claims := func(change map[string]any) map[string]any {
		c := map[string]any{"iss": "ledger", "sub": tn.TenantID, "tenantId": tn.TenantID, "kind": "tenant",
			"azp": tn.APIKey, "iat": now - 5, "exp": now + 600, "jti": uuid.NewString()}
		for k, v := range change {
			if v == nil {
				delete(c, k)
			} else {
				c[k] = v
			}
		}
		return c
	}
	hs256 := map[string]any{"alg": "HS256", "typ": "JWT", "kid": kid}

	t.Run("control: a hand-made token is accepted", func(t *testing.T) {
		tok := signJWT(t, hs256, claims(nil), secret)
		if r := s.post(t, "/users/token", tok, body); r.Status != http.StatusOK {
			t.Fatalf("got %d %s, want 200", r.Status, r.Body)
		}
	})
	t.Run("no Authorization header", func(t *testing.T) {
		r := s.post(t, "/users/token", "", body)
		mustProblem(t, r, http.StatusUnauthorized, "invalid_token")
		if got := r.Header.Get("WWW-Authenticate"); got != "Bearer" {
			t.Errorf("WWW-Authenticate: got %q, want %q", got, "Bearer")
		}
	})

	tampered := func() string {
		parts := strings.Split(good, ".")
		_, c := decodeJWT(t, good)
		c["tenantId"], c["sub"] = other.TenantID, other.TenantID
		raw, _ := json.Marshal(c)
		return parts[0] + "." + base64.RawURLEncoding.EncodeToString(raw) + "." + parts[2]
	}()
	hs512 := func() string {
		h, _ := json.Marshal(map[string]any{"alg": "HS512", "typ": "JWT", "kid": kid})
		c, _ := json.Marshal(claims(nil))
		in := base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(c)
		m := hmac.New(sha512.New, secret)
		m.Write([]byte(in))
		return in + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
	}()
	wrongKey := make([]byte, 32)
	rand.Read(wrongKey)
	algNone := func() string {
		tok := signJWT(t, map[string]any{"alg": "none", "typ": "JWT", "kid": kid}, claims(nil), nil)
		return tok[:strings.LastIndexByte(tok, '.')+1]
	}()

	attacks := []struct {
		name  string
		token string
		code  string
	}{
		{"expired", signJWT(t, hs256, claims(map[string]any{"iat": now - 3600, "exp": now - 10}), secret), "token_expired"},
		{"expired beyond the 1 s leeway", signJWT(t, hs256, claims(map[string]any{"exp": now - 3}), secret), "token_expired"},
		{"tampered payload", tampered, "invalid_token"},
		{"alg none", algNone, "invalid_token"},
		{"alg none with the real signature", algNone + strings.Split(signJWT(t, hs256, claims(nil), secret), ".")[2], "invalid_token"},
		{"alg HS512 with the right key", hs512, "invalid_token"},
		{"HS256 with a wrong key", signJWT(t, hs256, claims(nil), wrongKey), "invalid_token"},
		{"unknown kid", signJWT(t, map[string]any{"alg": "HS256", "typ": "JWT", "kid": "no-such-key"}, claims(nil), secret), "invalid_token"},
		{"no kid", signJWT(t, map[string]any{"alg": "HS256", "typ": "JWT"}, claims(nil), secret), "invalid_token"},
		{"wrong issuer", signJWT(t, hs256, claims(map[string]any{"iss": "someone-else"}), secret), "invalid_token"},
		{"no exp", signJWT(t, hs256, claims(map[string]any{"exp": nil}), secret), "invalid_token"},
		{"issued in the future", signJWT(t, hs256, claims(map[string]any{"iat": now + 3600}), secret), "invalid_token"},
		{"unknown kind", signJWT(t, hs256, claims(map[string]any{"kind": "admin"}), secret), "invalid_token"},
		{"sub is not the tenant", signJWT(t, hs256, claims(map[string]any{"sub": other.TenantID}), secret), "invalid_token"},
		{"another tenant's id with this tenant's key", signJWT(t, hs256,
			claims(map[string]any{"sub": other.TenantID, "tenantId": other.TenantID}), secret), "invalid_token"},
		{"user kind without userId", signJWT(t, hs256, claims(map[string]any{"kind": "user"}), secret), "invalid_token"},
		{"unknown API key", signJWT(t, hs256, claims(map[string]any{"azp": "lk_nope"}), secret), "invalid_token"},
		{"no API key", signJWT(t, hs256, claims(map[string]any{"azp": nil}), secret), "invalid_token"},
		{"not a JWT", "abc.def.ghi", "invalid_token"},
		{"truncated", good[:len(good)-4], "invalid_token"},
	}
	for _, tt := range attacks {
		t.Run(tt.name, func(t *testing.T) {
			r := s.post(t, "/users/token", tt.token, body)
			mustProblem(t, r, http.StatusUnauthorized, tt.code)
			if got := r.Header.Get("WWW-Authenticate"); got != `Bearer error="invalid_token"` {
				t.Errorf("WWW-Authenticate: got %q, want %q", got, `Bearer error="invalid_token"`)
			}
		})
	}

	schemes := []struct{ name, header string }{
		{"Basic scheme", "Basic " + base64.StdEncoding.EncodeToString([]byte(tn.APIKey+":"+tn.APISecret))},
		{"Bearer without a token", "Bearer "},
		{"token without a scheme", good},
	}
	for _, tt := range schemes {
		t.Run(tt.name, func(t *testing.T) {
			r := send(t, s.newRequest(t, http.MethodPost, "/users/token", strings.NewReader(body),
				"Content-Type", "application/json", "Authorization", tt.header))
			mustProblem(t, r, http.StatusUnauthorized, "invalid_token")
			if got := r.Header.Get("WWW-Authenticate"); got != `Bearer error="invalid_token"` {
				t.Errorf("WWW-Authenticate: got %q, want %q", got, `Bearer error="invalid_token"`)
			}
		})
	}
}

// TestTokenLifetime runs with LEDGER_TENANT_TOKEN_TTL=1s: expiresIn follows
// the setting, and the server's own token is rejected as expired once its
// lifetime and the 1 s leeway have passed.
func TestTokenLifetime(t *testing.T) {
	t.Parallel()
	s := startServer(t, map[string]string{"LEDGER_TENANT_TOKEN_TTL": "1s", "LEDGER_USER_TOKEN_TTL": "90m"})
	tn := s.createTenant(t, "Wonka")
	r := s.post(t, "/token", "", fmt.Sprintf(`{"apiKey":%q,"apiSecret":%q}`, tn.APIKey, tn.APISecret))
	checkToken(t, s, r, "tenant", tn.TenantID, "", time.Second)
	var tr tokenResponse
	mustDecode(t, r.Body, &tr)
	body := fmt.Sprintf(`{"userId":%q}`, tn.OwnerUserID)

	ur := s.post(t, "/users/token", tr.AccessToken, body)
	checkToken(t, s, ur, "user", tn.TenantID, tn.OwnerUserID, 90*time.Minute)

	time.Sleep(2500 * time.Millisecond)
	expired := s.post(t, "/users/token", tr.AccessToken, body)
	mustProblem(t, expired, http.StatusUnauthorized, "token_expired")
	if got := expired.Header.Get("WWW-Authenticate"); got != `Bearer error="invalid_token"` {
		t.Errorf("WWW-Authenticate: got %q, want %q", got, `Bearer error="invalid_token"`)
	}
}

// beforeKeyRotation starts a server with a tenant: it returns them, a
// POST /users/token body for the tenant's owner, a tenant token signed
// before any rotation and that token's kid.
func beforeKeyRotation(t *testing.T, tenant string) (s *testServer, tn tenant, body, before, kid string) {
	t.Helper()
	s = startServer(t, nil)
	tn = s.createTenant(t, tenant)
	body = fmt.Sprintf(`{"userId":%q}`, tn.OwnerUserID)
	before = s.tenantToken(t, tn.APIKey, tn.APISecret)
	h, _ := decodeJWT(t, before)
	return s, tn, body, before, h["kid"].(string)
}

// TestKeyRotation runs ledgerctl keys rotate under a running server: tokens
// signed before stay valid, and new tokens carry the new kid within 10 s.
func TestKeyRotation(t *testing.T) {
	t.Parallel()
	s, tn, body, before, oldKID := beforeKeyRotation(t, "Cyberdyne")

	var rotated struct {
		KID string `json:"kid"`
	}
	mustDecode(t, s.ledgerctl(t, "keys", "rotate"), &rotated)
	start := time.Now()
	if rotated.KID == "" || rotated.KID == oldKID {
		t.Fatalf("keys rotate: got kid %q, want a new kid (old %q)", rotated.KID, oldKID)
	}
	if r := s.post(t, "/users/token", before, body); r.Status != http.StatusOK {
		t.Fatalf("token signed before the rotation: got %d %s, want 200", r.Status, r.Body)
	}

	var after string
	for deadline := start.Add(12 * time.Second); ; {
		tok := s.tenantToken(t, tn.APIKey, tn.APISecret)
		if h, _ := decodeJWT(t, tok); h["kid"] == rotated.KID {
			after = tok
			break
		} else if h["kid"] != oldKID {
			t.Fatalf("kid: got %v, want %s or %s", h["kid"], oldKID, rotated.KID)
		}
		if time.Now().After(deadline) {
			t.Fatalf("new tokens still signed with %s %v after the rotation, want %s within 10 s", oldKID, time.Since(start), rotated.KID)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if took := time.Since(start); took > 11*time.Second {
		t.Errorf("new kid after %v, want within 10 s (+1 s slack)", took)
	}
	for name, tok := range map[string]string{"before": before, "after": after} {
		if r := s.post(t, "/users/token", tok, body); r.Status != http.StatusOK {
			t.Errorf("token signed %s the rotation: got %d %s, want 200", name, r.Status, r.Body)
		}
	}
}

// TestKeyRevocation runs ledgerctl keys rotate --revoke-previous (a leaked
// key) under a running server: within 10 s a token the old key signed is
// 401 and new tokens carry the new kid, and they work.
func TestKeyRevocation(t *testing.T) {
	t.Parallel()
	s, tn, body, before, oldKID := beforeKeyRotation(t, "Tyrell")

	var rotated struct {
		KID     string   `json:"kid"`
		Revoked []string `json:"revoked"`
	}
	mustDecode(t, s.ledgerctl(t, "keys", "rotate", "--revoke-previous"), &rotated)
	start := time.Now()
	if rotated.KID == "" || !slices.Contains(rotated.Revoked, oldKID) || slices.Contains(rotated.Revoked, rotated.KID) {
		t.Fatalf("keys rotate --revoke-previous: got %+v, want a new kid and %s revoked", rotated, oldKID)
	}
	for {
		r := s.post(t, "/users/token", before, body)
		if r.Status == http.StatusUnauthorized {
			break
		}
		if r.Status != http.StatusOK {
			t.Fatalf("token of the revoked key: got %d %s, want 200 then 401", r.Status, r.Body)
		}
		if time.Since(start) > 12*time.Second {
			t.Fatalf("token of the revoked key still accepted %v after the revocation, want 401 within 10 s", time.Since(start))
		}
		time.Sleep(200 * time.Millisecond)
	}
	after := s.tenantToken(t, tn.APIKey, tn.APISecret)
	if h, _ := decodeJWT(t, after); h["kid"] != rotated.KID {
		t.Fatalf("new token's kid: got %v, want %s", h["kid"], rotated.KID)
	}
	if r := s.post(t, "/users/token", after, body); r.Status != http.StatusOK {
		t.Fatalf("token of the new key: got %d %s, want 200", r.Status, r.Body)
	}
}
