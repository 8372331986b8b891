package httpapi

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"

	"github.com/ledger/ledger/domain"
)

// Token kinds (contract §2).
const (
	KindTenant = "tenant"
	KindUser   = "user"
)

// claims are the JWT claims of both token kinds. azp (the OIDC "authorized
// party") carries the API key the token was obtained with, so revoking the
// key revokes its tokens at once.
type claims struct {
	jwt.RegisteredClaims
	TenantID string `json:"tenantId"`
	Kind     string `json:"kind"`
	UserID   string `json:"userId,omitempty"`
	APIKey   string `json:"azp"`
}

// tokenResponse is the body of POST /token and POST /users/token.
type tokenResponse struct {
	AccessToken string `json:"accessToken"`
	TokenType   string `json:"tokenType"`
	ExpiresIn   int64  `json:"expiresIn"`
	ExpiresAt   string `json:"expiresAt"`
	UserID      string `json:"userId,omitempty"`
}

// issue signs a token for caller c with lifetime ttl, or the key's
// lifetime for its kind when that is shorter: every instance verifies a
// token against the lifetime stored with its key, so a longer one would be
// refused (raise the key's lifetimes with ledgerctl keys rotate).
func (s *Server) issue(ctx context.Context, c Caller, ttl time.Duration) (tokenResponse, error) {
	key, err := s.keys.CurrentSigningKey(ctx)
	if err != nil {
		return tokenResponse{}, err
	}
	ttl = min(ttl, key.lifetime(c.Kind))
	now := s.now().UTC().Truncate(time.Second)
	exp := now.Add(ttl)
	cl := claims{
		RegisteredClaims: jwt.RegisteredClaims{Issuer: s.cfg.Issuer, Subject: c.TenantID.String(),
			IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(exp), ID: uuid.NewString()},
		TenantID: c.TenantID.String(), Kind: c.Kind, APIKey: c.APIKey,
	}
	if c.Kind == KindUser {
		cl.Subject, cl.UserID = c.UserID.String(), c.UserID.String()
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, cl)
	tok.Header["kid"] = key.ID
	signed, err := tok.SignedString(key.Secret)
	if err != nil {
		return tokenResponse{}, fmt.Errorf("sign token: %w", err)
	}
	resp := tokenResponse{AccessToken: signed, TokenType: "Bearer", ExpiresIn: int64(ttl / time.Second),
		ExpiresAt: exp.Format(domain.TimeFormat)}
	if c.Kind == KindUser {
		resp.UserID = c.UserID.String()
	}
	return resp, nil
}

var (
	errInvalidToken = domain.Errorf(domain.Unauthenticated, "invalid_token", "the access token is missing, malformed or invalid")
	errTokenExpired = domain.Errorf(domain.Unauthenticated, "token_expired", "the access token has expired; request a new one")
	errRevoked      = domain.Errorf(domain.Unauthenticated, "invalid_token", "the access token has been revoked")
)

// verify checks a bearer token's signature (HS256 only, key by kid, which
// may have signed it: SigningKey.mayHaveSigned), expiry (1 s leeway),
// issuer and claims, and returns its caller. Only what is stored with the
// key bounds a token, never this instance's own lifetimes, so every
// instance verifies what any of them signed. It does not check the API
// key's revocation; authenticate does.
func (s *Server) verify(ctx context.Context, raw string) (Caller, error) {
	var cl claims
	parser := jwt.NewParser(jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithIssuer(s.cfg.Issuer), jwt.WithLeeway(time.Second), jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(), jwt.WithTimeFunc(s.now))
	_, err := parser.ParseWithClaims(raw, &cl, func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		if kid == "" {
			return nil, errors.New("no kid")
		}
		key, err := s.keys.SigningKey(ctx, kid)
		if err != nil {
			return nil, err
		}
		// The claims are not verified yet: a token that fails this check
		// is refused whatever its signature, one that passes must still
		// verify.
		if cl.IssuedAt == nil || cl.ExpiresAt == nil || !key.mayHaveSigned(cl.Kind, cl.IssuedAt.Time, cl.ExpiresAt.Time) {
			return nil, errors.New("the token lives longer than its signing key allows")
		}
		return key.Secret, nil
	})
	if errors.Is(err, jwt.ErrTokenExpired) {
		return Caller{}, errTokenExpired
	}
	if err != nil {
		var de *domain.Error
		if errors.As(err, &de) && de.Kind == domain.Internal {
			return Caller{}, err
		}
		return Caller{}, errInvalidToken
	}
	c := Caller{Kind: cl.Kind, APIKey: cl.APIKey}
	if c.TenantID, err = uuid.Parse(cl.TenantID); err != nil || cl.APIKey == "" {
		return Caller{}, errInvalidToken
	}
	switch cl.Kind {
	case KindTenant:
		if cl.Subject != cl.TenantID || cl.UserID != "" {
			return Caller{}, errInvalidToken
		}
	case KindUser:
		if c.UserID, err = uuid.Parse(cl.UserID); err != nil || cl.Subject != cl.UserID {
			return Caller{}, errInvalidToken
		}
	default:
		return Caller{}, errInvalidToken
	}
	return c, nil
}
