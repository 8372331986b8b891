package keys

import (
	"context"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5/pgxpool"
)

// ServerKeys hands out the 32-byte keys every instance shares, one per
// purpose, for MACs the service must recognise whichever instance made
// them. They are stored wrapped under the master key, as the signing and
// sealing keys are. A key is read once per process: keys never change.
type ServerKeys struct {
	pool   *pgxpool.Pool
	master *MasterKeys

	mu   sync.Mutex
	keys map[string][]byte
}

// NewServerKeys returns ServerKeys over pool, wrapped under master.
func NewServerKeys(pool *pgxpool.Pool, master *MasterKeys) *ServerKeys {
	return &ServerKeys{pool: pool, master: master, keys: map[string][]byte{}}
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
	kekID, wrapped := s.master.Wrap(serverKeyAAD(purpose), randomBytes(32))
	if _, err := s.pool.Exec(ctx, `INSERT INTO server_keys (purpose, wrapped_key, kek_id) VALUES ($1, $2, $3) ON CONFLICT (purpose) DO NOTHING`,
		purpose, wrapped, kekID); err != nil {
		return nil, fmt.Errorf("store server key %s: %w", purpose, err)
	}
	if err := s.pool.QueryRow(ctx, `SELECT wrapped_key, kek_id FROM server_keys WHERE purpose = $1`, purpose).Scan(&wrapped, &kekID); err != nil {
		return nil, fmt.Errorf("load server key %s: %w", purpose, err)
	}
	key, err := s.master.Unwrap(kekID, serverKeyAAD(purpose), wrapped)
	if err != nil {
		return nil, err
	}
	s.keys[purpose] = key
	return key, nil
}
