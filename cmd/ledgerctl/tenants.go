package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/google/uuid"

	"github.com/ledger/ledger/domain"
)

// operator is the actor of events caused through ledgerctl.
var operator = domain.Metadata{Actor: "operator:ledgerctl"}

// keyPair is a new API key and its secret, shown once.
type keyPair struct {
	TenantID    string `json:"tenantId"`
	OwnerUserID string `json:"ownerUserId,omitempty"`
	APIKey      string `json:"apiKey"`
	APISecret   string `json:"apiSecret"`
}

func tenantCreate(ctx context.Context, db *database, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("tenant create", flag.ContinueOnError)
	name := fs.String("name", "", "the tenant's name")
	email := fs.String("email", "", "the owner user's email")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := db.open(ctx); err != nil {
		return err
	}
	cmd, secret, err := db.ledger.CreateTenant(ctx, *name, *email, operator)
	if err != nil {
		return fmt.Errorf("create tenant: %w", err)
	}
	return printJSON(stdout, keyPair{TenantID: cmd.TenantID.String(), OwnerUserID: cmd.OwnerUserID.String(),
		APIKey: cmd.APIKey, APISecret: secret})
}

func apikeyCreate(ctx context.Context, db *database, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("apikey create", flag.ContinueOnError)
	tenant := fs.String("tenant", "", "the tenant's id")
	if err := fs.Parse(args); err != nil {
		return err
	}
	tenantID, err := uuid.Parse(*tenant)
	if err != nil {
		return errors.New("--tenant must be a tenant id (UUID)")
	}
	if err := db.open(ctx); err != nil {
		return err
	}
	apiKey, secret, err := db.ledger.CreateAPIKey(ctx, tenantID, operator)
	if err != nil {
		return fmt.Errorf("create api key: %w", err)
	}
	return printJSON(stdout, keyPair{TenantID: tenantID.String(), APIKey: apiKey, APISecret: secret})
}

func apikeyRevoke(ctx context.Context, db *database, args []string, stdout io.Writer) error {
	if len(args) != 1 || strings.HasPrefix(args[0], "-") {
		return errors.New("usage: ledgerctl apikey revoke APIKEY")
	}
	if err := db.open(ctx); err != nil {
		return err
	}
	cred, err := db.ledger.Credential(ctx, args[0])
	if err != nil {
		return fmt.Errorf("api key %s: %w", args[0], err)
	}
	if err := db.ledger.RevokeAPIKey(ctx, cred.TenantID, cred.APIKey, operator); err != nil {
		return fmt.Errorf("revoke api key: %w", err)
	}
	return printJSON(stdout, map[string]any{"tenantId": cred.TenantID, "apiKey": cred.APIKey, "revoked": true})
}
