// Command ledgerctl is the operator's and auditor's tool: tenants, API keys
// and signing keys. It reads DATABASE_URL like ledgerd.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

const usage = `usage: ledgerctl <command> [flags]

  tenant create --name NAME --email OWNER_EMAIL   create a tenant, its owner user and a first API key pair
  apikey create --tenant ID                       issue another API key pair for a tenant
  apikey revoke APIKEY                            revoke an API key; its tokens stop working at once
  keys rotate                                     sign new tokens with a new key (old tokens stay valid)

Environment: DATABASE_URL (default postgres://postgres@127.0.0.1:5432/ledger?sslmode=disable).
Secrets are printed once, on stdout, as JSON; only their hash is stored.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "ledgerctl:", err)
		os.Exit(1)
	}
}

// command is one ledgerctl subcommand.
type command func(ctx context.Context, db *database, args []string, stdout io.Writer) error

var commands = map[string]command{
	"tenant create": tenantCreate,
	"apikey create": apikeyCreate,
	"apikey revoke": apikeyRevoke,
	"keys rotate":   keysRotate,
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	if len(args) < 2 {
		return fmt.Errorf("missing command\n%s", usage)
	}
	cmd, ok := commands[args[0]+" "+args[1]]
	if !ok {
		return fmt.Errorf("unknown command %q\n%s", args[0]+" "+args[1], usage)
	}
	url := getenv("DATABASE_URL")
	if url == "" {
		url = "postgres://postgres@127.0.0.1:5432/ledger?sslmode=disable"
	}
	db, err := openDatabase(ctx, url)
	if err != nil {
		return err
	}
	defer db.close()
	return cmd(ctx, db, args[2:], stdout)
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
