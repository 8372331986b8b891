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
	"strings"
	"syscall"
)

// usageText lists every command with its one-line help, in registration order.
func usageText() string {
	var b strings.Builder
	b.WriteString("usage: ledgerctl <command> [flags]\n\n")
	for _, c := range commandList {
		fmt.Fprintf(&b, "  %-48s %s\n", c.synopsis, c.help)
	}
	b.WriteString(`
Environment: DATABASE_URL (default postgres://postgres@127.0.0.1:5432/ledger?sslmode=disable),
NATS_URL where a command reads the event stream (unset: the server a ledgerd without NATS_URL
embeds, at LEDGER_EMBEDDED_NATS_ADDR, with the token in LEDGER_DATA_DIR).
Secrets are printed once, on stdout, as JSON; only their hash is stored.
`)
	return b.String()
}

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

// registered is one command: its two words, synopsis and help line.
type registered struct {
	name, synopsis, help string
	run                  command
}

// commandList holds every command; files add theirs with register in init.
var commandList = []registered{
	{"tenant create", "tenant create --name NAME --email OWNER_EMAIL", "create a tenant, its owner user and a first API key pair", tenantCreate},
	{"apikey create", "apikey create --tenant ID", "issue another API key pair for a tenant", apikeyCreate},
	{"apikey revoke", "apikey revoke APIKEY", "revoke an API key; its tokens stop working at once", apikeyRevoke},
}

// register adds a command (called from init in the command's own file).
func register(name, synopsis, help string, run command) {
	commandList = append(commandList, registered{name, synopsis, help, run})
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	if len(args) < 2 {
		return fmt.Errorf("missing command\n%s", usageText())
	}
	var cmd command
	for _, c := range commandList {
		if c.name == args[0]+" "+args[1] {
			cmd = c.run
		}
	}
	if cmd == nil {
		return fmt.Errorf("unknown command %q\n%s", args[0]+" "+args[1], usageText())
	}
	url := getenv("DATABASE_URL")
	if url == "" {
		url = "postgres://postgres@127.0.0.1:5432/ledger?sslmode=disable"
	}
	db := &database{url: url, getenv: getenv} // the command opens it once its arguments are read
	defer db.close()
	return cmd(ctx, db, args[2:], stdout)
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
