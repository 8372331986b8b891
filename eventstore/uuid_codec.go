package eventstore

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledger/ledger/eventstore/pguuid"
)

// NativeUUIDs has every connection of cfg's pool use the native uuid
// codec (package pguuid). Set it before opening the pool.
func NativeUUIDs(cfg *pgxpool.Config) {
	next := cfg.AfterConnect
	cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
		pguuid.Register(c.TypeMap())
		if next != nil {
			return next(ctx, c)
		}
		return nil
	}
}
