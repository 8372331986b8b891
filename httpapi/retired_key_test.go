package httpapi

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
)

// A key verifies only what it can have signed: no token living longer
// than the key's lifetime for its kind, and, once it no longer signs (k1,
// retired at k1RetiredAt), nothing that outlives its retirement by more
// than that lifetime (a minute of slack for clocks): a token or URL forged
// with a leaked old key is refused, however long the partner takes to
// notice. The bounds are the key's, not the verifying instance's: this one
// signs for 2 s and verifies the hour-long tokens of another.
func TestRetiredKeyVerifiesOnlyWhatItCanHaveSigned(t *testing.T) {
	t.Parallel()
	s := New(Config{TenantTokenTTL: 2 * time.Second, UserTokenTTL: 2 * time.Second},
		Deps{Registry: prometheus.NewRegistry(), Log: slog.New(slog.DiscardHandler), Keys: testKeys})
	now := k1RetiredAt.Add(30 * time.Minute)
	s.now = func() time.Time { return now }
	tenantID, userID := uuid.New(), uuid.New()
	token := func(kid, kind string, iat, exp time.Time) string {
		cl := claims{RegisteredClaims: jwt.RegisteredClaims{Issuer: "ledger", Subject: tenantID.String(), ID: "jti",
			IssuedAt: jwt.NewNumericDate(iat), ExpiresAt: jwt.NewNumericDate(exp)},
			TenantID: tenantID.String(), Kind: kind, APIKey: "key"}
		if kind == KindUser {
			cl.Subject, cl.UserID = userID.String(), userID.String()
		}
		tok := jwt.NewWithClaims(jwt.SigningMethodHS256, cl)
		tok.Header["kid"] = kid
		signed, err := tok.SignedString(testKeys[kid].Secret)
		if err != nil {
			t.Fatal(err)
		}
		return signed
	}
	retired := k1RetiredAt
	for _, tt := range []struct {
		name     string
		kid      string
		kind     string
		iat, exp time.Time
		ok       bool
	}{
		{"tenant token signed as k1 retired", "k1", KindTenant, retired, retired.Add(time.Hour), true},
		{"tenant token within the clock slack", "k1", KindTenant, retired.Add(time.Minute), retired.Add(time.Hour + time.Minute), true},
		{"tenant token outliving k1", "k1", KindTenant, retired.Add(time.Minute + time.Second), retired.Add(time.Hour + time.Minute + time.Second), false},
		{"tenant token forged with a later iat", "k1", KindTenant, now, now.Add(time.Hour), false},
		{"user token signed as k1 retired", "k1", KindUser, retired, retired.Add(24 * time.Hour), true},
		{"user token outliving k1", "k1", KindUser, retired, retired.Add(25 * time.Hour), false},
		{"tenant token a second longer than k1 allows", "k1", KindTenant, retired, retired.Add(time.Hour + time.Second), false},
		{"the current key signs for its lifetime", "k2", KindTenant, now, now.Add(time.Hour), true},
		{"the current key, a tenant token outliving its lifetime", "k2", KindTenant, now, now.Add(time.Hour + time.Second), false},
		{"the current key, a user token outliving its lifetime", "k2", KindUser, now, now.Add(48 * time.Hour), false},
		{"the current key, a user token for a day", "k2", KindUser, now.Add(-time.Hour), now.Add(23 * time.Hour), true},
	} {
		_, err := s.verify(context.Background(), token(tt.kid, tt.kind, tt.iat, tt.exp))
		if tt.ok && err != nil {
			t.Errorf("%s: got %v, want it verified", tt.name, err)
		}
		if !tt.ok && errorCode(err) != "invalid_token" {
			t.Errorf("%s: got %v, want invalid_token", tt.name, err)
		}
	}

	// Presigned URLs: 900 s is their lifetime.
	p := testPresigner(&now)
	id := uuid.New()
	for _, tt := range []struct {
		expires time.Time
		ok      bool
	}{
		{retired.Add(presignTTL), true},
		{retired.Add(presignTTL + time.Minute), true},
		{retired.Add(presignTTL + time.Minute + time.Second), false},
	} {
		path, query, _ := strings.Cut(presignedPath(id, tt.expires.Unix(), "k1", testKeys["k1"].Secret), "?")
		now = retired.Add(time.Second) // before every expiry
		_, err := p.Verify(context.Background(), path, query)
		if tt.ok != (err == nil) {
			t.Errorf("URL signed by k1 expiring %v after its retirement: got %v, want verified %v", tt.expires.Sub(retired), err, tt.ok)
		}
	}
}
