// Package sealing seals the secrets partners give the service, which it
// must use again later, under keys stored wrapped in the event store's
// database.
package sealing

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledger/ledger/eventstore/keys"
)

// Sealing: a secret a partner gives the service, which the service must
// use again later (a payment's webhookSecret signs its webhooks), is
// stored sealed: encrypted with AES-256-GCM under a key in sealing_keys.
// The events keep the sealed text, so their hashes cover it, GET /events,
// the dashboard and `ledgerctl events export` show it, and an auditor can
// still recompute every hash; only the process that sends the webhook
// opens it. A sealed value reads
//
//	sealed:v1:<kid>:<base64url, unpadded: 12-byte nonce, then ciphertext and tag>
//
// Events stored before sealing hold the secret as given; Open returns any
// value without the prefix as it is.
const sealedPrefix = "sealed:v1:"

// sealedAAD binds a sealed value to its use: it opens as nothing else.
var sealedAAD = []byte("ledger sealed secret")

// firstSealingKID is the first key's id. Every process that finds no key
// inserts one under this id, and the losers of that race read the winner's.
const firstSealingKID = "k1"

// ErrSealed means a sealed value cannot be opened: malformed, altered, or
// sealed with a key this database does not have.
var ErrSealed = errors.New("sealing: sealed value cannot be opened")

// Sealer seals and opens secrets with the shared keys. Keys never change
// once stored, so each is read once per process; a process seals with the
// key that was newest when it first sealed (there is one: no command adds
// another yet).
//
// The keys are stored wrapped under the master key (keys.MasterKeys).
type Sealer struct {
	pool   *pgxpool.Pool
	master *keys.MasterKeys

	mu      sync.Mutex
	byKID   map[string]cipher.AEAD
	current string // the kid Seal uses; "" until the first Seal
}

// NewSealer returns a Sealer over pool, whose keys master unwraps.
func NewSealer(pool *pgxpool.Pool, master *keys.MasterKeys) *Sealer {
	return &Sealer{pool: pool, master: master, byKID: map[string]cipher.AEAD{}}
}

// Seal returns secret sealed with the newest key, creating the first key
// if there is none. The empty secret (none given) stays empty.
func (s *Sealer) Seal(ctx context.Context, secret string) (string, error) {
	if secret == "" {
		return "", nil
	}
	kid, aead, err := s.currentKey(ctx)
	if err != nil {
		return "", err
	}
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(secret)+aead.Overhead())
	rand.Read(nonce)
	sealed := aead.Seal(nonce, nonce, []byte(secret), sealedAAD)
	return sealedPrefix + kid + ":" + base64.RawURLEncoding.EncodeToString(sealed), nil
}

// Open returns the secret in stored: opened when it is sealed, as it is
// otherwise (a value stored before sealing, or none).
func (s *Sealer) Open(ctx context.Context, stored string) (string, error) {
	kid, sealed, ok := parseSealed(stored)
	if !ok {
		if strings.HasPrefix(stored, sealedPrefix) {
			return "", ErrSealed
		}
		return stored, nil
	}
	aead, err := s.key(ctx, kid)
	if err != nil {
		return "", err
	}
	if len(sealed) < aead.NonceSize() {
		return "", ErrSealed
	}
	secret, err := aead.Open(nil, sealed[:aead.NonceSize()], sealed[aead.NonceSize():], sealedAAD)
	if err != nil {
		return "", ErrSealed
	}
	return string(secret), nil
}

// parseSealed splits a sealed value into its key id and sealed bytes; false
// for anything that is not one.
func parseSealed(v string) (kid string, sealed []byte, ok bool) {
	rest, ok := strings.CutPrefix(v, sealedPrefix)
	if !ok {
		return "", nil, false
	}
	kid, text, ok := strings.Cut(rest, ":")
	if !ok || kid == "" {
		return "", nil, false
	}
	sealed, err := base64.RawURLEncoding.DecodeString(text)
	if err != nil {
		return "", nil, false
	}
	return kid, sealed, true
}

// currentKey returns the key Seal uses: the newest stored, or a first one
// stored now.
func (s *Sealer) currentKey(ctx context.Context) (string, cipher.AEAD, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.current != "" {
		return s.current, s.byKID[s.current], nil
	}
	kekID, wrapped := s.master.Wrap(keys.SealingKeyAAD(firstSealingKID), randomKey())
	if _, err := s.pool.Exec(ctx, `INSERT INTO sealing_keys (kid, wrapped_key, kek_id) VALUES ($1, $2, $3) ON CONFLICT (kid) DO NOTHING`,
		firstSealingKID, wrapped, kekID); err != nil {
		return "", nil, fmt.Errorf("store sealing key: %w", err)
	}
	var kid string
	if err := s.pool.QueryRow(ctx, `SELECT kid FROM sealing_keys ORDER BY created_at DESC, kid DESC LIMIT 1`).Scan(&kid); err != nil {
		return "", nil, fmt.Errorf("load sealing key: %w", err)
	}
	aead, err := s.load(ctx, kid)
	if err != nil {
		return "", nil, err
	}
	s.current = kid
	return kid, aead, nil
}

// key returns the key kid.
func (s *Sealer) key(ctx context.Context, kid string) (cipher.AEAD, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if aead, ok := s.byKID[kid]; ok {
		return aead, nil
	}
	return s.load(ctx, kid)
}

// load reads the key kid, unwrapping it (one still in clear, made before
// envelope encryption and not yet wrapped by keys.WrapStoredKeys, is taken
// as it is), and caches it. s.mu is held.
func (s *Sealer) load(ctx context.Context, kid string) (cipher.AEAD, error) {
	var key, wrapped []byte
	var kekID *string
	err := s.pool.QueryRow(ctx, `SELECT clear_key, wrapped_key, kek_id FROM sealing_keys WHERE kid = $1`, kid).Scan(&key, &wrapped, &kekID)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("%w: no sealing key %q", ErrSealed, kid)
	}
	if err != nil {
		return nil, fmt.Errorf("load sealing key: %w", err)
	}
	if kekID != nil {
		if key, err = s.master.Unwrap(*kekID, keys.SealingKeyAAD(kid), wrapped); err != nil {
			return nil, err
		}
	}
	aead, err := newAEAD(key)
	if err != nil {
		return nil, err
	}
	s.byKID[kid] = aead
	return aead, nil
}

func newAEAD(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("sealing key: %w", err)
	}
	return cipher.NewGCM(block)
}

// randomKey returns a new random 256-bit key.
func randomKey() []byte {
	b := make([]byte, 32)
	rand.Read(b)
	return b
}
