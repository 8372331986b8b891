package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore"
	"github.com/ledger/ledger/eventstore/apikeys"
	"github.com/ledger/ledger/eventstore/keys"
	"github.com/ledger/ledger/eventstore/sealing"
	"github.com/ledger/ledger/eventstore/signin"
	"github.com/ledger/ledger/httpapi/dashboard"
	"github.com/ledger/ledger/projections"
	"github.com/ledger/ledger/workers/usecase"
)

// dashboardAccounts plugs the dashboard users' read model and stream, and
// the sign-in throttle, into dashboard.Accounts.
type dashboardAccounts struct {
	*projections.Reader
	*signin.Throttle
	store *eventstore.Store
}

// ExecuteDashboardUser runs a command on a dashboard user's stream.
func (a dashboardAccounts) ExecuteDashboardUser(ctx context.Context, ref domain.StreamRef, meta domain.Metadata,
	decide func(domain.DashboardUser) ([]domain.Event, error)) (domain.DashboardUser, error) {
	return eventstore.Execute(ctx, a.store, ref, meta, domain.ApplyDashboardUser, decide)
}

// dashboardCredentials plugs the tenant's stream and the api_keys read
// model into dashboard.Credentials: the same events ledgerctl apikey
// create and revoke append, with the dashboard user as actor.
type dashboardCredentials struct {
	reader *projections.Reader
	uses   *apikeys.Uses
	store  *eventstore.Store
}

// APIKeys lists the tenant's keys with when each last obtained a token.
func (c dashboardCredentials) APIKeys(ctx context.Context, tenantID uuid.UUID) ([]domain.APIKeyItem, error) {
	keys, err := c.reader.APIKeys(ctx, tenantID)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = k.APIKey
	}
	used, err := c.uses.LastUsed(ctx, names)
	if err != nil {
		return nil, err
	}
	for i, k := range keys {
		if at, ok := used[k.APIKey]; ok {
			keys[i].LastUsedAt = &at
		}
	}
	return keys, nil
}

func (c dashboardCredentials) CreateAPIKey(ctx context.Context, tenantID uuid.UUID, meta domain.Metadata) (string, string, error) {
	apiKey, secret, secretHash := apikeys.NewPair()
	_, err := eventstore.Execute(ctx, c.store, tenantStream(tenantID), meta, domain.ApplyTenant,
		func(t domain.Tenant) ([]domain.Event, error) { return domain.DecideCreateAPIKey(t, apiKey, secretHash) })
	if err != nil {
		return "", "", err
	}
	return apiKey, secret, nil
}

func (c dashboardCredentials) RevokeAPIKey(ctx context.Context, tenantID uuid.UUID, apiKey string, meta domain.Metadata) error {
	_, err := eventstore.Execute(ctx, c.store, tenantStream(tenantID), meta, domain.ApplyTenant,
		func(t domain.Tenant) ([]domain.Event, error) { return domain.DecideRevokeAPIKey(t, apiKey) })
	return err
}

func tenantStream(id uuid.UUID) domain.StreamRef {
	return domain.StreamRef{TenantID: id, Type: "tenant", ID: id}
}

// apiCredentials plugs the api_keys read model and the key-use record into
// httpapi.Credentials.
type apiCredentials struct {
	*projections.Reader
	*apikeys.Uses
}

// paymentFeed tells the dashboard's live pages which payments changed: a
// core NATS subscription per open page to the tenant's payment subjects
// (<prefix>.<tenantId>.payment.<paymentId>.<event>). Core, not JetStream:
// a page wants what happens while it is open, and nothing is left behind
// on the server when it closes.
type paymentFeed struct {
	nc     *nats.Conn
	prefix string
}

func (f paymentFeed) PaymentChanges(ctx context.Context, tenantID uuid.UUID) (<-chan uuid.UUID, error) {
	msgs := make(chan *nats.Msg, 256)
	sub, err := f.nc.ChanSubscribe(f.prefix+"."+tenantID.String()+".payment.>", msgs)
	if err != nil {
		return nil, fmt.Errorf("subscribe to payment events: %w", err)
	}
	out := make(chan uuid.UUID, 64)
	go func() {
		defer close(out)
		defer sub.Unsubscribe()
		for {
			select {
			case <-ctx.Done():
				return
			case m := <-msgs:
				tokens := strings.Split(m.Subject, ".")
				id, err := uuid.Parse(tokens[len(tokens)-2])
				if err != nil {
					continue
				}
				select {
				case out <- id:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out, nil
}

// secureCookies says whether the dashboard's cookies are Secure: always,
// except when the public URL is plain http on a loopback address (local
// development and the sandbox), where a browser would drop Secure cookies.
func secureCookies(publicURL string) bool {
	u, err := url.Parse(publicURL)
	if err != nil || u.Scheme != "http" {
		return true
	}
	host := u.Hostname()
	if host == "localhost" {
		return false
	}
	ip := net.ParseIP(host)
	return ip == nil || !ip.IsLoopback()
}

// withDashboard serves /dashboard from dash and everything else from api.
// A prefix test rather than a ServeMux, so API requests reach the API's
// router exactly as they came (a ServeMux would clean and redirect paths).
func withDashboard(api, dash http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/dashboard" || strings.HasPrefix(r.URL.Path, "/dashboard/") {
			dash.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})
}

// newDashboard builds the partner dashboard over the app's stores.
func (a *app) newDashboard(reader *projections.Reader, ledger *usecase.Ledger, uses *apikeys.Uses,
	sealer *sealing.Sealer, serverKeys *keys.ServerKeys, links dashboard.DocumentLinks) *dashboard.Dashboard {
	return dashboard.New(dashboard.Config{SecureCookies: secureCookies(a.cfg.PublicURL)}, dashboard.Deps{
		Log:         a.log,
		Accounts:    dashboardAccounts{Reader: reader, Throttle: signin.NewThrottle(a.pool), store: a.store},
		Secrets:     sealer, // password hashes, like webhookSecrets
		Credentials: dashboardCredentials{reader: reader, uses: uses, store: a.store},
		Payments:    ledger,
		Users:       reader,
		Events:      a.store,
		Ledger:      reader,
		Documents:   links,
		Feed:        paymentFeed{nc: a.nc, prefix: a.cfg.NATSSubjectPrefix},
		Keys:        serverKeys, // the CSRF key
	})
}
