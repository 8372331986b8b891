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

	"github.com/ledger/ledger/projections/rebuild"
)

// usageText lists every command with its one-line help.
func usageText() string {
	var b strings.Builder
	b.WriteString("usage: ledgerctl <command> [flags]\n\n")
	for _, c := range commands() {
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

// command is one ledgerctl subcommand: its two words, synopsis, help line
// and what runs it.
type command struct {
	name, synopsis, help string
	run                  func(ctx context.Context, db *database, args []string, stdout io.Writer) error
}

// commands lists every ledgerctl command, in the order the usage shows them.
func commands() []command {
	return []command{
		{"tenant create", "tenant create --name NAME --email OWNER_EMAIL", "create a tenant, its owner user and a first API key pair", tenantCreate},
		{"apikey create", "apikey create --tenant ID", "issue another API key pair for a tenant", apikeyCreate},
		{"apikey revoke", "apikey revoke APIKEY", "revoke an API key; its tokens stop working at once", apikeyRevoke},
		{"audit verify", "audit verify [--json] [--max N] [--unsequenced-after D]",
			"recompute hash chains, replay every stream into shadow tables compared with the read models (webhook deliveries and attempts are not read models), check postings; non-zero exit on any difference",
			auditVerify},
		{"dashboard-user add", "dashboard-user add --tenant ID --email EMAIL [--public-url URL]",
			"let someone into a tenant's dashboard (the operator's, who works reconciliation breaks: --tenant 00000000-0000-0000-0000-000000000001); prints a one-time set-password link", dashboardUserAdd},
		{"dashboard-user reset", "dashboard-user reset --email EMAIL [--public-url URL]",
			"a new set-password link for a dashboard user (forgotten password, expired link, after disable)", dashboardUserReset},
		{"dashboard-user disable", "dashboard-user disable --email EMAIL",
			"take a dashboard user's access away: password and link stop working, open sessions end", dashboardUserDisable},
		{"deposits import", "deposits import FILE",
			"record the credits of a bank's camt.054 notification or camt.053 statement (each entry once); unmatched money goes to the unmatched-funds queue",
			depositsImport},
		{"events export",
			"events export [--after POS] [--tenant ID] [--type TYPE] [--limit N] [--out FILE] [--public]",
			"write the sequenced events as NDJSON in position order, resumably (-h for details)",
			eventsExport},
		{"events tail",
			"events tail [--subject FILTER] [--durable NAME] [--from-start] [--stream LEDGER]",
			"follow the NATS stream and print each event as a JSON line until Ctrl-C (-h for details)",
			eventsTail},
		{"health check", "health check [--url URL]",
			"exit 0 when ledgerd answers its readiness check with 2xx, 1 otherwise (a container healthcheck: the image has no shell or curl)",
			healthCheck},
		{"keys rotate", "keys rotate [--revoke-previous] [--tenant-token-ttl D] [--user-token-ttl D]",
			"sign new tokens with a new key, from 10 s on (old tokens stay valid; with --revoke-previous, a leaked key: nothing signed before verifies within 10 s, and the new key signs at once)", keysRotate},
		{"keys rotate-master", "keys rotate-master --old FILE --new FILE",
			"wrap every stored signing and sealing key with a new master key (every ledgerd must hold both first: LEDGER_MASTER_KEY_FILE=NEW,OLD)", keysRotateMaster},
		{"unmatched list", "unmatched list [--status open|assigned|returning|returned|all] [--json]",
			"the unmatched-funds queue: money no payment took, with its total per currency", unmatchedList},
		{"unmatched assign", "unmatched assign ID --payment PAYMENT_ID [--by NAME]",
			"give unmatched funds to a payment, which proceeds as if the credit had quoted its reference", unmatchedAssign},
		{"unmatched return", "unmatched return ID [--by NAME]",
			"mark unmatched funds for return to the payer's account as the rail reported it; ledgerd pays it back when a payout rail can (an M-Pesa phone, a bank account in ZAR, NGN or KES)", unmatchedReturn},
		{"change list", "change list [--json]",
			"change refunds no rail can pay (an anonymous Lightning or USDT payer, no rail for the payer's currency, a refund the rail refused), with their total per currency",
			changeList},
		{"change paid", "change paid PAYMENT_ID --reference REF [--by NAME]",
			"record a queued change refund as paid back to the payer by hand, with the transfer's reference", changePaid},
		{"reconcile", "reconcile --rail RAIL --from T1 --to T2",
			"compare a rail's provider records and balances over [T1, T2) with the ledger's; print the report as JSON and record each difference as a break (once)",
			reconcileRun},
		{"reconcile breaks", "reconcile breaks [--open]", "the reconciliation breaks, oldest first, as JSON", reconcileBreaks},
		{"reconcile resolve", "reconcile resolve BREAK_ID --reason TEXT [--by NAME]",
			"close an open reconciliation break, recording why and who", reconcileResolve},
		{"payouts stuck", "payouts stuck [--older D] [--json]",
			"payouts and refunds a provider (M-Pesa, Paystack) holds without an outcome, asked for at least D ago (15m), by key: the lost alert's and pending transfers' list", payoutsStuck},
		{"payouts resolve", "payouts resolve KEY (--paid RECEIPT | --failed REASON) [--by NAME]",
			"end a payout the provider cannot account for, as its statement shows, by the key payouts stuck lists: a payment id (paid, or failed and refunded), change-PAYMENT_ID (change refunded, or queued), return-UNMATCHED_ID (returned, or refused)",
			payoutsResolve},
		{"projections rebuild", "projections rebuild [NAME] [--json]",
			"rebuild read models (all, or " + strings.Join(rebuild.GroupNames()[1:], ", ") +
				") from the first event into shadow tables, swapped in while ledgerd serves",
			projectionsRebuild},
		{"usdt addresses", "usdt addresses",
			"each USDT deposit address that received confirmed transfers, as JSON lines: its derivation index, payment, and USDT credited and unmatched (for the custody system that sweeps)",
			usdtAddresses},
		{"usdt transfers", "usdt transfers [--status credited|unmatched]",
			"the confirmed USDT transfers to deposit addresses, as JSON lines in chain order; unmatched ones are an operator's to return or apply",
			usdtTransfers},
	}
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	if len(args) < 2 {
		return fmt.Errorf("missing command\n%s", usageText())
	}
	var cmd func(context.Context, *database, []string, io.Writer) error
	rest := args[2:]
	for _, c := range commands() {
		if c.name == args[0]+" "+args[1] {
			cmd = c.run
		}
	}
	// A one-word command (reconcile) takes the rest as its flags.
	for _, c := range commands() {
		if cmd == nil && c.name == args[0] {
			cmd, rest = c.run, args[1:]
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
	return cmd(ctx, db, rest, stdout)
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
