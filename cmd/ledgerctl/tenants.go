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
	"github.com/ledger/ledger/eventstore"
	"github.com/ledger/ledger/eventstore/apikeys"
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
	apiKey, secret, secretHash := apikeys.NewPair()
	cmd := domain.CreateTenant{TenantID: uuid.Must(uuid.NewV7()), OwnerUserID: uuid.Must(uuid.NewV7()),
		Name: *name, OwnerEmail: *email, APIKey: apiKey, SecretHash: secretHash}
	tenantEvents, ownerEvents, err := domain.DecideCreateTenant(cmd)
	if err != nil {
		return err
	}
	if err := db.open(ctx); err != nil {
		return err
	}
	_, err = db.store.Append(ctx, operator,
		eventstore.Batch{Stream: domain.StreamRef{TenantID: cmd.TenantID, Type: "tenant", ID: cmd.TenantID}, Events: tenantEvents},
		eventstore.Batch{Stream: domain.StreamRef{TenantID: cmd.TenantID, Type: "user", ID: cmd.OwnerUserID}, Events: ownerEvents})
	if err != nil {
		return fmt.Errorf("create tenant: %w", err)
	}
	return printJSON(stdout, keyPair{TenantID: cmd.TenantID.String(), OwnerUserID: cmd.OwnerUserID.String(),
		APIKey: apiKey, APISecret: secret})
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
	apiKey, secret, secretHash := apikeys.NewPair()
	_, err = eventstore.Execute(ctx, db.store, tenantStream(tenantID), operator, domain.ApplyTenant,
		func(t domain.Tenant) ([]domain.Event, error) { return domain.DecideCreateAPIKey(t, apiKey, secretHash) })
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
	cred, err := db.reader.Credential(ctx, args[0])
	if err != nil {
		return fmt.Errorf("api key %s: %w", args[0], err)
	}
	_, err = eventstore.Execute(ctx, db.store, tenantStream(cred.TenantID), operator, domain.ApplyTenant,
		func(t domain.Tenant) ([]domain.Event, error) { return domain.DecideRevokeAPIKey(t, cred.APIKey) })
	if err != nil {
		return fmt.Errorf("revoke api key: %w", err)
	}
	return printJSON(stdout, map[string]any{"tenantId": cred.TenantID, "apiKey": cred.APIKey, "revoked": true})
}

func tenantStream(id uuid.UUID) domain.StreamRef {
	return domain.StreamRef{TenantID: id, Type: "tenant", ID: id}
}
