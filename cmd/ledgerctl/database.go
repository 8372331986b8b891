package main

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledger/ledger/eventstore"
	"github.com/ledger/ledger/projections"
)

// database is ledgerctl's connection to the event store, migrated to the
// current schema (so ledgerctl works before ledgerd has ever started).
type database struct {
	pool   *pgxpool.Pool
	store  *eventstore.Store
	reader *projections.Reader
}

func openDatabase(ctx context.Context, url string) (*database, error) {
	if err := eventstore.EnsureDatabase(ctx, url); err != nil {
		return nil, err
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("DATABASE_URL: %w", err)
	}
	eventstore.NativeUUIDs(cfg)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open Postgres: %w", err)
	}
	err = eventstore.Migrate(ctx, pool, eventstore.Migrations, eventstore.MigrationSet{Component: "projections", FS: projections.Migrations})
	if err == nil {
		err = eventstore.EnsureKey(ctx, pool)
	}
	if err != nil {
		pool.Close()
		return nil, err
	}
	return &database{pool: pool, store: eventstore.New(pool, projections.Projector{}, nil), reader: projections.NewReader(pool)}, nil
}

func (d *database) close() { d.pool.Close() }
