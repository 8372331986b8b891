package usecase

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore"
	"github.com/ledger/ledger/eventstore/apikeys"
)

// CreateTenant creates a tenant, its owner user and its first API key,
// whose secret is returned once (ledgerctl tenant create).
func (l *Ledger) CreateTenant(ctx context.Context, name, ownerEmail string, meta domain.Metadata) (domain.CreateTenant, string, error) {
	apiKey, secret, secretHash := apikeys.NewPair()
	cmd := domain.CreateTenant{TenantID: uuid.Must(uuid.NewV7()), OwnerUserID: uuid.Must(uuid.NewV7()),
		Name: name, OwnerEmail: ownerEmail, APIKey: apiKey, SecretHash: secretHash}
	tenantEvents, ownerEvents, err := domain.DecideCreateTenant(cmd)
	if err != nil {
		return cmd, "", err
	}
	_, err = l.store.Append(ctx, meta, eventstore.Batch{Stream: tenantStream(cmd.TenantID), Events: tenantEvents},
		eventstore.Batch{Stream: domain.StreamRef{TenantID: cmd.TenantID, Type: "user", ID: cmd.OwnerUserID}, Events: ownerEvents})
	return cmd, secret, err
}

// CreateAPIKey issues the tenant an API key, whose secret is returned once
// and only its hash kept (the dashboard and ledgerctl apikey create).
func (l *Ledger) CreateAPIKey(ctx context.Context, tenantID uuid.UUID, meta domain.Metadata) (apiKey, secret string, err error) {
	apiKey, secret, secretHash := apikeys.NewPair()
	_, err = eventstore.Execute(ctx, l.store, tenantStream(tenantID), meta, domain.ApplyTenant,
		func(t domain.Tenant) ([]domain.Event, error) { return domain.DecideCreateAPIKey(t, apiKey, secretHash) })
	if err != nil {
		return "", "", err
	}
	return apiKey, secret, nil
}

// RevokeAPIKey revokes one of the tenant's API keys (the dashboard's and
// ledgerctl apikey revoke).
func (l *Ledger) RevokeAPIKey(ctx context.Context, tenantID uuid.UUID, apiKey string, meta domain.Metadata) error {
	_, err := eventstore.Execute(ctx, l.store, tenantStream(tenantID), meta, domain.ApplyTenant,
		func(t domain.Tenant) ([]domain.Event, error) { return domain.DecideRevokeAPIKey(t, apiKey) })
	return err
}

// executeDashboardUser runs a command on a dashboard user's stream.
func (l *Ledger) executeDashboardUser(ctx context.Context, ref domain.StreamRef, meta domain.Metadata,
	decide func(domain.DashboardUser) ([]domain.Event, error)) (domain.DashboardUser, error) {
	return eventstore.Execute(ctx, l.store, ref, meta, domain.ApplyDashboardUser, decide)
}

// SignInDashboardUser opens a dashboard session (the dashboard's sign-in).
func (l *Ledger) SignInDashboardUser(ctx context.Context, tenantID, userID uuid.UUID, sessionHash string,
	expiresAt time.Time, meta domain.Metadata) error {
	_, err := l.executeDashboardUser(ctx, dashboardUserStream(tenantID, userID), meta, func(u domain.DashboardUser) ([]domain.Event, error) {
		return domain.DecideDashboardSignIn(u, sessionHash, expiresAt)
	})
	return err
}

// SignOutDashboardUser closes a dashboard session.
func (l *Ledger) SignOutDashboardUser(ctx context.Context, tenantID, userID uuid.UUID, sessionHash string, meta domain.Metadata) error {
	_, err := l.executeDashboardUser(ctx, dashboardUserStream(tenantID, userID), meta, func(u domain.DashboardUser) ([]domain.Event, error) {
		return domain.DecideDashboardSignOut(u, sessionHash)
	})
	return err
}

// SetDashboardPassword stores a dashboard user's password through their
// set-password link.
func (l *Ledger) SetDashboardPassword(ctx context.Context, tenantID, userID uuid.UUID, setupTokenHash, passwordHash string,
	now time.Time, meta domain.Metadata) error {
	_, err := l.executeDashboardUser(ctx, dashboardUserStream(tenantID, userID), meta, func(u domain.DashboardUser) ([]domain.Event, error) {
		return domain.DecideSetDashboardPassword(u, setupTokenHash, passwordHash, now)
	})
	return err
}

// AddDashboardUser gives an existing tenant, or the operator's books
// (domain.OperatorBooks), a dashboard user and returns their set-password
// link's token (ledgerctl dashboard-user add).
func (l *Ledger) AddDashboardUser(ctx context.Context, tenantID uuid.UUID, email string,
	meta domain.Metadata) (u domain.DashboardUser, token string, err error) {
	// The operator's books are no tenant's: their dashboard users work
	// the reconciliation breaks.
	if _, err := l.OwnerUserID(ctx, tenantID); err != nil && tenantID != domain.OperatorBooks {
		return u, "", fmt.Errorf("tenant %s: %w", tenantID, err)
	}
	token, tokenHash, expires := newSetupLink()
	cmd := domain.CreateDashboardUser{UserID: uuid.Must(uuid.NewV7()), Email: email, SetupTokenHash: tokenHash, SetupExpiresAt: expires}
	u, err = l.executeDashboardUser(ctx, dashboardUserStream(tenantID, cmd.UserID), meta,
		func(u domain.DashboardUser) ([]domain.Event, error) { return domain.DecideCreateDashboardUser(u, cmd) })
	return u, token, err
}

// IssueDashboardSetupLink returns a dashboard user's new set-password
// link's token; the current password works until the link is used
// (ledgerctl dashboard-user reset).
func (l *Ledger) IssueDashboardSetupLink(ctx context.Context, tenantID, userID uuid.UUID, meta domain.Metadata) (domain.DashboardUser, string, error) {
	token, tokenHash, expires := newSetupLink()
	u, err := l.executeDashboardUser(ctx, dashboardUserStream(tenantID, userID), meta, func(u domain.DashboardUser) ([]domain.Event, error) {
		return domain.DecideIssueDashboardSetupLink(u, tokenHash, expires)
	})
	return u, token, err
}

// DisableDashboardUser ends a dashboard user's password, set-password link
// and open sessions (ledgerctl dashboard-user disable).
func (l *Ledger) DisableDashboardUser(ctx context.Context, tenantID, userID uuid.UUID, meta domain.Metadata) error {
	_, err := l.executeDashboardUser(ctx, dashboardUserStream(tenantID, userID), meta, domain.DecideDisableDashboardUser)
	return err
}

// newSetupLink makes a set-password token (random, shown once), its
// SHA-256 (all that is stored) and when it expires, three days on.
func newSetupLink() (token, tokenHash string, expires time.Time) {
	raw := make([]byte, 32)
	rand.Read(raw)
	token = base64.RawURLEncoding.EncodeToString(raw)
	sum := sha256.Sum256([]byte(token))
	return token, hex.EncodeToString(sum[:]), time.Now().Add(72 * time.Hour).UTC().Truncate(time.Millisecond)
}

func tenantStream(id uuid.UUID) domain.StreamRef {
	return domain.StreamRef{TenantID: id, Type: "tenant", ID: id}
}

func dashboardUserStream(tenantID, id uuid.UUID) domain.StreamRef {
	return domain.StreamRef{TenantID: tenantID, Type: "dashboard_user", ID: id}
}
