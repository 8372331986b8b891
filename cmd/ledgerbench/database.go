package main

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledger/ledger/cmd/internal/benchkit"
	"github.com/ledger/ledger/eventstore"
	"github.com/ledger/ledger/projections"
)

// createDatabase creates the empty database name on the server of
// serverURL. The benchmark owns its database, so it can run beside a live
// ledger and never measures someone else's rows or locks.
func createDatabase(ctx context.Context, serverURL, name string) error {
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

// dropDatabase removes name, closing any connection still open on it. It
// runs on the way out, also after Ctrl-C, so it bounds its own time.
func dropDatabase(ctx context.Context, serverURL, name string) error {
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
