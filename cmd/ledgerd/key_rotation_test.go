package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

// TestKeyRotationAcrossInstances: two instances with different token
// lifetimes share one database; after ledgerctl keys rotate, a token
// either signed verifies on both until it expires, neither signs with the
// new key before the other knows it, and both bound tokens by the
// lifetimes stored with the key, never by their own settings. The keys'
// clock is moved instead of waiting for the caches to age.
func TestKeyRotationAcrossInstances(t *testing.T) {
	t.Parallel()
	a := startServer(t, nil)
	b := startServer(t, onStore(a, map[string]string{"LEDGER_TENANT_TOKEN_TTL": "1m", "LEDGER_USER_TOKEN_TTL": "1m"}))
	var fixed atomic.Pointer[time.Time] // nil: the real time
	clock := func() time.Time {
		if at := fixed.Load(); at != nil {
			return *at
		}
		return time.Now()
	}
	a.app.keys.SetClock(clock)
	b.app.keys.SetClock(clock)
	moveTo := func(at time.Time) { fixed.Store(&at) }

	tn := a.createTenant(t, "Vandelay")
	issue := func(s *testServer) (token, kid string, ttl time.Duration) {
		t.Helper()
		r := s.post(t, "/token", "", fmt.Sprintf(`{"apiKey":%q,"apiSecret":%q}`, tn.APIKey, tn.APISecret))
		if r.Status != http.StatusOK {
			t.Fatalf("POST /token: got %d %s, want 200", r.Status, r.Body)
		}
		var tr tokenResponse
		mustDecode(t, r.Body, &tr)
		header, _ := decodeJWT(t, tr.AccessToken)
		kid, _ = header["kid"].(string)
		return tr.AccessToken, kid, time.Duration(tr.ExpiresIn) * time.Second
	}
	accepted := func(s *testServer, token string) int {
		t.Helper()
		return s.post(t, "/users/token", token, `{"userId":"`+tn.OwnerUserID+`"}`).Status
	}
	mustAccept := func(when string, token string, servers ...*testServer) {
		t.Helper()
		for _, s := range servers {
			if got := accepted(s, token); got != http.StatusOK {
				t.Errorf("%s: a token on %s: got %d, want 200", when, map[*testServer]string{a: "a", b: "b"}[s], got)
			}
		}
	}

	old, oldKID, ttl := issue(a)
	if ttl != time.Hour {
		t.Fatalf("a's tenant token: got %v, want an hour", ttl)
	}
	if _, _, ttl := issue(b); ttl != time.Minute {
		t.Fatalf("b's tenant token: got %v, want its own minute", ttl)
	}
	mustAccept("before the rotation", old, a, b)

	var rotated struct {
		KID string `json:"kid"`
	}
	if err := json.Unmarshal(a.ledgerctl(t, "keys", "rotate"), &rotated); err != nil || rotated.KID == "" {
		t.Fatalf("keys rotate: got %+v %v, want a kid", rotated, err)
	}

	var signsFrom time.Time
	a.queryRow(t, `SELECT signs_from FROM signing_keys WHERE kid = $1`, []any{rotated.KID}, &signsFrom)

	// Both read the keys again (their copies are over 9 s old); the new
	// key is not due to sign yet.
	moveTo(signsFrom.Add(-500 * time.Millisecond))
	mustAccept("once b knows the new key", old, b, a)
	token, kid, _ := issue(a)
	if kid != oldKID {
		t.Errorf("a signs with %s before the new key is due, want %s", kid, oldKID)
	}
	mustAccept("a's token before the new key signs", token, b)

	// The new key signs on both.
	moveTo(signsFrom.Add(500 * time.Millisecond))
	for _, s := range []*testServer{a, b} {
		token, kid, _ := issue(s)
		if kid != rotated.KID {
			t.Errorf("after the rotation: signed with %s, want %s", kid, rotated.KID)
		}
		mustAccept("after the rotation", token, a, b)
	}
	mustAccept("the old key's token after the rotation", old, a, b)

	// Fifty minutes on, the hour-long token still verifies everywhere.
	moveTo(signsFrom.Add(50 * time.Minute))
	mustAccept("fifty minutes on", old, a, b)

	// A token longer-lived than the new key allows is refused by both,
	// though it is signed with the key that signs now.
	newKID, secret := a.signingKey(t)
	if newKID != rotated.KID {
		t.Fatalf("newest key: got %s, want %s", newKID, rotated.KID)
	}
	_, claims := decodeJWT(t, old)
	now := time.Now().Unix()
	claims["iat"], claims["exp"] = now, now+2*3600
	forged := signJWT(t, map[string]any{"alg": "HS256", "typ": "JWT", "kid": newKID}, claims, secret)
	for _, s := range []*testServer{a, b} {
		if got := accepted(s, forged); got != http.StatusUnauthorized {
			t.Errorf("a two-hour token under a one-hour key: got %d, want 401", got)
		}
	}
}
