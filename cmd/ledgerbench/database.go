package main

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledger/ledger/cmd/internal/benchkit"
	"github.com/ledger/ledger/eventstore"
	"github.com/ledger/ledger/projections"
)

// openBenchPool opens a pool of maxConns connections on database name of the
// server of serverURL, and applies the ledger's migrations and the raw
// INSERT table there. maxConns must exceed the highest concurrency, or
// workers queue for connections and the figures measure the pool instead.
func openBenchPool(ctx context.Context, serverURL, name string, maxConns int32) (*pgxpool.Pool, error) {
	pool, err := benchkit.OpenPool(ctx, serverURL, name, maxConns)
	if err != nil {
		return nil, err
	}
	err = eventstore.Migrate(ctx, pool, eventstore.Migrations,
		eventstore.MigrationSet{Component: "projections", FS: projections.Migrations})
	if err != nil {
		pool.Close()
		return nil, err
	}
	if _, err := pool.Exec(ctx, createRawTable); err != nil {
		pool.Close()
		return nil, fmt.Errorf("create raw_inserts: %w", err)
	}
	return pool, nil
}
