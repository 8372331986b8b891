package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

// isoMillis is contract §1's timestamp format.
var isoMillis = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$`)

// keysOf returns the sorted member names of a JSON object.
func keysOf(t *testing.T, body []byte) []string {
	t.Helper()
	var m map[string]json.RawMessage
	mustDecode(t, body, &m)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func sameKeys(got []string, want ...string) bool {
	sort.Strings(want)
	return strings.Join(got, ",") == strings.Join(want, ",")
}

// checkToken checks a token response against contract §2: the body's
// members, the lifetime, and the JWT's header, claims and signature, decoded
// by hand. It returns the claims.
func checkToken(t *testing.T, s *testServer, r response, kind, tenantID, userID string, ttl time.Duration) map[string]any {
	t.Helper()
	if r.Status != http.StatusOK {
		t.Fatalf("status: got %d %s, want 200", r.Status, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type: got %q, want application/json", ct)
	}
	if cc, pragma := r.Header.Get("Cache-Control"), r.Header.Get("Pragma"); cc != "no-store" || pragma != "no-cache" {
		t.Errorf("Cache-Control, Pragma: got %q, %q; want no-store, no-cache (RFC 6749 §5.1)", cc, pragma)
	}
	want := []string{"accessToken", "tokenType", "expiresIn", "expiresAt"}
	if kind == "user" {
		want = append(want, "userId")
	}
	if got := keysOf(t, r.Body); !sameKeys(got, want...) {
		t.Errorf("body members: got %v, want %v", got, want)
	}
	var tr tokenResponse
	mustDecode(t, r.Body, &tr)
	if tr.TokenType != "Bearer" {
		t.Errorf("tokenType: got %q, want Bearer", tr.TokenType)
	}
	if tr.ExpiresIn != int64(ttl/time.Second) {
		t.Errorf("expiresIn: got %d, want %d", tr.ExpiresIn, int64(ttl/time.Second))
	}
	if kind == "user" && tr.UserID != userID {
		t.Errorf("userId: got %q, want %q", tr.UserID, userID)
	}
	if !isoMillis.MatchString(tr.ExpiresAt) {
		t.Errorf("expiresAt: got %q, want ISO 8601 UTC with milliseconds", tr.ExpiresAt)
	}

	header, claims := decodeJWT(t, tr.AccessToken)
	if header["alg"] != "HS256" {
		t.Errorf("header alg: got %v, want HS256", header["alg"])
	}
	kid, _ := header["kid"].(string)
	if kid == "" {
		t.Fatalf("header kid: got %v, want a key id", header["kid"])
	}
	key, err := s.app.keys.Verifying(context.Background(), kid)
	if err != nil {
		t.Fatalf("signing key %s: %v", kid, err)
	}
	secret := key.Secret
	parts := strings.Split(tr.AccessToken, ".")
	if got := hmacSignature(parts[0]+"."+parts[1], secret); got != parts[2] {
		t.Errorf("signature: got %s, want HMAC-SHA256 under key %s: %s", parts[2], kid, got)
	}

	wantSub := tenantID
	if kind == "user" {
		wantSub = userID
	}
	for name, want := range map[string]any{"iss": "ledger", "sub": wantSub, "tenantId": tenantID, "kind": kind} {
		if claims[name] != want {
			t.Errorf("claim %s: got %v, want %v", name, claims[name], want)
		}
	}
	if kind == "user" && claims["userId"] != userID {
		t.Errorf("claim userId: got %v, want %v", claims["userId"], userID)
	}
	if _, ok := claims["userId"]; kind == "tenant" && ok {
		t.Errorf("claim userId: got %v, want absent on a tenant token", claims["userId"])
	}
	if jti, _ := claims["jti"].(string); jti == "" {
		t.Errorf("claim jti: got %v, want a token id", claims["jti"])
	}
	iat, _ := claims["iat"].(float64)
	exp, _ := claims["exp"].(float64)
	if now := float64(time.Now().Unix()); iat < now-60 || iat > now+1 {
		t.Errorf("claim iat: got %v, want about %v", iat, now)
	}
	if exp-iat != ttl.Seconds() {
		t.Errorf("exp - iat: got %v, want %v", exp-iat, ttl.Seconds())
	}
	if want := time.Unix(int64(exp), 0).UTC().Format("2006-01-02T15:04:05.000Z"); tr.ExpiresAt != want {
		t.Errorf("expiresAt: got %s, want %s (the exp claim)", tr.ExpiresAt, want)
	}
	return claims
}

func TestTenantToken(t *testing.T) {
	t.Parallel()
	s := startServer(t, nil)
	tn := s.createTenant(t, "Acme")

	t.Run("ok", func(t *testing.T) {
		r := s.post(t, "/token", "", fmt.Sprintf(`{"apiKey":%q,"apiSecret":%q}`, tn.APIKey, tn.APISecret))
		claims := checkToken(t, s, r, "tenant", tn.TenantID, "", time.Hour)
		if claims["azp"] != tn.APIKey {
			t.Errorf("claim azp: got %v, want the API key %s", claims["azp"], tn.APIKey)
		}
	})
	t.Run("two tokens have distinct jti", func(t *testing.T) {
		_, a := decodeJWT(t, s.tenantToken(t, tn.APIKey, tn.APISecret))
		_, b := decodeJWT(t, s.tenantToken(t, tn.APIKey, tn.APISecret))
		if a["jti"] == b["jti"] {
			t.Errorf("jti: got %v twice, want distinct ids", a["jti"])
		}
	})

	bad := []struct {
		name, body string
	}{
		{"wrong secret", fmt.Sprintf(`{"apiKey":%q,"apiSecret":"lsk_wrong"}`, tn.APIKey)},
		{"secret of another shape", fmt.Sprintf(`{"apiKey":%q,"apiSecret":%q}`, tn.APIKey, tn.APISecret+"x")},
		{"unknown key", fmt.Sprintf(`{"apiKey":"lk_000000000000000000000000","apiSecret":%q}`, tn.APISecret)},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			mustProblem(t, s.post(t, "/token", "", tt.body), http.StatusUnauthorized, "invalid_credentials")
		})
	}

	missing := []struct {
		name, body, field string
	}{
		{"missing apiKey", fmt.Sprintf(`{"apiSecret":%q}`, tn.APISecret), "apiKey"},
		{"empty apiKey", fmt.Sprintf(`{"apiKey":"","apiSecret":%q}`, tn.APISecret), "apiKey"},
		{"missing apiSecret", fmt.Sprintf(`{"apiKey":%q}`, tn.APIKey), "apiSecret"},
		{"empty object", `{}`, "apiKey"},
	}
	for _, tt := range missing {
		t.Run(tt.name, func(t *testing.T) {
			p := mustProblem(t, s.post(t, "/token", "", tt.body), http.StatusBadRequest, "validation_failed")
			mustFieldError(t, p, tt.field)
		})
	}
}

// TestLedgerctlKeys runs the real ledgerctl binary: the JSON it prints
// (contract §2), a second key pair, and revocation taking effect at once for
// POST /token and for tokens already issued, tenant and user ones.
func TestLedgerctlKeys(t *testing.T) {
	t.Parallel()
	s := startServer(t, nil)

	out := s.ledgerctl(t, "tenant", "create", "--name", "Globex", "--email", "Owner@Globex.example")
	if got := keysOf(t, out); !sameKeys(got, "tenantId", "ownerUserId", "apiKey", "apiSecret") {
		t.Fatalf("tenant create members: got %v, want tenantId, ownerUserId, apiKey, apiSecret", got)
	}
	var tn tenant
	mustDecode(t, out, &tn)
	for name, v := range map[string]string{"tenantId": tn.TenantID, "ownerUserId": tn.OwnerUserID} {
		if id, err := uuid.Parse(v); err != nil || id.Version() != 7 {
			t.Errorf("%s: got %q, want a version 7 UUID", name, v)
		}
	}
	var role, email string
	s.queryRow(t, `SELECT role, email FROM users WHERE id = $1 AND tenant_id = $2`, []any{tn.OwnerUserID, tn.TenantID}, &role, &email)
	if role != "Admin" || email != "owner@globex.example" {
		t.Errorf("owner user: got role %q email %q, want Admin owner@globex.example", role, email)
	}

	out = s.ledgerctl(t, "apikey", "create", "--tenant", tn.TenantID)
	if got := keysOf(t, out); !sameKeys(got, "tenantId", "apiKey", "apiSecret") {
		t.Fatalf("apikey create members: got %v, want tenantId, apiKey, apiSecret", got)
	}
	var second tenant
	mustDecode(t, out, &second)
	if second.TenantID != tn.TenantID || second.APIKey == tn.APIKey || second.APISecret == tn.APISecret {
		t.Fatalf("apikey create: got %+v, want a new pair for tenant %s", second, tn.TenantID)
	}
	var stored string
	s.queryRow(t, `SELECT secret_hash FROM api_keys WHERE api_key = $1`, []any{second.APIKey}, &stored)
	if strings.Contains(stored, second.APISecret) || len(stored) != 64 {
		t.Errorf("stored secret: got %q, want only a 64-digit hash", stored)
	}

	tenantTok := s.tenantToken(t, second.APIKey, second.APISecret)
	_, claims := decodeJWT(t, tenantTok)
	if claims["tenantId"] != tn.TenantID {
		t.Errorf("second key's token tenantId: got %v, want %s", claims["tenantId"], tn.TenantID)
	}
	userTok := s.userToken(t, tenantTok, tn.OwnerUserID)
	firstTok := s.tenantToken(t, tn.APIKey, tn.APISecret)
	body := fmt.Sprintf(`{"userId":%q}`, tn.OwnerUserID)

	out = s.ledgerctl(t, "apikey", "revoke", second.APIKey)
	var revoked struct {
		APIKey  string `json:"apiKey"`
		Revoked bool   `json:"revoked"`
	}
	mustDecode(t, out, &revoked)
	if revoked.APIKey != second.APIKey || !revoked.Revoked {
		t.Errorf("apikey revoke: got %s, want apiKey %s revoked true", out, second.APIKey)
	}

	mustProblem(t, s.post(t, "/token", "", fmt.Sprintf(`{"apiKey":%q,"apiSecret":%q}`, second.APIKey, second.APISecret)),
		http.StatusUnauthorized, "invalid_credentials")
	r := s.post(t, "/users/token", tenantTok, body)
	mustProblem(t, r, http.StatusUnauthorized, "invalid_token")
	if got := r.Header.Get("WWW-Authenticate"); got != `Bearer error="invalid_token"` {
		t.Errorf("WWW-Authenticate: got %q, want Bearer error=\"invalid_token\"", got)
	}
	// A user token obtained with the revoked key dies with it. POST
	// /users/token is the only authenticated route; the user token is
	// rejected there before its kind is looked at.
	mustProblem(t, s.post(t, "/users/token", userTok, body), http.StatusUnauthorized, "invalid_token")
	// The tenant's other key is untouched.
	if r := s.post(t, "/users/token", firstTok, body); r.Status != http.StatusOK {
		t.Errorf("token of the other key: got %d %s, want 200", r.Status, r.Body)
	}
}

func TestUserToken(t *testing.T) {
	t.Parallel()
	s := startServer(t, nil)
	a := s.createTenant(t, "Initech")
	b := s.createTenant(t, "Hooli")
	tok := s.tenantToken(t, a.APIKey, a.APISecret)

	t.Run("ok", func(t *testing.T) {
		r := s.post(t, "/users/token", tok, fmt.Sprintf(`{"userId":%q}`, a.OwnerUserID))
		checkToken(t, s, r, "user", a.TenantID, a.OwnerUserID, 24*time.Hour)
	})
	t.Run("user token is forbidden", func(t *testing.T) {
		userTok := s.userToken(t, tok, a.OwnerUserID)
		mustProblem(t, s.post(t, "/users/token", userTok, fmt.Sprintf(`{"userId":%q}`, a.OwnerUserID)),
			http.StatusForbidden, "forbidden")
	})
	t.Run("no token", func(t *testing.T) {
		r := s.post(t, "/users/token", "", fmt.Sprintf(`{"userId":%q}`, a.OwnerUserID))
		mustProblem(t, r, http.StatusUnauthorized, "invalid_token")
		if got := r.Header.Get("WWW-Authenticate"); got != "Bearer" {
			t.Errorf("WWW-Authenticate: got %q, want Bearer", got)
		}
	})
	t.Run("invalid token", func(t *testing.T) {
		mustProblem(t, s.post(t, "/users/token", "not-a-jwt", fmt.Sprintf(`{"userId":%q}`, a.OwnerUserID)),
			http.StatusUnauthorized, "invalid_token")
	})

	bad := []struct {
		name, body string
		status     int
		code       string
		field      string
	}{
		{"missing userId", `{}`, http.StatusBadRequest, "validation_failed", "userId"},
		{"empty userId", `{"userId":""}`, http.StatusBadRequest, "validation_failed", "userId"},
		{"userId not a UUID", `{"userId":"owner"}`, http.StatusBadRequest, "validation_failed", "userId"},
		{"unknown user", fmt.Sprintf(`{"userId":%q}`, uuid.Must(uuid.NewV7())), http.StatusNotFound, "not_found", ""},
		{"user of another tenant", fmt.Sprintf(`{"userId":%q}`, b.OwnerUserID), http.StatusNotFound, "not_found", ""},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			p := mustProblem(t, s.post(t, "/users/token", tok, tt.body), tt.status, tt.code)
			if tt.field != "" {
				mustFieldError(t, p, tt.field)
			}
		})
	}
	t.Run("404 does not say which", func(t *testing.T) {
		absent := s.post(t, "/users/token", tok, fmt.Sprintf(`{"userId":%q}`, uuid.Must(uuid.NewV7())))
		foreign := s.post(t, "/users/token", tok, fmt.Sprintf(`{"userId":%q}`, b.OwnerUserID))
		if string(absent.Body) != string(foreign.Body) {
			t.Errorf("another tenant's user: got %s, want the same answer as an absent user: %s", foreign.Body, absent.Body)
		}
	})
}
