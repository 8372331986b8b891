package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
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
	"github.com/ledger/ledger/eventstore"
)

// setupLinkTTL is how long a set-password link works.
const setupLinkTTL = 72 * time.Hour

// dashboardUser is what dashboard-user add prints.
type dashboardUser struct {
	TenantID        string `json:"tenantId"`
	DashboardUserID string `json:"dashboardUserId"`
	Email           string `json:"email"`
	SetPasswordURL  string `json:"setPasswordUrl"`
	ExpiresAt       string `json:"expiresAt"`
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
	if _, err := db.reader.OwnerUserID(ctx, tenantID); err != nil {
		return fmt.Errorf("tenant %s: %w", tenantID, err)
	}
	token, tokenHash, expires := newSetupLink()
	cmd := domain.CreateDashboardUser{UserID: uuid.Must(uuid.NewV7()), Email: *email,
		SetupTokenHash: tokenHash, SetupExpiresAt: expires}
	ref := domain.StreamRef{TenantID: tenantID, Type: "dashboard_user", ID: cmd.UserID}
	u, err := eventstore.Execute(ctx, db.store, ref, operator, domain.ApplyDashboardUser,
		func(u domain.DashboardUser) ([]domain.Event, error) { return domain.DecideCreateDashboardUser(u, cmd) })
	if errors.Is(err, eventstore.ErrVersionConflict) || domain.ErrorKind(err) == domain.Conflict {
		return fmt.Errorf("create dashboard user: %s already has a dashboard account", *email)
	}
	if err != nil {
		return fmt.Errorf("create dashboard user: %w", err)
	}
	return printJSON(stdout, dashboardUser{TenantID: tenantID.String(), DashboardUserID: u.ID.String(), Email: u.Email,
		SetPasswordURL: setupLinkURL(*publicURL, token), ExpiresAt: expires.Format(time.RFC3339Nano)})
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
	token, tokenHash, expires := newSetupLink()
	_, err = eventstore.Execute(ctx, db.store, dashboardUserStream(acct), operator, domain.ApplyDashboardUser,
		func(u domain.DashboardUser) ([]domain.Event, error) {
			return domain.DecideIssueDashboardSetupLink(u, tokenHash, expires)
		})
	if err != nil {
		return fmt.Errorf("issue set-password link: %w", err)
	}
	return printJSON(stdout, dashboardUser{TenantID: acct.TenantID.String(), DashboardUserID: acct.ID.String(), Email: acct.Email,
		SetPasswordURL: setupLinkURL(*publicURL, token), ExpiresAt: expires.Format(time.RFC3339Nano)})
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
	if _, err := eventstore.Execute(ctx, db.store, dashboardUserStream(acct), operator, domain.ApplyDashboardUser, domain.DecideDisableDashboardUser); err != nil {
		return fmt.Errorf("disable dashboard user: %w", err)
	}
	return printJSON(stdout, struct {
		TenantID        string `json:"tenantId"`
		DashboardUserID string `json:"dashboardUserId"`
		Email           string `json:"email"`
		Disabled        bool   `json:"disabled"`
	}{acct.TenantID.String(), acct.ID.String(), acct.Email, true})
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
	acct, err := db.reader.DashboardAccountByEmail(ctx, normalised)
	if err != nil {
		return acct, fmt.Errorf("dashboard user %s: %w", normalised, err)
	}
	return acct, nil
}

// dashboardUserStream is acct's event stream.
func dashboardUserStream(acct domain.DashboardAccount) domain.StreamRef {
	return domain.StreamRef{TenantID: acct.TenantID, Type: "dashboard_user", ID: acct.ID}
}

// newSetupLink makes a set-password token (random, shown once), its
// SHA-256 (all that is stored) and when it expires.
func newSetupLink() (token, tokenHash string, expires time.Time) {
	raw := make([]byte, 32)
	rand.Read(raw)
	token = base64.RawURLEncoding.EncodeToString(raw)
	sum := sha256.Sum256([]byte(token))
	return token, hex.EncodeToString(sum[:]), time.Now().Add(setupLinkTTL).UTC().Truncate(time.Millisecond)
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
