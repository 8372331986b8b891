package httpapi

import (
	"context"
	"encoding/base64"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/ledger/ledger/domain"
)

// FuzzVerifyToken feeds any bearer token to the verifier. Seeds are
// tokens as the server issues them: a tenant token, a user token, one
// signed with the older key, and variants a careless verifier takes (alg
// none, HS512, no kid, no signature). A refusal is always a 401; a token is accepted only if it is,
// segment by segment once base64url-decoded, one the server issued, and
// then it names that token's caller: HS256 cannot be forged by mutation.
func FuzzVerifyToken(f *testing.F) {
	fx := newFixture(f)
	s, now := fx.s, fx.s.now()
	for _, c := range []Caller{fx.tenant, fx.self} {
		resp, err := s.issue(context.Background(), c, time.Hour)
		if err != nil {
			f.Fatal(err)
		}
		if got, err := s.verify(context.Background(), resp.AccessToken); err != nil || got != c {
			f.Fatalf("issued token: got %+v, %v, want %+v", got, err, c)
		}
	}
	// issue puts a random jti in each token; the fuzzer's worker processes
	// need the same tokens as the coordinator, so these are signed here.
	issued := map[string]Caller{}
	for _, tc := range []struct {
		c   Caller
		kid string
	}{{fx.tenant, "k2"}, {fx.self, "k2"}, {fx.tenant, "k1"}} {
		cl := claims{RegisteredClaims: jwt.RegisteredClaims{Issuer: "ledger", Subject: tc.c.TenantID.String(), ID: "jti",
			IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(time.Hour))},
			TenantID: tc.c.TenantID.String(), Kind: tc.c.Kind, APIKey: tc.c.APIKey}
		if tc.c.Kind == KindUser {
			cl.Subject, cl.UserID = tc.c.UserID.String(), tc.c.UserID.String()
		}
		tok := jwt.NewWithClaims(jwt.SigningMethodHS256, cl)
		tok.Header["kid"] = tc.kid
		signed, err := tok.SignedString(testKeys[tc.kid].Secret)
		if err != nil {
			f.Fatal(err)
		}
		issued[signed] = tc.c
	}
	for tok, c := range issued {
		if got, err := s.verify(context.Background(), tok); err != nil || got != c {
			f.Fatalf("signed token: got %+v, %v, want %+v", got, err, c)
		}
		f.Add(tok)
		header, rest, _ := strings.Cut(tok, ".")
		for _, h := range []string{`{"alg":"none","kid":"k2","typ":"JWT"}`, `{"alg":"HS512","kid":"k2","typ":"JWT"}`, `{"alg":"HS256","typ":"JWT"}`} {
			f.Add(base64.RawURLEncoding.EncodeToString([]byte(h)) + "." + rest)
		}
		f.Add(header + "." + strings.TrimRight(rest, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") + ".")
	}
	f.Add("")
	f.Add("..")
	f.Fuzz(func(t *testing.T, raw string) {
		got, err := s.verify(context.Background(), raw)
		if err != nil {
			if domain.ErrorKind(err) != domain.Unauthenticated {
				t.Fatalf("verify(%q): got %v, want a 401", raw, err)
			}
			return
		}
		for tok, c := range issued {
			if sameSegments(raw, tok) {
				if got != c {
					t.Fatalf("verify(%q): got %+v, want %+v", raw, got, c)
				}
				return
			}
		}
		t.Fatalf("verify(%q): accepted %+v, a token the server never issued", raw, got)
	})
}

// sameSegments reports whether two compact JWTs decode to the same three
// segments (base64url without padding tolerates spare trailing bits).
func sameSegments(a, b string) bool {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	if len(as) != 3 || len(bs) != 3 {
		return false
	}
	for i := range as {
		x, errX := base64.RawURLEncoding.DecodeString(as[i])
		y, errY := base64.RawURLEncoding.DecodeString(bs[i])
		if errX != nil || errY != nil || !slices.Equal(x, y) {
			return false
		}
	}
	return true
}
