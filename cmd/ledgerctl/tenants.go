package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

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

// dashboardUser is what the dashboard-user commands print: add and reset
// a set-password link, disable the flag.
type dashboardUser struct {
	TenantID        string `json:"tenantId"`
	DashboardUserID string `json:"dashboardUserId"`
	Email           string `json:"email"`
	SetPasswordURL  string `json:"setPasswordUrl,omitempty"`
	ExpiresAt       string `json:"expiresAt,omitempty"`
	Disabled        bool   `json:"disabled,omitempty"`
}

// dashboardUserAdd creates a dashboard user with a set-password link. The
// link's token is random and shown once; only its SHA-256 is stored.
func dashboardUserAdd(ctx context.Context, db *database, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("dashboard-user add", flag.ContinueOnError)
	tenant := fs.String("tenant", "", "the tenant's id")
	email := fs.String("email", "", "the dashboard user's email")
	publicURL := fs.String("public-url", publicURLDefault(), "ledgerd's public URL (default LEDGER_PUBLIC_URL)")
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
	u, token, err := db.ledger.AddDashboardUser(ctx, tenantID, *email, operator)
	if domain.ErrorKind(err) == domain.Conflict {
		return fmt.Errorf("create dashboard user: %s already has a dashboard account", *email)
	}
	if err != nil {
		return fmt.Errorf("create dashboard user: %w", err)
	}
	return printJSON(stdout, dashboardUser{TenantID: tenantID.String(), DashboardUserID: u.ID.String(), Email: u.Email,
		SetPasswordURL: setupLinkURL(*publicURL, token), ExpiresAt: u.SetupExpiresAt.Format(time.RFC3339Nano)})
}

// dashboardUserReset issues a new set-password link to an existing
// dashboard user; the current password works until the link is used.
func dashboardUserReset(ctx context.Context, db *database, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("dashboard-user reset", flag.ContinueOnError)
	email := fs.String("email", "", "the dashboard user's email")
	publicURL := fs.String("public-url", publicURLDefault(), "ledgerd's public URL (default LEDGER_PUBLIC_URL)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	acct, err := dashboardAccount(ctx, db, *email)
	if err != nil {
		return err
	}
	u, token, err := db.ledger.IssueDashboardSetupLink(ctx, acct.TenantID, acct.ID, operator)
	if err != nil {
		return fmt.Errorf("issue set-password link: %w", err)
	}
	return printJSON(stdout, dashboardUser{TenantID: acct.TenantID.String(), DashboardUserID: acct.ID.String(), Email: acct.Email,
		SetPasswordURL: setupLinkURL(*publicURL, token), ExpiresAt: u.SetupExpiresAt.Format(time.RFC3339Nano)})
}

// dashboardUserDisable takes a dashboard user's access away (someone who
// left the partner): their password and any set-password link stop working
// and their open sessions end. `dashboard-user reset` lets them in again.
func dashboardUserDisable(ctx context.Context, db *database, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("dashboard-user disable", flag.ContinueOnError)
	email := fs.String("email", "", "the dashboard user's email")
	if err := fs.Parse(args); err != nil {
		return err
	}
	acct, err := dashboardAccount(ctx, db, *email)
	if err != nil {
		return err
	}
	if err := db.ledger.DisableDashboardUser(ctx, acct.TenantID, acct.ID, operator); err != nil {
		return fmt.Errorf("disable dashboard user: %w", err)
	}
	return printJSON(stdout, dashboardUser{TenantID: acct.TenantID.String(), DashboardUserID: acct.ID.String(),
		Email: acct.Email, Disabled: true})
}

// dashboardAccount finds the dashboard user who signs in with email.
func dashboardAccount(ctx context.Context, db *database, email string) (domain.DashboardAccount, error) {
	normalised, err := domain.NormaliseEmail(email)
	if err != nil {
		return domain.DashboardAccount{}, errors.New("--email must be an email address")
	}
	if err := db.open(ctx); err != nil {
		return domain.DashboardAccount{}, err
	}
	acct, err := db.ledger.DashboardAccountByEmail(ctx, normalised)
	if err != nil {
		return acct, fmt.Errorf("dashboard user %s: %w", normalised, err)
	}
	return acct, nil
}

func setupLinkURL(publicURL, token string) string {
	return strings.TrimRight(publicURL, "/") + "/dashboard/set-password?token=" + url.QueryEscape(token)
}

// publicURLDefault is ledgerd's default public URL, or LEDGER_PUBLIC_URL.
func publicURLDefault() string {
	if v := os.Getenv("LEDGER_PUBLIC_URL"); v != "" {
		return v
	}
	return "http://127.0.0.1:8080"
}
