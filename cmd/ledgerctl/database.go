package main

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledger/ledger/eventstore"
	"github.com/ledger/ledger/projections"
	"github.com/ledger/ledger/workers/usecase"
)

// database is ledgerctl's connection to the event store, migrated to the
// current schema (so ledgerctl works before ledgerd has ever started). A
// command opens it once its arguments are read: asking a command for its
// help, or giving it bad flags, touches no database, and events tail,
// which reads NATS only, never does.
type database struct {
	url    string
	getenv func(string) string // ledgerd's settings that ledgerctl shares
	pool   *pgxpool.Pool       // nil until open
	store  *eventstore.Store
	ledger *usecase.Ledger // the operator's commands, which need none of its settings or rails
}

// open connects to url, creating and migrating the database if needed;
// once open, it does nothing.
func (d *database) open(ctx context.Context) error {
	if d.pool != nil {
		return nil
	}
	opened, err := openDatabase(ctx, d.url)
	if err != nil {
		return err
	}
	opened.getenv = d.getenv
	*d = *opened
	return nil
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
	// No signing key is made here: ledgerd makes the first with its own
	// lifetimes, and keys rotate makes the others.
	err = eventstore.Migrate(ctx, pool, eventstore.Migrations, eventstore.MigrationSet{Component: "projections", FS: projections.Migrations})
	if err != nil {
		pool.Close()
		return nil, err
	}
	store := eventstore.New(pool, projections.Projector{}, nil)
	return &database{url: url, pool: pool, store: store, ledger: usecase.New(usecase.Config{}, store, projections.NewReader(pool), usecase.Rails{})}, nil
}

func (d *database) close() {
	if d.pool != nil {
		d.pool.Close()
	}
}
