package keys_test

import (
	"testing"
	"time"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore/keys"
	"github.com/ledger/ledger/eventstore/storetest"
	"github.com/ledger/ledger/eventstore/testenv"
)

var testLifetimes = keys.TokenLifetimes{Tenant: time.Hour, User: 24 * time.Hour}

// fakeClock is a clock shared by the instances of a test, which the test
// moves instead of waiting.
type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time { return c.now }

// newTestKeys is an instance's key store, on clock.
func newTestKeys(k *keys.SigningKeys, clock *fakeClock) *keys.SigningKeys {
	k.SetClock(clock.Now)
	return k
}

// A rotation publishes the new key before any instance signs with it:
// whatever moments three instances read the keys at, none signs with a
// key that another, having read the keys as often as it does, does not
// know; and each signs with the new key once its signs_from has passed.
func TestRotationPublishesBeforeSigning(t *testing.T) {
	t.Parallel()
	ctx := testenv.Context(t, 60*time.Second)
	pool := storetest.Migrated(t, 4)
	master := storetest.MasterKeys(t)
	if err := keys.EnsureKey(ctx, pool, master, testLifetimes); err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{now: time.Now()}
	start := clock.now
	instances := []*keys.SigningKeys{newTestKeys(keys.NewSigningKeys(pool, master), clock), newTestKeys(keys.NewSigningKeys(pool, master), clock), newTestKeys(keys.NewSigningKeys(pool, master), clock)}
	// The instances read the keys at different moments (0, 3 s, 6.5 s),
	// the first just before the rotation.
	phases := []time.Duration{0, 3 * time.Second, 6500 * time.Millisecond}
	first, err := instances[0].Signing(ctx)
	if err != nil {
		t.Fatal(err)
	}
	second, _, err := keys.RotateKey(ctx, pool, master, false, testLifetimes)
	if err != nil {
		t.Fatal(err)
	}
	switched := make([]bool, len(instances))
	for shift := time.Duration(0); shift <= 3*keys.KeyCacheAge; shift += 250 * time.Millisecond {
		clock.now = start.Add(shift)
		for i, inst := range instances {
			if shift < phases[i] {
				continue
			}
			key, err := inst.Signing(ctx)
			if err != nil {
				t.Fatal(err)
			}
			switched[i] = key.KID == second
			if key.KID != first.KID && key.KID != second {
				t.Fatalf("at %v instance %d signs with %s, want %s or %s", shift, i, key.KID, first.KID, second)
			}
			for j, other := range instances {
				if j == i || shift < phases[j] {
					continue
				}
				if _, err := other.Signing(ctx); err != nil { // reads the keys as the cache ages
					t.Fatal(err)
				}
				if !other.Knows(key.KID) {
					t.Fatalf("at %v instance %d signs with %s, which instance %d does not know", shift, i, key.KID, j)
				}
			}
		}
	}
	for i, ok := range switched {
		if !ok {
			t.Errorf("instance %d: still signs with %s after %v, want %s", i, first.KID, 3*keys.KeyCacheAge, second)
		}
	}
	var publishedFor time.Duration
	if err := pool.QueryRow(ctx, `SELECT signs_from - created_at FROM signing_keys WHERE kid = $1`, second).Scan(&publishedFor); err != nil || publishedFor != keys.KeyCacheAge {
		t.Errorf("%s: signs %v after it was made (%v), want %v", second, publishedFor, err, keys.KeyCacheAge)
	}
}

// A key carries the lifetimes it was made with, and is retired at its
// successor's signs_from; revocation takes every earlier key out, the new
// key signs at once, and an instance that had them cached stops verifying
// with them once its cache is KeyCacheAge old.
func TestSigningKeysRetireAndRevoke(t *testing.T) {
	t.Parallel()
	ctx := testenv.Context(t, 30*time.Second)
	pool := storetest.Migrated(t, 2)
	master := storetest.MasterKeys(t)
	short := keys.TokenLifetimes{Tenant: 2 * time.Second, User: 3 * time.Second}
	if err := keys.EnsureKey(ctx, pool, master, short); err != nil {
		t.Fatal(err)
	}
	signing := keys.NewSigningKeys(pool, master)
	clock := &fakeClock{now: time.Now()}
	signing.SetClock(clock.Now)
	first, err := signing.Signing(ctx)
	if err != nil || first.Lifetimes != short || !first.RetiredAt.IsZero() {
		t.Fatalf("first key: got %+v %v, want lifetimes %v, not retired", first, err, short)
	}
	second, revoked, err := keys.RotateKey(ctx, pool, master, false, testLifetimes)
	if err != nil || len(revoked) != 0 {
		t.Fatalf("rotate: got %v %v, want nothing revoked", revoked, err)
	}
	var secondSignsFrom time.Time
	if err := pool.QueryRow(ctx, `SELECT signs_from FROM signing_keys WHERE kid = $1`, second).Scan(&secondSignsFrom); err != nil {
		t.Fatal(err)
	}
	clock.now = clock.now.Add(keys.KeyCacheAge)
	if got, err := signing.Verifying(ctx, first.KID); err != nil || !got.RetiredAt.Equal(secondSignsFrom) || got.Lifetimes != short {
		t.Fatalf("first key: got %+v (%v), want retired at %v with lifetimes %v", got, err, secondSignsFrom, short)
	}
	if got, err := signing.Verifying(ctx, second); err != nil || !got.RetiredAt.IsZero() || got.Lifetimes != testLifetimes {
		t.Fatalf("second key: got %+v (%v), want not retired, lifetimes %v", got, err, testLifetimes)
	}

	third, revoked, err := keys.RotateKey(ctx, pool, master, true, testLifetimes)
	if err != nil || len(revoked) != 2 || !(revoked[0] == first.KID && revoked[1] == second || revoked[0] == second && revoked[1] == first.KID) {
		t.Fatalf("rotate --revoke-previous: got %v %v, want %s and %s revoked", revoked, err, first.KID, second)
	}
	// Within its cache age the instance still knows the revoked keys...
	if _, err := signing.Verifying(ctx, second); err != nil {
		t.Fatalf("second key within the cache age: %v", err)
	}
	// ...and after it, they are unknown, and the new key signs at once.
	clock.now = clock.now.Add(keys.KeyCacheAge)
	for _, kid := range []string{first.KID, second} {
		if _, err := signing.Verifying(ctx, kid); domain.ErrorKind(err) != domain.Unauthenticated {
			t.Errorf("revoked key %s: got %v, want Unauthenticated", kid, err)
		}
	}
	if got, err := signing.Signing(ctx); err != nil || got.KID != third {
		t.Fatalf("current key: got %s %v, want %s", got.KID, err, third)
	}
}

// Keys made before lifetimes were stored get those of the first instance
// that starts; later instances change nothing.
func TestEnsureKeyGivesOldKeysLifetimes(t *testing.T) {
	t.Parallel()
	ctx := testenv.Context(t, 30*time.Second)
	pool := storetest.Migrated(t, 2)
	master := storetest.MasterKeys(t)
	if _, err := pool.Exec(ctx, `INSERT INTO signing_keys (kid, clear_secret, signs_from) VALUES ('old', '\x00', now())`); err != nil {
		t.Fatal(err)
	}
	if err := keys.EnsureKey(ctx, pool, master, testLifetimes); err != nil {
		t.Fatal(err)
	}
	if err := keys.EnsureKey(ctx, pool, master, keys.TokenLifetimes{Tenant: time.Second, User: time.Second}); err != nil {
		t.Fatal(err)
	}
	var n int
	var got keys.TokenLifetimes
	if err := pool.QueryRow(ctx, `SELECT count(*) OVER (), tenant_token_ttl, user_token_ttl FROM signing_keys`).Scan(&n, &got.Tenant, &got.User); err != nil || n != 1 || got != testLifetimes {
		t.Errorf("keys: got %d with lifetimes %v (%v), want the old key alone with %v", n, got, err, testLifetimes)
	}
}
