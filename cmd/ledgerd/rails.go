package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"
	_ "time/tzdata" // Africa/Johannesburg on machines without a zone database

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/httpapi"
	"github.com/ledger/ledger/workers"
	"github.com/ledger/ledger/workers/rails/ethereum"
	"github.com/ledger/ledger/workers/rails/lightning"
	"github.com/ledger/ledger/workers/rails/payout"
	"github.com/ledger/ledger/workers/rails/prices"
	"github.com/ledger/ledger/workers/webhooks"
)

// rails plugs the rail adapters into httpapi.Rails: sandbox ones in sandbox
// mode; in production the CoinGecko price feed and, when LEDGER_LND_URL is
// set, an LND node for deposit invoices, their settlement and Lightning
// payouts. USDT custody has no production adapter: those payments answer
// 503 rail_unavailable in production.
type rails struct {
	prices      prices.Source
	node        lightning.Node
	lnd         *lightning.LND // production with LEDGER_LND_URL; nil otherwise
	deposits    ethereum.Deposits
	collections map[string]domain.CollectionAccount
}

// usdtSandboxSeed derives the sandbox's per-payment USDT addresses. It is
// public like a test-mode key: sandbox addresses hold nothing.
var usdtSandboxSeed = []byte("ledger sandbox usdt deposits v1")

// johannesburg is South Africa's time zone, for its business hours (contract §6).
var johannesburg = func() *time.Location {
	loc, err := time.LoadLocation("Africa/Johannesburg")
	if err != nil {
		panic(err) // time/tzdata is embedded: unreachable
	}
	return loc
}()

var errNoProductionAdapter = errors.New("no production adapter is configured for this rail")

func newRails(cfg config) (*rails, error) {
	collections, err := parseCollectionAccounts(cfg.CollectionAccounts)
	if err != nil {
		return nil, err
	}
	r := &rails{collections: collections}
	if cfg.Mode == "production" {
		r.prices = prices.NewCoinGecko(cfg.PriceFeedURL, cfg.PriceFeedKey, 30*time.Second, &http.Client{})
		if cfg.LNDURL != "" {
			node, err := newLND(cfg)
			if err != nil {
				return nil, err
			}
			r.node, r.lnd = node, node
		}
		return r, nil
	}
	table, err := prices.ParseTable(cfg.SandboxPrices)
	if err != nil {
		return nil, err
	}
	drift, err := prices.ParseDrift(cfg.SandboxPriceDrift)
	if err != nil {
		return nil, err
	}
	r.prices = prices.NewSandbox(table, drift, time.Now)
	r.node = lightning.NewSandboxNode()
	r.deposits = ethereum.NewSandboxDeposits(usdtSandboxSeed)
	return r, nil
}

func (r *rails) BTCPrices(ctx context.Context) (domain.BTCPrices, error) {
	return r.prices.BTCPrices(ctx)
}

func (r *rails) LightningInvoice(ctx context.Context, paymentID uuid.UUID, amountSats int64, description string,
	createdAt time.Time, expiry time.Duration) (domain.LightningInvoice, error) {
	if r.node == nil {
		return domain.LightningInvoice{}, errNoProductionAdapter
	}
	inv, err := r.node.CreateInvoice(ctx, lightning.InvoiceRequest{PaymentID: paymentID, AmountSats: amountSats,
		Description: description, CreatedAt: createdAt, Expiry: expiry})
	if err != nil {
		return domain.LightningInvoice{}, err
	}
	return domain.LightningInvoice{PaymentRequest: inv.PaymentRequest, PaymentHash: inv.PaymentHash,
		AmountSats: inv.AmountSats, ExpiresAt: inv.ExpiresAt}, nil
}

func (r *rails) USDTDepositAddress(ctx context.Context, paymentID uuid.UUID) (string, error) {
	if r.deposits == nil {
		return "", errNoProductionAdapter
	}
	return r.deposits.DepositAddress(ctx, paymentID)
}

func (r *rails) CollectionAccount(currency string) (domain.CollectionAccount, bool) {
	a, ok := r.collections[currency]
	return a, ok
}

// invoices is the node the workers ask whether deposit invoices settled:
// LND in production, none in sandbox (deposits come through the sandbox API).
func (r *rails) invoices() workers.Invoices {
	if r.lnd == nil {
		return nil // an untyped nil: a nil *LND in the interface would look configured
	}
	return r.lnd
}

// payoutRail is production's payout rail: Lightning recipients are paid
// through LND when it is configured. Bank and mobile-money payouts have no
// production adapter, nor does Lightning without LND: those payouts answer
// payout.ErrNoRail and wait (retried, then parked as dead letters) instead
// of pretending.
func (r *rails) payoutRail(cfg config, pool *pgxpool.Pool) payout.Rail {
	if r.lnd == nil {
		return payout.ByRail{}
	}
	// Recipients' LNURLs are user input: only public addresses are reached,
	// checked at connect time as webhooks are.
	dialer := &net.Dialer{Timeout: 10 * time.Second, Control: webhooks.DialPublicOnly}
	lnurl := &lightning.LNURLPay{Client: &http.Client{Transport: &http.Transport{
		Proxy: nil, DialContext: dialer.DialContext, ForceAttemptHTTP2: true}}}
	fees := payout.FeeLimit{Sats: cfg.LNMaxFeeSats, PPM: cfg.LNMaxFeePPM}
	return payout.ByRail{domain.PayoutLightning: payout.NewLightning(pool, lnurl, r.lnd, fees)}
}

// sandboxPayouts shows the sandbox rail's books to httpapi.
type sandboxPayouts struct{ s *payout.Sandbox }

func (b sandboxPayouts) SandboxPayouts(ctx context.Context, paymentID uuid.UUID) ([]httpapi.SandboxPayout, int64, error) {
	items, calls, err := b.s.Payouts(ctx, paymentID)
	out := make([]httpapi.SandboxPayout, 0, len(items))
	for _, it := range items {
		out = append(out, httpapi.SandboxPayout{ID: it.ID, PaymentID: it.PaymentID, IdempotencyKey: it.IdempotencyKey,
			Rail: it.Rail, Amount: it.Amount, Currency: it.Currency, Status: it.Status, CreatedAt: it.CreatedAt})
	}
	return out, calls, err
}

// newLND connects the production Lightning node from its files.
func newLND(cfg config) (*lightning.LND, error) {
	macaroon, err := os.ReadFile(cfg.LNDMacaroonFile)
	if err != nil {
		return nil, fmt.Errorf("LEDGER_LND_MACAROON_FILE: %w", err)
	}
	key, err := os.ReadFile(cfg.LNDPreimageKeyFile)
	if err != nil {
		return nil, fmt.Errorf("LEDGER_LND_PREIMAGE_KEY_FILE: %w", err)
	}
	pem, err := os.ReadFile(cfg.LNDTLSCertFile)
	if err != nil {
		return nil, fmt.Errorf("LEDGER_LND_TLS_CERT_FILE: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("LEDGER_LND_TLS_CERT_FILE: no PEM certificate in %s", cfg.LNDTLSCertFile)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	return lightning.NewLND(cfg.LNDURL, macaroon, key, client)
}
