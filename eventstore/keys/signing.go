// Package keys holds the service's keys: the master key, which stays on
// each host, and the keys stored wrapped under it in the event store's
// database: the JWT signing keys and the keys every instance shares for
// its MACs. Package sealing keeps the sealing keys; their wrapping is here
// too, so that changing the master key re-wraps every stored key at once.
package keys

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledger/ledger/domain"
)

// KeyCacheAge bounds how long an instance keeps its copy of the keys: a
// rotation reaches every instance within it (contract §2: within 10 s
// every instance signs with the new key), and so does a revocation.
const KeyCacheAge = 10 * time.Second

// keyReloadAge is the cache age at which an instance reads the keys again:
// a second under KeyCacheAge, which covers the time between a key's
// created_at and the commit that publishes it, and a load's round trip.
const keyReloadAge = KeyCacheAge - time.Second

// SigningKeys is the shared store of JWT signing keys, cached per process.
//
// The rule, which holds on every instance whatever its own settings:
//
//   - A key is published before it signs. A rotation stores the new key
//     with signs_from = created_at + KeyCacheAge; an instance signs with
//     the newest key whose signs_from has passed. Every instance reads the
//     keys again once its copy is keyReloadAge old, so by signs_from every
//     instance knows the key, and none refuses a token it signed. The
//     instances' clocks may run up to a second ahead of Postgres's for
//     that; and an instance that meets an unknown kid reads the keys again
//     if its copy is over a second old, which covers clocks up to
//     KeyCacheAge less two seconds ahead.
//   - A key is retired at the signs_from of the next key: from then on no
//     instance signs with it. It still verifies what it signed until that
//     expires.
//   - What a key may sign is stored with it: the longest tenant and user
//     token lifetimes. A verifier bounds a token by them only, so a token
//     verifies on every instance until it expires, and a token forged with
//     a leaked retired key is refused once it outlives the key's
//     retirement by more than its lifetime.
//   - A revoked key (rotate --revoke-previous) verifies nothing once an
//     instance has read the keys again; its successor signs at once, as
//     nothing else may.
//
// The secrets are stored wrapped under the master key (MasterKeys).
type SigningKeys struct {
	pool   *pgxpool.Pool
	master *MasterKeys
	now    func() time.Time

	mu       sync.Mutex
	keys     []SigningKey // oldest first
	byKID    map[string]SigningKey
	loadedAt time.Time
}

// SigningKey is a stored key and the bounds stored with it.
type SigningKey struct {
	KID       string
	Secret    []byte
	SignsFrom time.Time
	// RetiredAt is the earliest SignsFrom of the later keys; zero for the
	// newest key.
	RetiredAt time.Time
	Lifetimes TokenLifetimes
}

// TokenLifetimes are the longest lifetimes of the tokens a key signs.
type TokenLifetimes struct {
	Tenant, User time.Duration
}

// NewSigningKeys returns the key store over pool, whose keys master unwraps.
func NewSigningKeys(pool *pgxpool.Pool, master *MasterKeys) *SigningKeys {
	return &SigningKeys{pool: pool, master: master, now: time.Now}
}

// SetClock replaces the clock the keys are used by (tests move it instead
// of waiting).
func (k *SigningKeys) SetClock(now func() time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.now = now
}

// Signing returns the key new tokens are signed with: the newest whose
// signs_from has passed.
func (k *SigningKeys) Signing(ctx context.Context) (SigningKey, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.now().Sub(k.loadedAt) >= keyReloadAge || len(k.keys) == 0 {
		if err := k.load(ctx); err != nil {
			return SigningKey{}, err
		}
	}
	now := k.now()
	for i := len(k.keys) - 1; i >= 0; i-- {
		if !k.keys[i].SignsFrom.After(now) {
			return k.keys[i], nil
		}
	}
	return SigningKey{}, errors.New("no signing key: run ledgerctl keys rotate")
}

// Verifying returns the key kid, if it verifies. The cache is read again
// when it is keyReloadAge old, and for an unknown kid at most once a
// second, so a key rotated in with --revoke-previous is found soon and
// garbage kids cannot hammer the database. A revoked or unknown kid is
// Unauthenticated.
func (k *SigningKeys) Verifying(ctx context.Context, kid string) (SigningKey, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	age := k.now().Sub(k.loadedAt)
	key, ok := k.byKID[kid]
	if age >= keyReloadAge || !ok && age > time.Second {
		if err := k.load(ctx); err != nil {
			return SigningKey{}, err
		}
		key, ok = k.byKID[kid]
	}
	if !ok {
		return SigningKey{}, domain.Errorf(domain.Unauthenticated, "invalid_token", "unknown signing key")
	}
	return key, nil
}

// load reads the keys that are not revoked, oldest first, each retired at
// its successor's signs_from. A key still in clear (made before envelope
// encryption, until WrapStoredKeys runs) is taken as it is; one wrapped
// with a master key this process does not hold fails the load, loudly.
func (k *SigningKeys) load(ctx context.Context) error {
	rows, err := k.pool.Query(ctx, `SELECT kid, clear_secret, wrapped_secret, kek_id, signs_from,
		COALESCE(tenant_token_ttl, '0'), COALESCE(user_token_ttl, '0')
		FROM signing_keys WHERE revoked_at IS NULL ORDER BY created_at, kid`)
	if err != nil {
		return fmt.Errorf("load signing keys: %w", err)
	}
	var keys []SigningKey
	var key SigningKey
	var wrapped []byte
	var kekID *string
	if _, err := pgx.ForEachRow(rows, []any{&key.KID, &key.Secret, &wrapped, &kekID, &key.SignsFrom, &key.Lifetimes.Tenant, &key.Lifetimes.User}, func() error {
		if kekID != nil {
			var err error
			if key.Secret, err = k.master.Unwrap(*kekID, signingKeyAAD(key.KID), wrapped); err != nil {
				return err
			}
		}
		keys = append(keys, key)
		return nil
	}); err != nil {
		return fmt.Errorf("load signing keys: %w", err)
	}
	// A key is retired once any later key signs: a successor rotated out
	// again before it signed retires its predecessor all the same.
	byKID := make(map[string]SigningKey, len(keys))
	var next time.Time // the earliest signs_from of the keys after keys[i]
	for i := len(keys) - 1; i >= 0; i-- {
		keys[i].RetiredAt = next
		if next.IsZero() || keys[i].SignsFrom.Before(next) {
			next = keys[i].SignsFrom
		}
		byKID[keys[i].KID] = keys[i]
	}
	k.keys, k.byKID, k.loadedAt = keys, byKID, k.now()
	return nil
}

// RotateKey adds a new random 256-bit signing key, which signs tokens for
// at most lifetimes, and returns its kid. The key ids are time-ordered so
// the newest key sorts last. The key signs KeyCacheAge after it is made,
// once every instance has read it, or at once when no other key could
// sign (the first key, or revokePrevious).
//
// With revokePrevious (a key leaked), every earlier key is revoked in the
// same transaction and the kids revoked are returned: within KeyCacheAge
// nothing they signed verifies on any instance, so every partner must
// request new tokens (a client that does so on 401 goes on working). The
// new key may then be refused for up to a second by an instance that read
// the keys just before (SigningKeys.Verifying).
//
// The key is stored wrapped with master, which must be the master key the
// stored keys are wrapped with (or one of them, while it changes): a key
// the instances cannot unwrap would stop them signing.
func RotateKey(ctx context.Context, pool *pgxpool.Pool, master *MasterKeys, revokePrevious bool, lifetimes TokenLifetimes) (kid string, revoked []string, err error) {
	return rotateKey(ctx, pool, master, revokePrevious, false, lifetimes)
}

// signingKeysLock serialises the making of signing keys, so that of two
// keys made at once the second is published before it signs.
const signingKeysLock = 0x6c65646765720014

// rotateKey is RotateKey; with onlyFirst, it makes a key only if there is none.
func rotateKey(ctx context.Context, pool *pgxpool.Pool, master *MasterKeys, revokePrevious, onlyFirst bool, lifetimes TokenLifetimes) (kid string, revoked []string, err error) {
	if lifetimes.Tenant <= 0 || lifetimes.User <= 0 {
		return "", nil, fmt.Errorf("signing key lifetimes must be positive, not %v", lifetimes)
	}
	secret := make([]byte, 32)
	rand.Read(secret)
	suffix := make([]byte, 4)
	rand.Read(suffix)
	kid = time.Now().UTC().Format("20060102T150405.000000Z") + "-" + hex.EncodeToString(suffix)
	kekID, wrapped := master.Wrap(signingKeyAAD(kid), secret)
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(signingKeysLock)); err != nil {
			return err
		}
		if onlyFirst {
			var exists bool
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM signing_keys)`).Scan(&exists); err != nil || exists {
				return err
			}
		}
		var foreign bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM signing_keys WHERE kek_id <> ALL($1))`, master.IDs()).Scan(&foreign); err != nil {
			return err
		}
		if foreign {
			return fmt.Errorf("%w: stored keys are wrapped with a master key not given (LEDGER_MASTER_KEY_FILE must be ledgerd's)", ErrMasterKey)
		}
		if revokePrevious {
			rows, err := tx.Query(ctx, `UPDATE signing_keys SET revoked_at = clock_timestamp() WHERE revoked_at IS NULL RETURNING kid`)
			if err != nil {
				return err
			}
			if revoked, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, `INSERT INTO signing_keys (kid, wrapped_secret, kek_id, created_at, signs_from, tenant_token_ttl, user_token_ttl)
			SELECT $1, $2, $6, made,
				made + CASE WHEN EXISTS (SELECT 1 FROM signing_keys WHERE revoked_at IS NULL) THEN $3::interval ELSE '0' END,
				$4, $5
			FROM (SELECT clock_timestamp() AS made) AS clock`, // one reading: signs_from is exactly KeyCacheAge after created_at
			kid, wrapped, KeyCacheAge, lifetimes.Tenant, lifetimes.User, kekID)
		return err
	})
	if err != nil {
		return "", nil, fmt.Errorf("store signing key: %w", err)
	}
	return kid, revoked, nil
}

// EnsureKey prepares the signing keys for an instance that signs tokens
// for lifetimes: it creates the first key if there is none, and gives keys
// made before lifetimes were stored these (SQL could not know them).
func EnsureKey(ctx context.Context, pool *pgxpool.Pool, master *MasterKeys, lifetimes TokenLifetimes) error {
	if _, err := pool.Exec(ctx, `UPDATE signing_keys SET tenant_token_ttl = $1 WHERE tenant_token_ttl IS NULL`, lifetimes.Tenant); err != nil {
		return fmt.Errorf("record signing key lifetimes: %w", err)
	}
	if _, err := pool.Exec(ctx, `UPDATE signing_keys SET user_token_ttl = $1 WHERE user_token_ttl IS NULL`, lifetimes.User); err != nil {
		return fmt.Errorf("record signing key lifetimes: %w", err)
	}
	_, _, err := rotateKey(ctx, pool, master, false, true, lifetimes)
	return err
}
