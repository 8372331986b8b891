// Package storetest gives the tests of the packages kept beside the event
// store (keys, sealing, signin) a database of their own with the event
// store's schema, where their tables live, and a master key. It is apart
// from testenv because it needs eventstore, whose own tests use testenv.
package storetest

import (
	"context"
	"crypto/rand"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledger/ledger/eventstore"
	"github.com/ledger/ledger/eventstore/keys"
	"github.com/ledger/ledger/eventstore/testenv"
)

// Migrated returns a pool of at most maxConns connections on a new
// database of t's own with the event store's migrations applied; the pool
// closes before the database is dropped.
func Migrated(t testing.TB, maxConns int32) *pgxpool.Pool {
	t.Helper()
	pool, _ := MigratedURL(t, maxConns)
	return pool
}

// MigratedURL is Migrated that also returns the database's URL, for tools
// run against it (pg_dump).
func MigratedURL(t testing.TB, maxConns int32) (*pgxpool.Pool, string) {
	t.Helper()
	url := testenv.NewDatabase(t)
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatalf("parse database url: %v", err)
	}
	cfg.MaxConns = maxConns
	eventstore.NativeUUIDs(cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatalf("open pool: %v", err)
	}
	t.Cleanup(pool.Close)
	if err := eventstore.Migrate(ctx, pool, eventstore.Migrations); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return pool, url
}

// MasterKeys returns a fresh random master key.
func MasterKeys(t testing.TB) *keys.MasterKeys {
	t.Helper()
	kek := make([]byte, 32)
	rand.Read(kek)
	m, err := keys.NewMasterKeys(kek)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
