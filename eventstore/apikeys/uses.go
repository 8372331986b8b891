// Package apikeys issues partners' API keys and records when each was
// last used. Uses are operational records, kept beside the event store in
// its database but not among its events.
package apikeys

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Uses records when each API key last obtained a token: a fact about use
// that the partner dashboard shows, not an event.
type Uses struct{ pool *pgxpool.Pool }

// NewUses returns the record over pool.
func NewUses(pool *pgxpool.Pool) *Uses { return &Uses{pool: pool} }

// TouchAPIKey records that apiKey obtained a token at at. It never moves the
// time backwards, so racing instances leave the latest.
func (u *Uses) TouchAPIKey(ctx context.Context, apiKey string, at time.Time) error {
	_, err := u.pool.Exec(ctx, `INSERT INTO api_key_uses (api_key, last_used_at) VALUES ($1, $2)
		ON CONFLICT (api_key) DO UPDATE SET last_used_at = greatest(api_key_uses.last_used_at, excluded.last_used_at)`, apiKey, at)
	if err != nil {
		return fmt.Errorf("record api key use: %w", err)
	}
	return nil
}

// LastUsed returns when each of apiKeys last obtained a token; keys never
// used are absent.
func (u *Uses) LastUsed(ctx context.Context, apiKeys []string) (map[string]time.Time, error) {
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
