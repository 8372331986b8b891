package eventstore

import (
	"testing"
	"time"

	"github.com/ledger/ledger/domain"
)

// Rotation retires the previous key KeyCacheAge after its successor was
// made; revocation takes every earlier key out, and an instance that had
// them cached stops verifying with them once its cache is KeyCacheAge old.
func TestSigningKeysRetireAndRevoke(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, 30*time.Second)
	pool := mustMigrated(t, 2)
	first, _, err := RotateKey(ctx, pool, false)
	if err != nil {
		t.Fatal(err)
	}
	second, revoked, err := RotateKey(ctx, pool, false)
	if err != nil || len(revoked) != 0 {
		t.Fatalf("rotate: got %v %v, want nothing revoked", revoked, err)
	}
	var secondMade time.Time
	if err := pool.QueryRow(ctx, `SELECT created_at FROM signing_keys WHERE kid = $1`, second).Scan(&secondMade); err != nil {
		t.Fatal(err)
	}

	now := time.Now()
	keys := NewKeys(pool)
	keys.now = func() time.Time { return now }
	if kid, _, err := keys.CurrentSigningKey(ctx); err != nil || kid != second {
		t.Fatalf("current key: got %s %v, want %s", kid, err, second)
	}
	if _, retired, err := keys.SigningKey(ctx, first); err != nil || !retired.Equal(secondMade.Add(KeyCacheAge)) {
		t.Fatalf("first key: retired at %v (%v), want %v", retired, err, secondMade.Add(KeyCacheAge))
	}
	if _, retired, err := keys.SigningKey(ctx, second); err != nil || !retired.IsZero() {
		t.Fatalf("second key: retired at %v (%v), want not retired", retired, err)
	}

	third, revoked, err := RotateKey(ctx, pool, true)
	if err != nil || len(revoked) != 2 || !(revoked[0] == first && revoked[1] == second || revoked[0] == second && revoked[1] == first) {
		t.Fatalf("rotate --revoke-previous: got %v %v, want %s and %s revoked", revoked, err, first, second)
	}
	// Within its cache age the instance still knows the revoked keys...
	if _, _, err := keys.SigningKey(ctx, second); err != nil {
		t.Fatalf("second key within the cache age: %v", err)
	}
	// ...and after it, they are unknown, and the new key signs.
	now = now.Add(KeyCacheAge + time.Millisecond)
	for _, kid := range []string{first, second} {
		if _, _, err := keys.SigningKey(ctx, kid); domain.ErrorKind(err) != domain.Unauthenticated {
			t.Errorf("revoked key %s: got %v, want Unauthenticated", kid, err)
		}
	}
	if _, retired, err := keys.SigningKey(ctx, third); err != nil || !retired.IsZero() {
		t.Fatalf("third key: retired at %v (%v), want the current key", retired, err)
	}
	if kid, _, err := keys.CurrentSigningKey(ctx); err != nil || kid != third {
		t.Fatalf("current key: got %s %v, want %s", kid, err, third)
	}
}
