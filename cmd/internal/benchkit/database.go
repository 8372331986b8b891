package benchkit

import (
	"context"
	"fmt"
	"net/url"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledger/ledger/eventstore"
)

// OpenPool opens a pool of at most maxConns connections on database name of
// the server of serverURL, and nothing else.
func OpenPool(ctx context.Context, serverURL, name string, maxConns int32) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(serverURL)
	if err != nil {
		return nil, fmt.Errorf("parse database url: %w", err)
	}
	cfg.ConnConfig.Database = name
	cfg.MaxConns = maxConns
	eventstore.NativeUUIDs(cfg)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open pool: %w", err)
	}
	return pool, nil
}

// DatabaseURLFor returns serverURL naming database name instead of its own.
// serverURL must be a postgres:// URL, which ledgerd and ledgerctl read from
// DATABASE_URL.
func DatabaseURLFor(serverURL, name string) (string, error) {
	u, err := url.Parse(serverURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Host == "" {
		return "", fmt.Errorf("-database-url must be a postgres://host/database URL, not %q", serverURL)
	}
	u.Path, u.RawPath = "/"+name, ""
	return u.String(), nil
}
