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
	"github.com/ledger/ledger/eventstore/apikeys"
	"github.com/ledger/ledger/eventstore/keys"
	"github.com/ledger/ledger/eventstore/sealing"
	"github.com/ledger/ledger/eventstore/signin"
	"github.com/ledger/ledger/httpapi/dashboard"
	"github.com/ledger/ledger/projections"
	"github.com/ledger/ledger/workers/reconcile"
	"github.com/ledger/ledger/workers/usecase"
)

// tenantAccess is who may act for a tenant, for the API and the dashboard:
// API keys and dashboard users through the ledger, when each key last
// obtained a token, and the dashboard's sign-in lock-out.
type tenantAccess struct {
	*usecase.Ledger
	*apikeys.Uses
	*signin.Throttle
}

// APIKeys lists the tenant's keys with when each last obtained a token.
func (c tenantAccess) APIKeys(ctx context.Context, tenantID uuid.UUID) ([]domain.APIKeyItem, error) {
	keys, err := c.Ledger.APIKeys(ctx, tenantID)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = k.APIKey
	}
	used, err := c.LastUsed(ctx, names)
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
func (a *app) newDashboard(reader *projections.Reader, ledger *usecase.Ledger, access tenantAccess,
	sealer *sealing.Sealer, serverKeys *keys.ServerKeys, links dashboard.DocumentLinks) *dashboard.Dashboard {
	return dashboard.New(dashboard.Config{SecureCookies: secureCookies(a.cfg.PublicURL)}, dashboard.Deps{
		Log:         a.log,
		Accounts:    access,
		Secrets:     sealer, // password hashes, like webhookSecrets
		Credentials: access,
		Payments:    ledger,
		Users:       reader,
		Events:      a.store,
		Ledger:      reader,
		Documents:   links,
		Feed:        paymentFeed{nc: a.nc, prefix: a.cfg.NATSSubjectPrefix},
		Breaks:      ledger,
		Runs:        reconcile.NewHistory(a.pool),
		Keys:        serverKeys, // the CSRF key
	})
}
