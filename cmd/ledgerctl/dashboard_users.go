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

func init() {
	register("dashboard-user add", "dashboard-user add --tenant ID --email EMAIL [--public-url URL]",
		"let someone into a tenant's dashboard; prints a one-time set-password link", dashboardUserAdd)
}

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
	if _, err := db.reader.OwnerUserID(ctx, tenantID); err != nil {
		return fmt.Errorf("tenant %s: %w", tenantID, err)
	}
	raw := make([]byte, 32)
	rand.Read(raw)
	token := base64.RawURLEncoding.EncodeToString(raw)
	sum := sha256.Sum256([]byte(token))
	cmd := domain.CreateDashboardUser{UserID: uuid.Must(uuid.NewV7()), Email: *email,
		SetupTokenHash: hex.EncodeToString(sum[:]), SetupExpiresAt: time.Now().Add(setupLinkTTL).UTC().Truncate(time.Millisecond)}
	ref := domain.StreamRef{TenantID: tenantID, Type: "dashboard_user", ID: cmd.UserID}
	u, err := eventstore.Execute(ctx, db.store, ref, operator, domain.ApplyDashboardUser,
		func(u domain.DashboardUser) ([]domain.Event, error) { return domain.DecideCreateDashboardUser(u, cmd) })
	if errors.Is(err, eventstore.ErrVersionConflict) || domain.ErrorKind(err) == domain.Conflict {
		return fmt.Errorf("create dashboard user: %s already has a dashboard account", *email)
	}
	if err != nil {
		return fmt.Errorf("create dashboard user: %w", err)
	}
	link := strings.TrimRight(*publicURL, "/") + "/dashboard/set-password?token=" + url.QueryEscape(token)
	return printJSON(stdout, dashboardUser{TenantID: tenantID.String(), DashboardUserID: u.ID.String(), Email: u.Email,
		SetPasswordURL: link, ExpiresAt: cmd.SetupExpiresAt.Format(time.RFC3339Nano)})
}

// publicURLDefault is ledgerd's default public URL, or LEDGER_PUBLIC_URL.
func publicURLDefault() string {
	if v := os.Getenv("LEDGER_PUBLIC_URL"); v != "" {
		return v
	}
	return "http://127.0.0.1:8080"
}
