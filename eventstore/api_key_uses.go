package eventstore

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// APIKeyUses records when each API key last obtained a token: a fact about
// use that the partner dashboard shows, not an event.
type APIKeyUses struct{ pool *pgxpool.Pool }

// NewAPIKeyUses returns the record over pool.
func NewAPIKeyUses(pool *pgxpool.Pool) *APIKeyUses { return &APIKeyUses{pool: pool} }

// TouchAPIKey records that apiKey obtained a token at at. It never moves the
// time backwards, so racing instances leave the latest.
func (u *APIKeyUses) TouchAPIKey(ctx context.Context, apiKey string, at time.Time) error {
	_, err := u.pool.Exec(ctx, `INSERT INTO api_key_uses (api_key, last_used_at) VALUES ($1, $2)
		ON CONFLICT (api_key) DO UPDATE SET last_used_at = greatest(api_key_uses.last_used_at, excluded.last_used_at)`, apiKey, at)
	if err != nil {
		return fmt.Errorf("record api key use: %w", err)
	}
	return nil
}

// LastUsed returns when each of apiKeys last obtained a token; keys never
// used are absent.
func (u *APIKeyUses) LastUsed(ctx context.Context, apiKeys []string) (map[string]time.Time, error) {
	rows, err := u.pool.Query(ctx, `SELECT api_key, last_used_at FROM api_key_uses WHERE api_key = ANY($1)`, apiKeys)
	if err != nil {
		return nil, fmt.Errorf("read api key uses: %w", err)
	}
	out := map[string]time.Time{}
	var (
		key string
		at  time.Time
	)
	_, err = pgx.ForEachRow(rows, []any{&key, &at}, func() error {
		out[key] = at.UTC()
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read api key uses: %w", err)
	}
	return out, nil
}
