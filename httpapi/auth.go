package httpapi

import (
	"context"
	"net/http"
	"strings"

	"github.com/google/uuid"

	"github.com/ledger/ledger/domain"
)

// Caller is the authenticated principal of a request: a tenant, or one user
// of a tenant.
type Caller struct {
	TenantID uuid.UUID
	UserID   uuid.UUID // Nil for tenant tokens
	Kind     string    // KindTenant or KindUser
	APIKey   string    // the credential the token descends from
}

// Actor names the caller in event metadata.
func (c Caller) Actor() string {
	if c.Kind == KindUser {
		return "user:" + c.UserID.String()
	}
	return "apikey:" + c.APIKey
}

type callerKey struct{}

func callerFrom(ctx context.Context) (Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(Caller)
	return c, ok
}

// authenticate admits requests with a valid, unrevoked bearer token whose
// user (for user tokens) is still active, and puts its Caller in the context.
// The token's API key (azp; user tokens carry the key they descend from)
// is rate limited as soon as the signature proves it, before the
// revocation check costs a query.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return s.route(func(w http.ResponseWriter, r *http.Request) error {
		scheme, raw, ok := strings.Cut(r.Header.Get("Authorization"), " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") || raw == "" {
			return errInvalidToken
		}
		c, err := s.verify(r.Context(), strings.TrimSpace(raw))
		if err != nil {
			return err
		}
		if wait := s.apiKeyLimits.take(c.APIKey, s.now()); wait > 0 {
			return rateLimited(w, wait)
		}
		active, err := s.credentials.PrincipalActive(r.Context(), c.TenantID, c.APIKey, c.UserID)
		if err != nil {
			return err
		}
		if !active {
			return errRevoked
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), callerKey{}, c)))
		return nil
	})
}

var errTenantTokenRequired = domain.Errorf(domain.Forbidden, "forbidden", "this operation needs a tenant token")

// tenantCaller returns the caller when it holds a tenant token, else 403.
func tenantCaller(r *http.Request) (Caller, error) {
	c, err := anyCaller(r)
	if err != nil {
		return c, err
	}
	if c.Kind != KindTenant {
		return Caller{}, errTenantTokenRequired
	}
	return c, nil
}

// anyCaller returns the caller of any token kind.
func anyCaller(r *http.Request) (Caller, error) {
	c, ok := callerFrom(r.Context())
	if !ok {
		return c, errInvalidToken
	}
	return c, nil
}

// metadata is the event metadata of the request's caller.
func metadata(r *http.Request) domain.Metadata {
	c, _ := callerFrom(r.Context())
	id := requestIDFrom(r.Context())
	return domain.Metadata{Actor: c.Actor(), RequestID: id, CorrelationID: id}
}
