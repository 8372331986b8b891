package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"slices"
	"time"
	_ "time/tzdata" // Africa/Johannesburg on machines without a zone database

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/httpapi"
	"github.com/ledger/ledger/workers"
	"github.com/ledger/ledger/workers/rails/ethereum"
	"github.com/ledger/ledger/workers/rails/lightning"
	"github.com/ledger/ledger/workers/rails/mpesa"
	"github.com/ledger/ledger/workers/rails/payout"
	"github.com/ledger/ledger/workers/rails/paystack"
	"github.com/ledger/ledger/workers/rails/prices"
	"github.com/ledger/ledger/workers/usecase"
	"github.com/ledger/ledger/workers/webhooks"
)

// rails are the rail adapters: sandbox ones in sandbox mode; in
// production the CoinGecko price feed, when LEDGER_LND_URL is set an LND
// node for deposit invoices, their settlement and Lightning payouts, with
// a Paystack secret key bank payouts through Paystack, and with the
// LEDGER_MPESA_* settings Kenyan momo prompts and payouts through M-Pesa.
// With LEDGER_USDT_XPUB, LEDGER_ETH_RPC_URL and LEDGER_USDT_CONTRACT, USDT
// payments get addresses derived from the xpub and an Ethereum node is
// watched for their deposits; without them USDT payments answer 503
// rail_unavailable in production, as bank payouts do without Paystack and
// momo ones without M-Pesa.
type rails struct {
	usecase.Rails
	lnd      *lightning.LND   // production with LEDGER_LND_URL; nil otherwise
	invoices workers.Invoices // lnd, which the workers ask whether deposit invoices settled; none in sandbox (deposits come through its API)
	paystack *paystack.Client // production with a Paystack key; nil otherwise
	banks    *paystack.BankList
	mpesa    *mpesa.Client // production with LEDGER_MPESA_*; nil otherwise
	mpesaCfg mpesa.Config
	usdtKey  *ethereum.XPubKey // production with LEDGER_USDT_*; nil otherwise
	eth      *ethereum.RPC
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

func newRails(cfg config) (*rails, error) {
	collections, err := parseCollectionAccounts(cfg.CollectionAccounts)
	if err != nil {
		return nil, err
	}
	r := &rails{Rails: usecase.Rails{Collections: collections}}
	if cfg.Mode == "production" {
		r.Prices = prices.NewCoinGecko(cfg.PriceFeedURL, cfg.PriceFeedKey, 30*time.Second, &http.Client{})
		if cfg.LNDURL != "" {
			node, err := newLND(cfg)
			if err != nil {
				return nil, err
			}
			r.Node, r.lnd, r.invoices = node, node, node
		}
		key, err := cfg.paystackKey()
		if err != nil {
			return nil, err
		}
		r.NoPayout = map[string]bool{}
		if key == "" {
			r.NoPayout[domain.PayoutBank] = true
		} else {
			r.paystack = paystack.NewClient(cfg.PaystackBaseURL, key, &http.Client{Timeout: paystackTimeout})
			r.banks = paystack.NewBankList(r.paystack)
			r.Banks = providerBanks(r.banks)
		}
		if r.mpesa, r.mpesaCfg, err = newMPesa(cfg); err != nil {
			return nil, err
		}
		r.NoFunding = map[string]bool{}
		if r.mpesa == nil {
			r.NoPayout[domain.PayoutMomo] = true
			r.NoFunding[domain.FundingMomo] = true
		}
		if r.usdtKey, r.eth, err = newUSDT(cfg); err != nil {
			return nil, err
		}
		if r.usdtKey == nil {
			r.NoFunding[domain.FundingUSDT] = true
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
	r.Prices = prices.NewSandbox(table, drift, time.Now)
	r.Node = lightning.NewSandboxNode()
	r.Deposits = ethereum.NewSandboxDeposits(usdtSandboxSeed)
	return r, nil
}

// paystackTimeout bounds one call to Paystack; a payout whose call times
// out is verified by reference on its next attempt.
const paystackTimeout = 30 * time.Second

// providers are the production rails whose callback routes and readiness
// ledgerd serves; nil when not configured.
type providers struct {
	bank *paystack.Rail
	momo *mpesa.Rail
	usdt *ethereum.Watcher
}

// payoutRail is production's payout rail: Lightning recipients are paid
// through LND when it is configured, bank accounts through Paystack and
// momo numbers through M-Pesa B2C when they are (the providers, whose
// routes and readiness ledgerd serves). Lightning without LND has no
// adapter: those payouts answer payout.ErrNoRail and wait (retried, then
// parked as dead letters) instead of pretending.
func (r *rails) payoutRail(cfg config, pool *pgxpool.Pool, outcomes railOutcomes, log *slog.Logger,
	reg prometheus.Registerer) (payout.ByRail, providers) {
	byRail := payout.ByRail{}
	var p providers
	if r.paystack != nil {
		p.bank = paystack.NewRail(pool, r.paystack, r.banks, outcomes, log, reg)
		byRail[domain.PayoutBank] = p.bank
	}
	if r.mpesa != nil {
		p.momo = mpesa.NewRail(pool, r.mpesa, r.mpesaCfg, outcomes, outcomes, log, reg)
		byRail[domain.PayoutMomo] = p.momo
	}
	if r.lnd == nil {
		return byRail, p
	}
	// Recipients' LNURLs are user input: only public addresses are reached,
	// checked at connect time as webhooks are, unless the operator's
	// recipients are inside its own network.
	dialer := &net.Dialer{Timeout: 10 * time.Second, Control: webhooks.DialPublicOnly}
	if cfg.LNURLAllowPrivate {
		dialer.Control = nil
	}
	lnurl := &lightning.LNURLPay{Client: &http.Client{Transport: &http.Transport{
		Proxy: nil, DialContext: dialer.DialContext, ForceAttemptHTTP2: true}}}
	fees := payout.FeeLimit{Sats: cfg.LNMaxFeeSats, PPM: cfg.LNMaxFeePPM}
	byRail[domain.PayoutLightning] = payout.NewLightning(pool, lnurl, r.lnd, fees)
	return byRail, p
}

// refundRails says whom the payout rails can pay their change back: in
// sandbox mode anyone (the sandbox rail pays every rail), in production an
// M-Pesa phone in shillings by B2C, and a bank account in a currency
// Paystack pays bank merchants in.
func (p providers) refundRails(sandbox bool) domain.RefundRails {
	return func(rail, currency string) bool {
		switch {
		case sandbox:
			return true
		case rail == domain.PayoutMomo:
			return p.momo != nil && currency == "KES"
		case rail == domain.PayoutBank:
			return p.bank != nil && slices.Contains(slices.Collect(maps.Values(bankCurrencies)), currency)
		}
		return false
	}
}

// usdtWatcher gives USDT payments their addresses from the xpub and
// returns the watcher of their deposits; nil when USDT is not configured.
func (r *rails) usdtWatcher(cfg config, pool *pgxpool.Pool, credits ethereum.Credits, log *slog.Logger,
	reg prometheus.Registerer) *ethereum.Watcher {
	if r.usdtKey == nil {
		return nil
	}
	r.Deposits = ethereum.NewXPubDeposits(pool, *r.usdtKey)
	return ethereum.NewWatcher(pool, r.eth, cfg.USDT.Contract, uint64(cfg.USDT.Confirmations), credits, log, reg)
}

// bankCurrencies are the currencies bank merchants are paid in, by country.
var bankCurrencies = map[string]string{domain.CountrySouthAfrica: "ZAR", domain.CountryKenya: "KES", domain.CountryNigeria: "NGN"}

// providerBanks lists a country's banks from the payout provider: the
// banks a merchant may name in production, since only those can be paid.
func providerBanks(list *paystack.BankList) func(context.Context, string) ([]domain.Bank, error) {
	return func(ctx context.Context, country string) ([]domain.Bank, error) {
		banks, err := list.Banks(ctx, bankCurrencies[country])
		if err != nil {
			return nil, err
		}
		out := make([]domain.Bank, 0, len(banks))
		for _, b := range banks {
			out = append(out, domain.Bank{Name: b.Name, Code: b.Code})
		}
		return out, nil
	}
}

// railOutcomes hands what a payout rail learns outside its calls (a
// provider's webhook) to the workers, which a.workers holds once built:
// before anything is served.
type railOutcomes struct{ a *app }

func (o railOutcomes) PayoutSettled(ctx context.Context, tenantID, paymentID uuid.UUID) error {
	return o.a.workers.PayoutSettled(ctx, tenantID, paymentID)
}

func (o railOutcomes) MomoPaid(ctx context.Context, tenantID, paymentID uuid.UUID, amount int64, receipt, phone, paybill string,
	at time.Time) (bool, error) {
	return o.a.workers.MomoPaid(ctx, tenantID, paymentID, amount, receipt, phone, paybill, at)
}

func (o railOutcomes) USDTDeposited(ctx context.Context, tenantID, paymentID uuid.UUID, amount decimal.Decimal, ref, sender, address string,
	at time.Time) (string, error) {
	return o.a.workers.USDTDeposited(ctx, tenantID, paymentID, amount, ref, sender, address, at)
}

func (o railOutcomes) PayoutReversed(ctx context.Context, tenantID, paymentID uuid.UUID, key, transferCode, reason string) error {
	return o.a.workers.PayoutReversed(ctx, tenantID, paymentID, key, transferCode, reason)
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
