package eventstore

import (
	"context"
	"crypto/rand"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5/pgxpool"
)

// ServerKeys hands out the 32-byte keys every instance shares, one per
// purpose, for MACs the service must recognise whichever instance made
// them. A key is read once per process: keys never change.
type ServerKeys struct {
	pool *pgxpool.Pool

	mu   sync.Mutex
	keys map[string][]byte
}

// NewServerKeys returns ServerKeys over pool.
func NewServerKeys(pool *pgxpool.Pool) *ServerKeys {
	return &ServerKeys{pool: pool, keys: map[string][]byte{}}
}

// Key returns purpose's key, storing a random one first if there is none.
func (s *ServerKeys) Key(ctx context.Context, purpose string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if k, ok := s.keys[purpose]; ok {
		return k, nil
	}
	// Every instance that finds none offers one; all read the winner's.
	// Two statements: one would read from the snapshot it started with,
	// missing a winner that committed meanwhile.
	key := make([]byte, 32)
	rand.Read(key)
	if _, err := s.pool.Exec(ctx, `INSERT INTO server_keys (purpose, key) VALUES ($1, $2) ON CONFLICT (purpose) DO NOTHING`,
		purpose, key); err != nil {
		return nil, fmt.Errorf("store server key %s: %w", purpose, err)
	}
	if err := s.pool.QueryRow(ctx, `SELECT key FROM server_keys WHERE purpose = $1`, purpose).Scan(&key); err != nil {
		return nil, fmt.Errorf("load server key %s: %w", purpose, err)
	}
	s.keys[purpose] = key
	return key, nil
}
