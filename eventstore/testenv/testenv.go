// Package testenv gives each test its own Postgres database and its own
// JetStream stream on the real local servers, and removes them afterwards,
// so tests run in parallel and leave nothing behind.
package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// DatabaseURL is the server tests create their databases on
// (LEDGER_TEST_DATABASE_URL, default the local server).
func DatabaseURL() string {
	if u := os.Getenv("LEDGER_TEST_DATABASE_URL"); u != "" {
		return u
	}
	return "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
}

// NATSURL is the NATS server tests use (LEDGER_TEST_NATS_URL, default the local one).
func NATSURL() string {
	if u := os.Getenv("LEDGER_TEST_NATS_URL"); u != "" {
		return u
	}
	return nats.DefaultURL
}

// JetStream connects to the test NATS server (NATSURL) for the length of t.
func JetStream(t testing.TB) jetstream.JetStream {
	t.Helper()
	nc, err := nats.Connect(NATSURL())
	if err != nil {
		t.Fatalf("connect to NATS: %v", err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatalf("JetStream: %v", err)
	}
	return js
}

// Name returns a random lower-case name with prefix, unique per test.
func Name(prefix string) string {
	b := make([]byte, 6)
	rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// NewDatabase creates an empty database for t and returns its URL; it is
// dropped when t ends. A missing server fails the test, never skips it.
func NewDatabase(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg, err := pgx.ParseConfig(DatabaseURL())
	if err != nil {
		t.Fatalf("parse test database url: %v", err)
	}
	admin, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatalf("connect to test Postgres %s: %v", DatabaseURL(), err)
	}
	defer admin.Close(ctx)
	name := Name("ledger_test_")
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.ConnectConfig(ctx, cfg)
		if err != nil {
			t.Errorf("drop database %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	u, err := url.Parse(DatabaseURL())
	if err != nil {
		t.Fatalf("parse test database url: %v", err)
	}
	u.Path = "/" + name
	return u.String()
}

// Stream names a JetStream stream and subject prefix of t's own on the
// local NATS server; the stream is deleted when t ends.
type Stream struct {
	Name          string
	SubjectPrefix string
}

// NewStream reserves a stream name and subject prefix for t.
func NewStream(t testing.TB) Stream {
	t.Helper()
	s := Stream{Name: Name("LEDGER_T"), SubjectPrefix: Name("ledgert")}
	t.Cleanup(func() {
		nc, err := nats.Connect(NATSURL())
		if err != nil {
			t.Errorf("delete stream %s: %v", s.Name, err)
			return
		}
		defer nc.Close()
		js, _ := jetstream.New(nc)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := js.DeleteStream(ctx, s.Name); err != nil && err != jetstream.ErrStreamNotFound {
			t.Errorf("delete stream %s: %v", s.Name, err)
		}
	})
	return s
}

// Context returns a context that ends after d or when t ends, so no wait
// in a test can hang forever.
func Context(t testing.TB, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
