package eventstore

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

// KeyCacheAge bounds how long an instance signs with a key after a rotation
// (contract §2: within 10 s every instance signs with the new key), and how
// long it goes on verifying with a key after that key's revocation.
const KeyCacheAge = 10 * time.Second

// Keys is the shared store of JWT signing keys, cached per process. The newest
// key signs; every stored key that is not revoked verifies, so tokens signed
// before a rotation stay valid until they expire. A superseded key is
// retired once no instance signs with it any more (KeyCacheAge after its
// successor was made): what it verifies must have been signed by then, so
// the verifier refuses anything it signed that outlives that moment by
// more than its kind's lifetime (a token forged with a leaked key, say).
type Keys struct {
	pool *pgxpool.Pool
	now  func() time.Time

	mu       sync.Mutex
	byKID    map[string]verifyingKey
	current  string
	loadedAt time.Time
}

// verifyingKey is a stored key and when it was retired (zero: the newest).
type verifyingKey struct {
	secret    []byte
	retiredAt time.Time
}

// NewKeys returns the key store over pool.
func NewKeys(pool *pgxpool.Pool) *Keys { return &Keys{pool: pool, now: time.Now} }

// CurrentSigningKey returns the key new tokens are signed with.
func (k *Keys) CurrentSigningKey(ctx context.Context) (string, []byte, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.now().Sub(k.loadedAt) > KeyCacheAge || k.current == "" {
		if err := k.load(ctx); err != nil {
			return "", nil, err
		}
	}
	if k.current == "" {
		return "", nil, errors.New("no signing key: run ledgerctl keys rotate")
	}
	return k.current, k.byKID[k.current].secret, nil
}

// SigningKey returns the secret of kid and when it was retired (zero for
// the key that signs now). The cache is read again when it is older than
// KeyCacheAge, so a revocation reaches every instance within that, and for
// an unknown kid at most once a second, so a key rotated in by another
// instance is found at once and garbage kids cannot hammer the database.
// A revoked or unknown kid is Unauthenticated.
func (k *Keys) SigningKey(ctx context.Context, kid string) (secret []byte, retiredAt time.Time, err error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	age := k.now().Sub(k.loadedAt)
	key, ok := k.byKID[kid]
	if age > KeyCacheAge || !ok && age > time.Second {
		if err := k.load(ctx); err != nil {
			return nil, time.Time{}, err
		}
		key, ok = k.byKID[kid]
	}
	if !ok {
		return nil, time.Time{}, domain.Errorf(domain.Unauthenticated, "invalid_token", "unknown signing key")
	}
	return key.secret, key.retiredAt, nil
}

// load reads the keys that are not revoked, oldest first: each is retired
// KeyCacheAge after the next one was made.
func (k *Keys) load(ctx context.Context) error {
	rows, err := k.pool.Query(ctx, `SELECT kid, secret, created_at FROM signing_keys WHERE revoked_at IS NULL ORDER BY created_at, kid`)
	if err != nil {
		return fmt.Errorf("load signing keys: %w", err)
	}
	byKID := map[string]verifyingKey{}
	current := ""
	var kid string
	var secret []byte
	var created time.Time
	if _, err := pgx.ForEachRow(rows, []any{&kid, &secret, &created}, func() error {
		if current != "" {
			previous := byKID[current]
			previous.retiredAt = created.Add(KeyCacheAge)
			byKID[current] = previous
		}
		byKID[kid], current = verifyingKey{secret: secret}, kid
		return nil
	}); err != nil {
		return fmt.Errorf("load signing keys: %w", err)
	}
	k.byKID, k.current, k.loadedAt = byKID, current, k.now()
	return nil
}

// RotateKey adds a new random 256-bit signing key and returns its kid. The
// key ids are time-ordered so the newest key sorts last. With
// revokePrevious (a key leaked), every earlier key is revoked in the same
// transaction and the kids revoked are returned: within KeyCacheAge
// nothing they signed verifies on any instance, so every partner must
// request new tokens (a client that does so on 401 goes on working).
func RotateKey(ctx context.Context, pool *pgxpool.Pool, revokePrevious bool) (kid string, revoked []string, err error) {
	secret := make([]byte, 32)
	rand.Read(secret)
	suffix := make([]byte, 4)
	rand.Read(suffix)
	kid = time.Now().UTC().Format("20060102T150405.000000Z") + "-" + hex.EncodeToString(suffix)
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO signing_keys (kid, secret, created_at) VALUES ($1, $2, clock_timestamp())`, kid, secret); err != nil {
			return err
		}
		if !revokePrevious {
			return nil
		}
		rows, err := tx.Query(ctx, `UPDATE signing_keys SET revoked_at = clock_timestamp() WHERE kid <> $1 AND revoked_at IS NULL RETURNING kid`, kid)
		if err != nil {
			return err
		}
		revoked, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	if err != nil {
		return "", nil, fmt.Errorf("store signing key: %w", err)
	}
	return kid, revoked, nil
}

// EnsureKey creates the first signing key if there is none. Two instances
// starting together may both create one; both keys are valid and the newer signs.
func EnsureKey(ctx context.Context, pool *pgxpool.Pool) error {
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM signing_keys`).Scan(&n); err != nil {
		return fmt.Errorf("count signing keys: %w", err)
	}
	if n > 0 {
		return nil
	}
	_, _, err := RotateKey(ctx, pool, false)
	return err
}
