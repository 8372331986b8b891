package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"golang.org/x/time/rate"

	"github.com/ledger/ledger/cmd/internal/embeddednats"
	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore/keys"
	"github.com/ledger/ledger/httpapi"
	"github.com/ledger/ledger/workers/rails/camt"
	"github.com/ledger/ledger/workers/rails/lightning"
	"github.com/ledger/ledger/workers/rails/mpesa"
	"github.com/ledger/ledger/workers/rails/paystack"
	"github.com/ledger/ledger/workers/rails/prices"
)

// config is ledgerd's configuration (contract §10). Every setting is an
// environment variable and also a flag; a flag wins over the environment.
type config struct {
	DatabaseURL       string
	DBMaxConns        int
	NATSURL           string
	EmbeddedNATSAddr  string
	NATSStream        string
	NATSSubjectPrefix string
	NATSReplicas      int
	TenantTokenTTL    time.Duration
	UserTokenTTL      time.Duration
	Addr              string
	MetricsAddr       string // where GET /metrics is served alone; empty: on Addr
	Mode              string
	PublicURL         string
	DataDir           string
	MasterKeyFiles    []string // the first wraps; empty: the sandbox's local one
	LogLevel          string

	Validity            domain.Validity
	OTCFeeRate          decimal.Decimal
	SandboxPrices       string // currency=price of 1 BTC, comma-separated
	SandboxPriceDrift   string // amplitude/period, e.g. 0.02/10m; empty: fixed prices
	PriceFeedURL        string // production: CoinGecko-compatible simple-price API
	PriceFeedKey        string
	CollectionAccounts  string // currency=account name:account number, comma-separated
	CamtStatementsDir   string // production: the bank's camt.053 statements, which reconciliation reads; "" reads none
	WebhookRetry        []time.Duration
	WebhookSends        int
	WebhookAllowPrivate bool
	webhookPrivateSet   bool
	SandboxPayoutDelay  time.Duration
	ExpiryPoll          time.Duration
	StalledAfter        time.Duration
	LNDURL              string // production: LND's REST API (https://host:8080)
	LNDMacaroonFile     string
	LNDTLSCertFile      string
	LNDPreimageKeyFile  string
	LNDInvoicePoll      time.Duration     // how often open deposit invoices are looked up
	LNURLAllowPrivate   bool              // Lightning payouts may reach LNURL-pay services on non-public addresses
	PaystackSecretKey   string            // production: Paystack's secret key, for bank payouts; or
	PaystackKeyFile     string            // a file holding it
	PaystackBaseURL     string            // production: Paystack's API ("" until validate: paystack.DefaultBaseURL)
	MPesa               mpesaConfig       // production: Kenyan momo through M-Pesa Daraja (mpesa.go)
	OperatorToken       string            // the bearer token of the operator's routes (camt import); "" serves none
	OperatorTokenFile   string            // or a file holding it
	USDT                usdtConfig        // production: USDT deposits watched on Ethereum (usdt.go)
	LNMaxFeeSats        int64             // a Lightning payout's routing fee limit: the larger of this
	LNMaxFeePPM         int64             // and these millionths of the amount
	RateLimit           httpapi.RateLimit // per API key
	TokenRateLimit      httpapi.RateLimit // per client IP on POST /token
	ReadHeaderTimeout   time.Duration
	BodyTimeout         time.Duration
	BodyMinRate         int // bytes per second
	MaxBufferedBytes    int64
	TenantDocumentQuota int64         // bytes; 0: none
	ReconcileAt         time.Duration // the time of day (UTC, since midnight) each rail's previous day is reconciled
	Reconcile           bool          // LEDGER_RECONCILE_AT is set: reconcile on that schedule
}

// setting is one row of the configuration table.
type setting struct {
	env, flag, def, usage string
	set                   func(c *config, v string) error
}

func str(p func(*config) *string) func(*config, string) error {
	return func(c *config, v string) error { *p(c) = v; return nil }
}

func dur(p func(*config) *time.Duration) func(*config, string) error {
	return func(c *config, v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return fmt.Errorf("must be a positive duration such as 1h")
		}
		*p(c) = d
		return nil
	}
}

func count(p func(*config) *int64) func(*config, string) error {
	return func(c *config, v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("must be a whole number, 0 or more")
		}
		*p(c) = n
		return nil
	}
}

func num(p func(*config) *int) func(*config, string) error {
	return func(c *config, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return fmt.Errorf("must be a positive whole number")
		}
		*p(c) = n
		return nil
	}
}

func boolean(p func(*config) *bool) func(*config, string) error {
	return func(c *config, v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("must be true or false")
		}
		*p(c) = b
		return nil
	}
}

var settings = []setting{
	{"DATABASE_URL", "database-url", "postgres://postgres@127.0.0.1:5432/ledger?sslmode=disable",
		"the event store; the database is created if missing and migrations run at start", str(func(c *config) *string { return &c.DatabaseURL })},
	{"LEDGER_DB_MAX_CONNS", "db-max-conns", "32", "Postgres connection pool size", num(func(c *config) *int { return &c.DBMaxConns })},
	{"NATS_URL", "nats-url", "", "unset: an embedded NATS server with JetStream; set: that server",
		str(func(c *config) *string { return &c.NATSURL })},
	{"LEDGER_EMBEDDED_NATS_ADDR", "embedded-nats-addr", embeddednats.DefaultAddr, "where the embedded NATS server listens",
		str(func(c *config) *string { return &c.EmbeddedNATSAddr })},
	{"LEDGER_NATS_STREAM", "nats-stream", "LEDGER", "JetStream stream the events are published to",
		str(func(c *config) *string { return &c.NATSStream })},
	{"LEDGER_NATS_SUBJECT_PREFIX", "nats-subject-prefix", "ledger", "first token of every event subject",
		str(func(c *config) *string { return &c.NATSSubjectPrefix })},
	{"LEDGER_NATS_REPLICAS", "nats-replicas", "1", "replicas of the stream (3 in a production cluster)",
		num(func(c *config) *int { return &c.NATSReplicas })},
	{"LEDGER_TENANT_TOKEN_TTL", "tenant-token-ttl", "1h", "tenant token lifetime", dur(func(c *config) *time.Duration { return &c.TenantTokenTTL })},
	{"LEDGER_USER_TOKEN_TTL", "user-token-ttl", "24h", "user token lifetime", dur(func(c *config) *time.Duration { return &c.UserTokenTTL })},
	{"LEDGER_ADDR", "addr", "127.0.0.1:8080", "listen address", str(func(c *config) *string { return &c.Addr })},
	{"LEDGER_METRICS_ADDR", "metrics-addr", "", "serve GET /metrics on this address alone, and not on LEDGER_ADDR (default: on LEDGER_ADDR)",
		str(func(c *config) *string { return &c.MetricsAddr })},
	{"LEDGER_MODE", "mode", "sandbox", "sandbox or production", str(func(c *config) *string { return &c.Mode })},
	{"LEDGER_RECONCILE_AT", "reconcile-at", "", "time of day, UTC (HH:MM), to reconcile each rail's previous day with its provider (unset: never on a schedule)",
		func(c *config, v string) error {
			t, err := time.Parse("15:04", v)
			if err != nil {
				return fmt.Errorf("must be a time of day as HH:MM (UTC), such as 02:30")
			}
			c.ReconcileAt, c.Reconcile = time.Duration(t.Hour())*time.Hour+time.Duration(t.Minute())*time.Minute, true
			return nil
		}},
	{"LEDGER_PUBLIC_URL", "public-url", "", "base of presigned URLs (default http:// + LEDGER_ADDR)",
		str(func(c *config) *string { return &c.PublicURL })},
	{"LEDGER_DATA_DIR", "data-dir", embeddednats.DefaultDataDir, "local state of the embedded NATS server, its client token among it", str(func(c *config) *string { return &c.DataDir })},
	{"LEDGER_MASTER_KEY_FILE", "master-key-file", "", "file of 32 random bytes that wraps the signing and sealing keys stored in Postgres; " +
		"comma-separated while changing it (the first wraps, all unwrap); production requires it, the sandbox makes one under LEDGER_DATA_DIR",
		func(c *config, v string) error {
			c.MasterKeyFiles = nil
			for _, f := range strings.Split(v, ",") {
				if f = strings.TrimSpace(f); f != "" {
					c.MasterKeyFiles = append(c.MasterKeyFiles, f)
				}
			}
			return nil
		}},
	{"LEDGER_LOG_LEVEL", "log-level", "info", "debug, info, warn or error", str(func(c *config) *string { return &c.LogLevel })},
	{"LEDGER_VALIDITY", "validity", "lightning=600s,slow=24h,momo=180s,bank=72h,usdt=1h",
		"payment validity per funding rail", func(c *config, v string) error { return parseValidity(v, &c.Validity) }},
	{"LEDGER_OTC_FEE_RATE", "otc-fee-rate", "0.01", "OTC fee as a fraction of the payment amount (otcFees)",
		func(c *config, v string) error {
			d, err := decimal.NewFromString(v)
			if err != nil || d.IsNegative() || d.GreaterThanOrEqual(decimal.NewFromInt(1)) {
				return fmt.Errorf("must be a decimal fraction from 0 to below 1, such as 0.01")
			}
			c.OTCFeeRate = d
			return nil
		}},
	{"LEDGER_SANDBOX_PRICES", "sandbox-prices", prices.DefaultTableString,
		"sandbox: price of 1 BTC per currency", str(func(c *config) *string { return &c.SandboxPrices })},
	{"LEDGER_SANDBOX_PRICE_DRIFT", "sandbox-price-drift", "", "sandbox: price drift as amplitude/period, e.g. 0.02/10m",
		str(func(c *config) *string { return &c.SandboxPriceDrift })},
	{"LEDGER_PRICE_FEED_URL", "price-feed-url", "https://api.coingecko.com", "production: CoinGecko simple-price API base URL",
		str(func(c *config) *string { return &c.PriceFeedURL })},
	{"LEDGER_PRICE_FEED_KEY", "price-feed-key", "", "production: CoinGecko API key", str(func(c *config) *string { return &c.PriceFeedKey })},
	{"LEDGER_WEBHOOK_RETRY", "webhook-retry", "5s,5m,30m,2h,5h,10h,10h", "waits before each webhook retry",
		func(c *config, v string) error {
			c.WebhookRetry = nil
			for _, part := range strings.Split(v, ",") {
				d, err := time.ParseDuration(strings.TrimSpace(part))
				if err != nil || d <= 0 {
					return fmt.Errorf("must be comma-separated positive durations, not %q", part)
				}
				c.WebhookRetry = append(c.WebhookRetry, d)
			}
			return nil
		}},
	{"LEDGER_WEBHOOK_SENDS", "webhook-sends", "256", "webhook attempts in flight at once, per process",
		num(func(c *config) *int { return &c.WebhookSends })},
	{"LEDGER_WEBHOOK_ALLOW_PRIVATE", "webhook-allow-private", "", "allow loopback/private webhook targets (default: true in sandbox, false in production)",
		func(c *config, v string) error {
			if v == "" {
				return nil
			}
			c.webhookPrivateSet = true
			return boolean(func(c *config) *bool { return &c.WebhookAllowPrivate })(c, v)
		}},
	{"LEDGER_SANDBOX_PAYOUT_DELAY", "sandbox-payout-delay", "0s", "how long the sandbox payout rail takes",
		func(c *config, v string) error {
			d, err := time.ParseDuration(v)
			if err != nil || d < 0 {
				return fmt.Errorf("must be a duration such as 2s")
			}
			c.SandboxPayoutDelay = d
			return nil
		}},
	{"LEDGER_EXPIRY_POLL", "expiry-poll", "1s", "how often overdue payments are looked for", dur(func(c *config) *time.Duration { return &c.ExpiryPoll })},
	{"LEDGER_STALLED_AFTER", "stalled-after", "5m", "how long a payment may sit deposited or transferring before a sweep runs its step again",
		dur(func(c *config) *time.Duration { return &c.StalledAfter })},
	{"LEDGER_LND_URL", "lnd-url", "", "production: LND REST API for deposit invoices and Lightning payouts (https://host:8080)",
		str(func(c *config) *string { return &c.LNDURL })},
	{"LEDGER_LND_MACAROON_FILE", "lnd-macaroon-file", "", "production: LND macaroon (invoices:read invoices:write offchain:read offchain:write)",
		str(func(c *config) *string { return &c.LNDMacaroonFile })},
	{"LEDGER_LND_TLS_CERT_FILE", "lnd-tls-cert-file", "", "production: LND's tls.cert", str(func(c *config) *string { return &c.LNDTLSCertFile })},
	{"LEDGER_LND_PREIMAGE_KEY_FILE", "lnd-preimage-key-file", "", "production: secret of at least 32 bytes deriving invoice preimages",
		str(func(c *config) *string { return &c.LNDPreimageKeyFile })},
	{"LEDGER_LND_INVOICE_POLL", "lnd-invoice-poll", "2s", "production: how often each process looks up the open deposit invoices at LND",
		dur(func(c *config) *time.Duration { return &c.LNDInvoicePoll })},
	{"LEDGER_PAYSTACK_SECRET_KEY", "paystack-secret-key", "", "production: Paystack secret key (sk_live_...): bank payouts in ZAR, NGN and KES through Paystack Transfers; or",
		str(func(c *config) *string { return &c.PaystackSecretKey })},
	{"LEDGER_PAYSTACK_SECRET_KEY_FILE", "paystack-secret-key-file", "", "production: a file holding the Paystack secret key",
		str(func(c *config) *string { return &c.PaystackKeyFile })},
	{"LEDGER_PAYSTACK_BASE_URL", "paystack-base-url", "", "production: Paystack's API (default " + paystack.DefaultBaseURL + ")",
		str(func(c *config) *string { return &c.PaystackBaseURL })},
	{"LEDGER_MPESA_CONSUMER_KEY", "mpesa-consumer-key", "", "production: the Daraja app's consumer key: Kenyan momo prompts (STK Push) and payouts (B2C) through M-Pesa",
		str(func(c *config) *string { return &c.MPesa.ConsumerKey })},
	{"LEDGER_MPESA_CONSUMER_SECRET", "mpesa-consumer-secret", "", "production: the Daraja app's consumer secret; or",
		str(func(c *config) *string { return &c.MPesa.ConsumerSecret })},
	{"LEDGER_MPESA_CONSUMER_SECRET_FILE", "mpesa-consumer-secret-file", "", "production: a file holding it",
		str(func(c *config) *string { return &c.MPesa.ConsumerSecretFile })},
	{"LEDGER_MPESA_SHORTCODE", "mpesa-shortcode", "", "production: the paybill M-Pesa prompts pay into",
		str(func(c *config) *string { return &c.MPesa.ShortCode })},
	{"LEDGER_MPESA_PASSKEY", "mpesa-passkey", "", "production: the M-Pesa Express passkey of LEDGER_MPESA_SHORTCODE; or",
		str(func(c *config) *string { return &c.MPesa.PassKey })},
	{"LEDGER_MPESA_PASSKEY_FILE", "mpesa-passkey-file", "", "production: a file holding it",
		str(func(c *config) *string { return &c.MPesa.PassKeyFile })},
	{"LEDGER_MPESA_B2C_SHORTCODE", "mpesa-b2c-shortcode", "", "production: the B2C shortcode momo payouts are paid from",
		str(func(c *config) *string { return &c.MPesa.B2CShortCode })},
	{"LEDGER_MPESA_INITIATOR", "mpesa-initiator", "", "production: the B2C API initiator's user name",
		str(func(c *config) *string { return &c.MPesa.Initiator })},
	{"LEDGER_MPESA_INITIATOR_PASSWORD", "mpesa-initiator-password", "", "production: the initiator's password; or",
		str(func(c *config) *string { return &c.MPesa.InitiatorPassword })},
	{"LEDGER_MPESA_INITIATOR_PASSWORD_FILE", "mpesa-initiator-password-file", "", "production: a file holding it",
		str(func(c *config) *string { return &c.MPesa.InitiatorPasswordFile })},
	{"LEDGER_MPESA_CERT_FILE", "mpesa-cert-file", "", "production: Safaricom's public certificate (PEM) the initiator password is encrypted with",
		str(func(c *config) *string { return &c.MPesa.CertFile })},
	{"LEDGER_MPESA_BASE_URL", "mpesa-base-url", "", "production: Daraja's API (default " + mpesa.DefaultBaseURL + ")",
		str(func(c *config) *string { return &c.MPesa.BaseURL })},
	{"LEDGER_MPESA_STATEMENTS_DIR", "mpesa-statements-dir", "", "production: a directory of the M-Pesa org portal's statements (*.csv) of both shortcodes, which reconciliation reads for MOMO",
		str(func(c *config) *string { return &c.MPesa.StatementsDir })},
	{"LEDGER_USDT_XPUB", "usdt-xpub", "", "production: the extended public key (xpub) of the account m/44'/60'/0' whose m/44'/60'/0'/0/<index> addresses take USDT deposits; no private key",
		str(func(c *config) *string { return &c.USDT.XPub })},
	{"LEDGER_ETH_RPC_URL", "eth-rpc-url", "", "production: an Ethereum node's JSON-RPC endpoint the USDT deposits are watched through",
		str(func(c *config) *string { return &c.USDT.RPCURL })},
	{"LEDGER_USDT_CONTRACT", "usdt-contract", "", "production: the USDT token contract (on Ethereum mainnet 0xdAC17F958D2ee523a2206206994597C13D831ec7)",
		str(func(c *config) *string { return &c.USDT.Contract })},
	{"LEDGER_ETH_CONFIRMATIONS", "eth-confirmations", "12", "production: blocks a USDT transfer's block must have (itself included) before it is credited",
		num(func(c *config) *int { return &c.USDT.Confirmations })},
	{"LEDGER_ETH_POLL", "eth-poll", "15s", "production: how often the chain is read for USDT deposits",
		dur(func(c *config) *time.Duration { return &c.USDT.Poll })},
	{"LEDGER_LN_MAX_FEE_SATS", "ln-max-fee-sats", "10", "production: a Lightning payout's routing fee limit in sats, unless LEDGER_LN_MAX_FEE_PPM of the amount is more",
		count(func(c *config) *int64 { return &c.LNMaxFeeSats })},
	{"LEDGER_LN_MAX_FEE_PPM", "ln-max-fee-ppm", "5000", "production: a Lightning payout's routing fee limit in millionths of the amount, when above LEDGER_LN_MAX_FEE_SATS",
		count(func(c *config) *int64 { return &c.LNMaxFeePPM })},
	{"LEDGER_LNURL_ALLOW_PRIVATE", "lnurl-allow-private", "false", "production with LND: let Lightning payouts reach recipients' LNURL-pay services on loopback/private addresses",
		boolean(func(c *config) *bool { return &c.LNURLAllowPrivate })},
	{"LEDGER_OPERATOR_TOKEN", "operator-token", "", "the operator's bearer token for POST " + camt.ImportPath + " (a bank's camt files); unset: no operator route; or",
		str(func(c *config) *string { return &c.OperatorToken })},
	{"LEDGER_OPERATOR_TOKEN_FILE", "operator-token-file", "", "a file holding the operator token",
		str(func(c *config) *string { return &c.OperatorTokenFile })},
	{"LEDGER_COLLECTION_ACCOUNTS", "collection-accounts", defaultCollectionAccounts,
		"bank accounts that take deposits, per source currency", str(func(c *config) *string { return &c.CollectionAccounts })},
	{"LEDGER_CAMT053_DIR", "camt053-dir", "", "production: a directory of the bank's camt.053 statements (*.xml), which reconciliation reads for BANK_TRANSFER",
		str(func(c *config) *string { return &c.CamtStatementsDir })},
	{"LEDGER_RATE_LIMIT", "rate-limit", "100/s,burst=200", "requests per API key and process, e.g. 100/s,burst=200; 0 disables",
		rateLimit(func(c *config) *httpapi.RateLimit { return &c.RateLimit })},
	{"LEDGER_TOKEN_RATE_LIMIT", "token-rate-limit", "10/s,burst=20", "POST /token requests per client IP and process; 0 disables",
		rateLimit(func(c *config) *httpapi.RateLimit { return &c.TokenRateLimit })},
	{"LEDGER_READ_HEADER_TIMEOUT", "read-header-timeout", "10s", "how long a request's headers may take to arrive",
		dur(func(c *config) *time.Duration { return &c.ReadHeaderTimeout })},
	{"LEDGER_BODY_TIMEOUT", "body-timeout", "10s", "a request body must arrive within this plus 1 s per LEDGER_BODY_MIN_RATE bytes received",
		dur(func(c *config) *time.Duration { return &c.BodyTimeout })},
	{"LEDGER_BODY_MIN_RATE", "body-min-rate", "16384", "slowest request body accepted past LEDGER_BODY_TIMEOUT, in bytes per second",
		num(func(c *config) *int { return &c.BodyMinRate })},
	{"LEDGER_MAX_BUFFERED_BYTES", "max-buffered-bytes", strconv.Itoa(httpapi.DefaultMaxBufferedBytes), "most request body bytes held in memory at once (keyed requests); past it 503 server_busy",
		count(func(c *config) *int64 { return &c.MaxBufferedBytes })},
	{"LEDGER_TENANT_DOCUMENT_QUOTA", "tenant-document-quota", "1073741824", "most bytes of documents (KYC and payment) a tenant may store; past it 413 document_quota_exceeded; 0: no quota",
		count(func(c *config) *int64 { return &c.TenantDocumentQuota })},
}

// defaultCollectionAccounts are the sandbox's collection accounts: made-up
// numbers, like a test mode's.
const defaultCollectionAccounts = "NGN=Ledger Sandbox Collections NG:0123456789,GBP=Ledger Sandbox Collections UK:12345678," +
	"EUR=Ledger Sandbox Collections EU:DE89370400440532013000,KES=Ledger Sandbox Collections KE:1234567890123"

// parseValidity reads LEDGER_VALIDITY: rail=duration pairs, each rail once.
// A Lightning validity (lightning, and slow for isSlowPayment) is the
// deposit invoice's expiry, which a BOLT #11 invoice states in whole
// seconds and lnd accepts up to a year: anything else would have the
// invoice and its payment expire at different times, or the node refuse
// every invoice.
func parseValidity(v string, out *domain.Validity) error {
	rails := map[string]*time.Duration{"lightning": &out.Lightning, "slow": &out.Slow, "momo": &out.Momo,
		"bank": &out.Bank, "usdt": &out.USDT}
	*out = domain.DefaultValidity
	for _, pair := range strings.Split(v, ",") {
		name, val, ok := strings.Cut(strings.TrimSpace(pair), "=")
		p, known := rails[name]
		d, err := time.ParseDuration(val)
		if !ok || !known || err != nil || d < time.Second {
			return fmt.Errorf("must be rail=duration pairs (rails lightning, slow, momo, bank, usdt; at least 1s each), not %q", pair)
		}
		if (name == "lightning" || name == "slow") && (d%time.Second != 0 || d > lightning.MaxInvoiceExpiry) {
			return fmt.Errorf("%s is a Lightning invoice's expiry: whole seconds, at most %v (lnd's limit), not %q", name, lightning.MaxInvoiceExpiry, val)
		}
		*p = d
	}
	return nil
}

// rateLimit reads a token bucket: N/s, N/m or N/h (N a whole number), then
// optionally ",burst=B" (default N); "0" disables the limit.
func rateLimit(p func(*config) *httpapi.RateLimit) func(*config, string) error {
	return func(c *config, v string) error {
		if v == "0" {
			*p(c) = httpapi.RateLimit{}
			return nil
		}
		bad := fmt.Errorf("must be N/s, N/m or N/h with an optional ,burst=B (whole numbers above 0), or 0, not %q", v)
		spec, burstSpec, hasBurst := strings.Cut(v, ",")
		count, unit, _ := strings.Cut(spec, "/")
		per := map[string]float64{"s": 1, "m": 60, "h": 3600}[unit]
		n, err := strconv.Atoi(count)
		if err != nil || n <= 0 || per == 0 {
			return bad
		}
		burst := n
		if hasBurst {
			b, ok := strings.CutPrefix(strings.TrimSpace(burstSpec), "burst=")
			if burst, err = strconv.Atoi(b); !ok || err != nil || burst <= 0 {
				return bad
			}
		}
		*p(c) = httpapi.RateLimit{Rate: rate.Limit(float64(n) / per), Burst: burst}
		return nil
	}
}

// parseCollectionAccounts reads LEDGER_COLLECTION_ACCOUNTS.
func parseCollectionAccounts(v string) (map[string]domain.CollectionAccount, error) {
	out := map[string]domain.CollectionAccount{}
	for _, pair := range strings.Split(v, ",") {
		cur, acct, ok := strings.Cut(strings.TrimSpace(pair), "=")
		name, number, ok2 := strings.Cut(acct, ":")
		if !ok || !ok2 || cur == "" || name == "" || number == "" {
			return nil, fmt.Errorf("LEDGER_COLLECTION_ACCOUNTS must be CUR=account name:account number pairs, not %q", pair)
		}
		out[cur] = domain.CollectionAccount{Name: name, Number: number}
	}
	return out, nil
}

// loadConfig reads defaults, then the environment, then flags in args, and validates the result.
func loadConfig(args []string, getenv func(string) string, stderr io.Writer) (config, error) {
	var c config
	for _, s := range settings {
		if err := s.set(&c, s.def); err != nil && s.def != "" {
			return c, fmt.Errorf("default of %s: %w", s.env, err)
		}
	}
	for _, s := range settings {
		if v := getenv(s.env); v != "" {
			if err := s.set(&c, v); err != nil {
				return c, fmt.Errorf("%s: %w", s.env, err)
			}
		}
	}
	fs := flag.NewFlagSet("ledgerd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	for _, s := range settings {
		s := s
		fs.Func(s.flag, s.usage+" (env "+s.env+")", func(v string) error { return s.set(&c, v) })
	}
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	err := c.validate()
	return c, err
}

// tokenLifetimes are the lifetimes this instance signs tokens for, which
// the signing keys it makes allow.
func (c *config) tokenLifetimes() keys.TokenLifetimes {
	return keys.TokenLifetimes{Tenant: c.TenantTokenTTL, User: c.UserTokenTTL}
}

func (c *config) validate() error {
	if c.Mode != "sandbox" && c.Mode != "production" {
		return fmt.Errorf("LEDGER_MODE must be sandbox or production, not %q", c.Mode)
	}
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		return fmt.Errorf("LEDGER_ADDR: %w", err)
	}
	if c.MetricsAddr != "" {
		if _, _, err := net.SplitHostPort(c.MetricsAddr); err != nil {
			return fmt.Errorf("LEDGER_METRICS_ADDR: %w", err)
		}
	}
	if c.NATSURL == "" {
		if _, _, err := net.SplitHostPort(c.EmbeddedNATSAddr); err != nil {
			return fmt.Errorf("LEDGER_EMBEDDED_NATS_ADDR: %w", err)
		}
	}
	if c.PublicURL == "" {
		c.PublicURL = "http://" + c.Addr
	}
	c.PublicURL = strings.TrimRight(c.PublicURL, "/")
	if !c.webhookPrivateSet {
		c.WebhookAllowPrivate = c.Mode == "sandbox"
	}
	if c.MaxBufferedBytes < httpapi.MinBufferedBytes {
		return fmt.Errorf("LEDGER_MAX_BUFFERED_BYTES must be at least %d (one upload with its framing), not %d", httpapi.MinBufferedBytes, c.MaxBufferedBytes)
	}
	if c.Mode == "production" && len(c.MasterKeyFiles) == 0 {
		return fmt.Errorf("LEDGER_MASTER_KEY_FILE is required in production: a file of 32 random bytes (head -c 32 /dev/urandom), kept out of the database and its backups")
	}
	if err := c.validatePaystack(); err != nil {
		return err
	}
	if err := c.validateMPesa(); err != nil {
		return err
	}
	if c.OperatorToken != "" && c.OperatorTokenFile != "" {
		return fmt.Errorf("LEDGER_OPERATOR_TOKEN and LEDGER_OPERATOR_TOKEN_FILE are both set: give the token once")
	}
	if c.OperatorToken != "" && len(c.OperatorToken) < minOperatorToken {
		return fmt.Errorf("LEDGER_OPERATOR_TOKEN must be at least %d characters (openssl rand -hex 32)", minOperatorToken)
	}
	if err := c.validateUSDT(); err != nil {
		return err
	}
	if c.CamtStatementsDir != "" {
		if c.Mode == "sandbox" {
			return fmt.Errorf("LEDGER_CAMT053_DIR configures production's reconciliation; the sandbox reconciles its own rail's books")
		}
		if err := statementsDir("LEDGER_CAMT053_DIR", c.CamtStatementsDir); err != nil {
			return err
		}
	}
	if c.LNMaxFeePPM > 1_000_000 {
		return fmt.Errorf("LEDGER_LN_MAX_FEE_PPM must be at most 1000000 (the whole amount), not %d", c.LNMaxFeePPM)
	}
	if _, err := parseCollectionAccounts(c.CollectionAccounts); err != nil {
		return err
	}
	if _, err := prices.ParseTable(c.SandboxPrices); err != nil {
		return fmt.Errorf("LEDGER_SANDBOX_PRICES: %w", err)
	}
	if _, err := prices.ParseDrift(c.SandboxPriceDrift); err != nil {
		return fmt.Errorf("LEDGER_SANDBOX_PRICE_DRIFT: %w", err)
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return fmt.Errorf("LEDGER_LOG_LEVEL must be debug, info, warn or error")
	}
	return nil
}

// statementsDir refuses a statements directory that is not one: the
// statements come later, the directory is there from the start.
func statementsDir(name, dir string) error {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("%s must be a directory (the provider's statements are put there): %q", name, dir)
	}
	return nil
}

// validatePaystack refuses a Paystack rail configured by half: a base URL
// without a key, a key given twice, or any of it in sandbox mode (where the
// sandbox rail pays, and a key would be ignored).
func (c *config) validatePaystack() error {
	set := c.PaystackSecretKey != "" || c.PaystackKeyFile != ""
	switch {
	case c.PaystackSecretKey != "" && c.PaystackKeyFile != "":
		return fmt.Errorf("LEDGER_PAYSTACK_SECRET_KEY and LEDGER_PAYSTACK_SECRET_KEY_FILE are both set: give the key once")
	case c.Mode == "sandbox" && (set || c.PaystackBaseURL != ""):
		return fmt.Errorf("LEDGER_PAYSTACK_* configure production's bank payouts; the sandbox pays through its own rail")
	case !set && c.PaystackBaseURL != "":
		return fmt.Errorf("LEDGER_PAYSTACK_BASE_URL is set without LEDGER_PAYSTACK_SECRET_KEY (or _FILE): the Paystack rail is half configured")
	case set && c.PaystackBaseURL == "":
		c.PaystackBaseURL = paystack.DefaultBaseURL
	}
	if c.PaystackBaseURL != "" {
		if u, err := url.Parse(c.PaystackBaseURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return fmt.Errorf("LEDGER_PAYSTACK_BASE_URL must be an http(s) URL, not %q", c.PaystackBaseURL)
		}
	}
	return nil
}

// minOperatorToken is the shortest operator token taken: it guards money,
// and a guessable one would let anyone record deposits.
const minOperatorToken = 32

// operatorToken is the operator token, read from its file if given
// (trimmed), or "" when none is set.
func (c *config) operatorToken() (string, error) {
	if c.OperatorTokenFile == "" {
		return c.OperatorToken, nil
	}
	b, err := os.ReadFile(c.OperatorTokenFile)
	if err != nil {
		return "", fmt.Errorf("LEDGER_OPERATOR_TOKEN_FILE: %w", err)
	}
	token := strings.TrimSpace(string(b))
	if len(token) < minOperatorToken {
		return "", fmt.Errorf("LEDGER_OPERATOR_TOKEN_FILE: the token in %s must be at least %d characters", c.OperatorTokenFile, minOperatorToken)
	}
	return token, nil
}

// paystackKey is the Paystack secret key, read from its file if given
// there; "" when the rail is not configured.
func (c *config) paystackKey() (string, error) {
	if c.PaystackKeyFile == "" {
		return c.PaystackSecretKey, nil
	}
	b, err := os.ReadFile(c.PaystackKeyFile)
	if err != nil {
		return "", fmt.Errorf("LEDGER_PAYSTACK_SECRET_KEY_FILE: %w", err)
	}
	key := strings.TrimSpace(string(b))
	if key == "" {
		return "", fmt.Errorf("LEDGER_PAYSTACK_SECRET_KEY_FILE: %s is empty", c.PaystackKeyFile)
	}
	return key, nil
}
