package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ledger/ledger/eventstore/keys"
)

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
	master, err := masterKeys(db.getenv)
	if err != nil {
		return err
	}
	if err := db.open(ctx); err != nil {
		return err
	}
	kid, revoked, err := keys.RotateKey(ctx, db.pool, master, *revoke, keys.TokenLifetimes{Tenant: *tenantTTL, User: *userTTL})
	if err != nil {
		return err
	}
	if revoked == nil {
		revoked = []string{}
	}
	return printJSON(stdout, map[string]any{"kid": kid, "revoked": revoked})
}

func keysRotateMaster(ctx context.Context, db *database, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("keys rotate-master", flag.ContinueOnError)
	oldFile := fs.String("old", "", "the master key file the keys are wrapped with now")
	newFile := fs.String("new", "", "the master key file to wrap them with (32 random bytes: head -c 32 /dev/urandom > FILE)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 || *oldFile == "" || *newFile == "" {
		return errors.New("usage: ledgerctl keys rotate-master --old FILE --new FILE")
	}
	older, err := keys.ReadMasterKeyFiles(*oldFile)
	if err != nil {
		return err
	}
	newer, err := keys.ReadMasterKeyFiles(*newFile)
	if err != nil {
		return err
	}
	if older.ID() == newer.ID() {
		return errors.New("--old and --new are the same master key")
	}
	if err := db.open(ctx); err != nil {
		return err
	}
	n, err := keys.RewrapKeys(ctx, db.pool, older, newer)
	if err != nil {
		return err
	}
	return printJSON(stdout, map[string]any{"masterKey": newer.ID(), "rewrapped": n})
}

// masterKeys reads ledgerd's master keys: LEDGER_MASTER_KEY_FILE, else the
// sandbox's under LEDGER_DATA_DIR, which ledgerctl never makes (a key
// wrapped with a master key no ledgerd holds would stop them signing).
func masterKeys(getenv func(string) string) (*keys.MasterKeys, error) {
	var files []string
	for _, f := range strings.Split(getenv("LEDGER_MASTER_KEY_FILE"), ",") {
		if f = strings.TrimSpace(f); f != "" {
			files = append(files, f)
		}
	}
	if len(files) == 0 {
		dir := getenv("LEDGER_DATA_DIR")
		if dir == "" {
			dir = "./.ledger" // ledgerd's default
		}
		local := filepath.Join(dir, "master.key")
		if _, err := os.Stat(local); err != nil {
			return nil, fmt.Errorf("no master key: set LEDGER_MASTER_KEY_FILE to ledgerd's (no sandbox key at %s either)", local)
		}
		files = []string{local}
	}
	return keys.ReadMasterKeyFiles(files...)
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
