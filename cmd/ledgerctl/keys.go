package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/ledger/ledger/eventstore"
)

func init() {
	register("keys rotate", "keys rotate [--revoke-previous] [--tenant-token-ttl D] [--user-token-ttl D]",
		"sign new tokens with a new key, from 10 s on (old tokens stay valid; with --revoke-previous, a leaked key: nothing signed before verifies within 10 s, and the new key signs at once)", keysRotate)
}

// Token lifetimes a new signing key allows when neither a flag nor ledgerd's
// variable says (ledgerd's defaults).
const (
	defaultTenantTokenTTL = "1h"
	defaultUserTokenTTL   = "24h"
)

func keysRotate(ctx context.Context, db *database, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("keys rotate", flag.ContinueOnError)
	revoke := fs.Bool("revoke-previous", false, "revoke every earlier key (one leaked): tokens and presigned URLs they signed stop working within 10 s")
	tenantTTL := fs.Duration("tenant-token-ttl", envDuration(db.getenv, "LEDGER_TENANT_TOKEN_TTL", defaultTenantTokenTTL),
		"longest tenant token the key signs, on any instance (default LEDGER_TENANT_TOKEN_TTL, else 1h); an instance set for longer signs this long")
	userTTL := fs.Duration("user-token-ttl", envDuration(db.getenv, "LEDGER_USER_TOKEN_TTL", defaultUserTokenTTL),
		"longest user token the key signs, on any instance (default LEDGER_USER_TOKEN_TTL, else 24h)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("keys rotate takes no arguments, got %q", fs.Args())
	}
	if *tenantTTL <= 0 || *userTTL <= 0 {
		return fmt.Errorf("the token lifetimes (--tenant-token-ttl, --user-token-ttl or LEDGER_TENANT_TOKEN_TTL, LEDGER_USER_TOKEN_TTL) must be positive durations such as 1h")
	}
	if err := db.open(ctx); err != nil {
		return err
	}
	kid, revoked, err := eventstore.RotateKey(ctx, db.pool, *revoke, eventstore.TokenLifetimes{Tenant: *tenantTTL, User: *userTTL})
	if err != nil {
		return err
	}
	if revoked == nil {
		revoked = []string{}
	}
	return printJSON(stdout, map[string]any{"kid": kid, "revoked": revoked})
}

// envDuration is the duration in the variable name, else def (both are
// checked again as flags: a bad one is 0 here, refused there).
func envDuration(getenv func(string) string, name, def string) time.Duration {
	v := getenv(name)
	if v == "" {
		v = def
	}
	d, _ := time.ParseDuration(v)
	return d
}
