package httpapi

import (
	"context"
	"time"
)

// SigningKeys are the shared JWT keys (eventstore.Keys).
type SigningKeys interface {
	CurrentSigningKey(ctx context.Context) (kid string, secret []byte, err error)
	// SigningKey is a key that verifies and when it was retired: zero for
	// the key that signs now, else the moment no instance signed with it
	// any more. A revoked or unknown kid is Unauthenticated.
	SigningKey(ctx context.Context, kid string) (secret []byte, retiredAt time.Time, err error)
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
