package httpapi

import (
	"context"
	"time"
)

// SigningKeys are the shared JWT keys (keys.SigningKeys).
type SigningKeys interface {
	// CurrentSigningKey is the key new tokens are signed with.
	CurrentSigningKey(ctx context.Context) (SigningKey, error)
	// SigningKey is the key kid, if it verifies. A revoked or unknown kid
	// is Unauthenticated.
	SigningKey(ctx context.Context, kid string) (SigningKey, error)
}

// SigningKey is a JWT signing key and the bounds stored with it. The
// bounds are the same on every instance, whatever each one's settings, so
// a token verifies on all of them or on none.
type SigningKey struct {
	ID     string
	Secret []byte
	// RetiredAt is when every instance stops (or stopped) signing with the
	// key; zero while no successor is scheduled.
	RetiredAt time.Time
	// TenantTokenTTL and UserTokenTTL are the longest lifetimes of the
	// tokens of each kind the key signs, on any instance.
	TenantTokenTTL, UserTokenTTL time.Duration
}

// lifetime is the longest a token of kind signed with k lives (0 for a
// kind that is none of them: such a token is refused).
func (k SigningKey) lifetime(kind string) time.Duration {
	switch kind {
	case KindTenant:
		return k.TenantTokenTTL
	case KindUser:
		return k.UserTokenTTL
	}
	return 0
}

// mayHaveSigned tells whether k can have signed a token of kind issued at
// iat and expiring at exp: no longer-lived than k allows for its kind, and
// signed no later than k's retirement. Anything else was forged with a
// leaked key (or signed by an instance that broke the rules), and is
// refused however long the partner takes to notice the leak.
func (k SigningKey) mayHaveSigned(kind string, iat, exp time.Time) bool {
	lifetime := k.lifetime(kind)
	return exp.Sub(iat) <= lifetime && signedBeforeRetirement(k.RetiredAt, exp, lifetime)
}

// retiredKeySlack is how far past its retirement, beyond the lifetime of
// what it signs, a retired key's signature may expire: the clocks of the
// instances that signed and of Postgres, which dated the rotation, may
// differ by that much.
const retiredKeySlack = time.Minute

// signedBeforeRetirement tells whether something signed with a key retired
// at retiredAt and expiring at exp can have been signed by this service:
// signed no later than retiredAt, with lifetime.
func signedBeforeRetirement(retiredAt, exp time.Time, lifetime time.Duration) bool {
	return retiredAt.IsZero() || !exp.After(retiredAt.Add(lifetime+retiredKeySlack))
}
