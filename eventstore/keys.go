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

// keyCacheAge bounds how long an instance signs with a key after a rotation
// (contract §2: within 10 s every instance signs with the new key).
const keyCacheAge = 10 * time.Second

// Keys is the shared store of JWT signing keys, cached per process. The newest
// key signs; every stored key verifies, so tokens signed before a rotation
// stay valid until they expire.
type Keys struct {
	pool *pgxpool.Pool

	mu       sync.Mutex
	byKID    map[string][]byte
	current  string
	loadedAt time.Time
}

// NewKeys returns the key store over pool.
func NewKeys(pool *pgxpool.Pool) *Keys { return &Keys{pool: pool} }

// CurrentSigningKey returns the key new tokens are signed with.
func (k *Keys) CurrentSigningKey(ctx context.Context) (string, []byte, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if time.Since(k.loadedAt) > keyCacheAge || k.current == "" {
		if err := k.load(ctx); err != nil {
			return "", nil, err
		}
	}
	if k.current == "" {
		return "", nil, errors.New("no signing key: run ledgerctl keys rotate")
	}
	return k.current, k.byKID[k.current], nil
}

// SigningKey returns the secret of kid. An unknown kid reloads the cache at
// most once a second, so a key rotated in by another instance is found at
// once, and garbage kids cannot hammer the database.
func (k *Keys) SigningKey(ctx context.Context, kid string) ([]byte, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if secret, ok := k.byKID[kid]; ok {
		return secret, nil
	}
	if time.Since(k.loadedAt) > time.Second {
		if err := k.load(ctx); err != nil {
			return nil, err
		}
	}
	if secret, ok := k.byKID[kid]; ok {
		return secret, nil
	}
	return nil, domain.Errorf(domain.Unauthenticated, "invalid_token", "unknown signing key")
}

func (k *Keys) load(ctx context.Context) error {
	rows, err := k.pool.Query(ctx, `SELECT kid, secret FROM signing_keys ORDER BY created_at, kid`)
	if err != nil {
		return fmt.Errorf("load signing keys: %w", err)
	}
	byKID := map[string][]byte{}
	var kid string
	var secret []byte
	if _, err := pgx.ForEachRow(rows, []any{&kid, &secret}, func() error {
		byKID[kid] = secret
		k.current = kid
		return nil
	}); err != nil {
		return fmt.Errorf("load signing keys: %w", err)
	}
	k.byKID, k.loadedAt = byKID, time.Now()
	return nil
}

// RotateKey adds a new random 256-bit signing key and returns its kid. The
// key ids are time-ordered so the newest key sorts last.
func RotateKey(ctx context.Context, pool *pgxpool.Pool) (string, error) {
	secret := make([]byte, 32)
	rand.Read(secret)
	suffix := make([]byte, 4)
	rand.Read(suffix)
	kid := time.Now().UTC().Format("20060102T150405.000000Z") + "-" + hex.EncodeToString(suffix)
	if _, err := pool.Exec(ctx, `INSERT INTO signing_keys (kid, secret, created_at) VALUES ($1, $2, clock_timestamp())`, kid, secret); err != nil {
		return "", fmt.Errorf("store signing key: %w", err)
	}
	return kid, nil
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
	_, err := RotateKey(ctx, pool)
	return err
}
