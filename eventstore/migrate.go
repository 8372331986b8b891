package eventstore

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations is the event store's own migration set.
var Migrations = MigrationSet{Component: "eventstore", FS: migrationFiles}

// MigrationSet is a component's numbered SQL files (NNNN_name.sql in a
// "migrations" directory), applied in order, each once.
//
// A file runs in one transaction with the row that records it, so it is
// applied whole or not at all. A file whose first line is the marker
// "-- migrate: no transaction" runs outside one instead, for statements
// Postgres refuses inside a transaction block, such as CREATE INDEX
// CONCURRENTLY, which builds an index without holding writes for the
// whole build. See runOutsideTransaction for what such a file must be.
type MigrationSet struct {
	Component string
	FS        fs.FS
}

// migrateLockKey is the advisory lock that serialises migrations when several
// processes start at once.
const migrateLockKey = 0x6c65646765720001

// Migrate applies every pending migration of sets, in order, under a
// session-level advisory lock held on one connection.
func Migrate(ctx context.Context, pool *pgxpool.Pool, sets ...MigrationSet) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("migrate: acquire: %w", err)
	}
	defer conn.Release()
	if err := lockMigrations(ctx, conn.Conn()); err != nil {
		return fmt.Errorf("migrate: lock: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", int64(migrateLockKey))

	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		component text NOT NULL, version integer NOT NULL, name text NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (component, version))`); err != nil {
		return fmt.Errorf("migrate: create schema_migrations: %w", err)
	}
	for _, set := range sets {
		if err := applySet(ctx, conn.Conn(), set); err != nil {
			return err
		}
	}
	return nil
}

func applySet(ctx context.Context, conn *pgx.Conn, set MigrationSet) error {
	names, err := fs.Glob(set.FS, "migrations/*.sql")
	if err != nil {
		return fmt.Errorf("migrate %s: %w", set.Component, err)
	}
	sort.Strings(names)
	for _, name := range names {
		base := strings.TrimPrefix(name, "migrations/")
		version, err := strconv.Atoi(strings.SplitN(base, "_", 2)[0])
		if err != nil {
			return fmt.Errorf("migrate %s: %s: name must start with a number", set.Component, base)
		}
		var applied bool
		if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM schema_migrations WHERE component = $1 AND version = $2)`,
			set.Component, version).Scan(&applied); err != nil {
			return fmt.Errorf("migrate %s: %w", set.Component, err)
		}
		if applied {
			continue
		}
		sql, err := fs.ReadFile(set.FS, name)
		if err != nil {
			return fmt.Errorf("migrate %s: %w", set.Component, err)
		}
		if outsideTransaction(string(sql)) {
			err = runOutsideTransaction(ctx, conn, string(sql))
			if err == nil {
				_, err = conn.Exec(ctx, recordMigration, set.Component, version, base)
			}
		} else {
			err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
				if _, err := tx.Exec(ctx, string(sql)); err != nil {
					return err
				}
				_, err := tx.Exec(ctx, recordMigration, set.Component, version, base)
				return err
			})
		}
		if err != nil {
			return fmt.Errorf("migrate %s %s: %w", set.Component, base, err)
		}
	}
	return nil
}

const recordMigration = `INSERT INTO schema_migrations (component, version, name) VALUES ($1, $2, $3)`

// Pending reports whether any migration of sets is not applied yet (for /readyz).
func Pending(ctx context.Context, pool *pgxpool.Pool, sets ...MigrationSet) (bool, error) {
	for _, set := range sets {
		names, err := fs.Glob(set.FS, "migrations/*.sql")
		if err != nil {
			return false, err
		}
		var n int
		err = pool.QueryRow(ctx, `SELECT count(*) FROM schema_migrations WHERE component = $1`, set.Component).Scan(&n)
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "42P01" { // undefined_table: nothing migrated yet, so all is pending
			return true, nil
		}
		if err != nil {
			return false, err
		}
		if n < len(names) {
			return true, nil
		}
	}
	return false, nil
}

// EnsureDatabase creates the database named in databaseURL if it does not
// exist, connecting to the server's "postgres" database to do so. Several
// processes may race here; losing the race is fine.
func EnsureDatabase(ctx context.Context, databaseURL string) error {
	cfg, err := pgx.ParseConfig(databaseURL)
	if err != nil {
		return fmt.Errorf("parse DATABASE_URL: %w", err)
	}
	name := cfg.Database
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err == nil {
		return conn.Close(ctx)
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "3D000" { // invalid_catalog_name
		return fmt.Errorf("connect to %s: %w", name, err)
	}
	admin := cfg.Copy()
	admin.Database = "postgres"
	conn, err = pgx.ConnectConfig(ctx, admin)
	if err != nil {
		return fmt.Errorf("connect to create %s: %w", name, err)
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	if errors.As(err, &pgErr) && pgErr.Code == "42P04" { // duplicate_database
		return nil
	}
	if err != nil {
		return fmt.Errorf("create database %s: %w", name, err)
	}
	return nil
}
