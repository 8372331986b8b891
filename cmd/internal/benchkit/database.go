package benchkit

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledger/ledger/eventstore"
)

// CreateDatabase creates the empty database name on the server of
// serverURL. The run owns its database, so it can run beside a live
// ledger and never measures someone else's rows or locks.
func CreateDatabase(ctx context.Context, serverURL, name string) error {
	conn, err := pgx.Connect(ctx, serverURL)
	if err != nil {
		return fmt.Errorf("create database: connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return fmt.Errorf("create database %s: %w", name, err)
	}
	return nil
}

// DropDatabase removes name, closing any connection still open on it. It
// runs on the way out, also after Ctrl-C, so it bounds its own time.
func DropDatabase(ctx context.Context, serverURL, name string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, serverURL)
	if err != nil {
		return fmt.Errorf("drop database: connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("drop database %s: %w", name, err)
	}
	return nil
}

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
