package main

import (
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/ledger/ledger/eventstore/testenv"
)

// databaseEnv is an environment holding only DATABASE_URL, dbURL.
func databaseEnv(dbURL string) func(string) string {
	return func(k string) string {
		if k == "DATABASE_URL" {
			return dbURL
		}
		return ""
	}
}

// TestCommandsReadTheirArgumentsBeforeTheDatabase: every command, asked
// for its help or given a flag it does not know, answers without touching
// DATABASE_URL (here a port nothing listens on): no connection error, no
// database created.
func TestCommandsReadTheirArgumentsBeforeTheDatabase(t *testing.T) {
	t.Parallel()
	ctx := testenv.Context(t, 30*time.Second)
	getenv := databaseEnv("postgres://postgres@127.0.0.1:1/ledgerctl_never?sslmode=disable&connect_timeout=1")
	for _, c := range commands() {
		words := strings.Fields(c.name)
		for _, arg := range []string{"-h", "--no-such-flag"} {
			err := run(ctx, append(words, arg), getenv, io.Discard)
			if err != nil && (strings.Contains(err.Error(), "127.0.0.1:1") || strings.Contains(err.Error(), "connect")) {
				t.Errorf("ledgerctl %s %s: %v, want an answer without the database", c.name, arg, err)
			}
			if arg == "--no-such-flag" && err == nil {
				t.Errorf("ledgerctl %s %s: no error, want one", c.name, arg)
			}
			if arg == "-h" && err != nil && !errors.Is(err, flag.ErrHelp) && !strings.HasPrefix(err.Error(), "usage:") {
				t.Errorf("ledgerctl %s -h: %v, want its help", c.name, err)
			}
		}
	}
}
