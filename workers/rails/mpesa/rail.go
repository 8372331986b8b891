package mpesa

import (
	"context"
	"crypto/rand"
	"embed"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
)

// Migrations is the rail's schema (numbered SQL files under migrations/),
// applied by ledgerd as the "mpesa" component.
//
//go:embed migrations/*.sql
var Migrations embed.FS

// Config is the Daraja app's settings.
type Config struct {
	ShortCode          string // the paybill STK prompts pay into (BusinessShortCode, PartyB)
	PassKey            string // the M-Pesa Express passkey of ShortCode
	B2CShortCode       string // the shortcode B2C payouts are paid from (PartyA)
	Initiator          string // the API initiator's user name
	SecurityCredential string // the initiator's password encrypted with Safaricom's certificate (SecurityCredential)
	CallbackURL        string // our public base URL, where Daraja reaches CallbackPrefix
}

// CallbackPrefix is where Daraja's callbacks arrive: stk/, b2c/, status/
// and timeout/ followed by the token of the payment they are about.
const CallbackPrefix = "/rails/mpesa/"

// Deposits is told what a paid prompt brought in (workers.Workers.MomoPaid).
type Deposits interface {
	// MomoPaid records amount (whole shillings) paid at at from phone to
	// the paybill, by the prompt sent for the payment. Safe to repeat: a
	// payment has one prompt. taken is false when the payment had ended
	// (expired) unfunded: the money is held as unmatched funds, once per
	// receipt, for an operator to return or apply.
	MomoPaid(ctx context.Context, tenantID, paymentID uuid.UUID, amount int64, receipt, phone, paybill string,
		at time.Time) (taken bool, err error)
}

// Outcomes is told when a B2C payout ended outside a payout call.
type Outcomes interface {
	// PayoutSettled asks for the payout to be called again, which now
	// answers the recorded outcome and moves the payment on.
	PayoutSettled(ctx context.Context, tenantID, paymentID uuid.UUID) error
}

// Rail is M-Pesa for Kenyan momo: STK prompts for payments in, B2C for
// payouts to momo merchants.
type Rail struct {
	pool     *pgxpool.Pool
	client   *Client
	cfg      Config
	deposits Deposits
	outcomes Outcomes
	log      *slog.Logger
	metrics  metrics
	now      func() time.Time
}

type metrics struct {
	callbacks *prometheus.CounterVec
	alerts    *prometheus.CounterVec
}

// NewRail returns the M-Pesa rail over pool, registering its metrics with reg.
func NewRail(pool *pgxpool.Pool, client *Client, cfg Config, deposits Deposits, outcomes Outcomes, log *slog.Logger,
	reg prometheus.Registerer) *Rail {
	cfg.CallbackURL = strings.TrimRight(cfg.CallbackURL, "/")
	m := metrics{
		callbacks: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ledger_mpesa_callbacks_total",
			Help: "M-Pesa callbacks received, by kind (stk, b2c, status, timeout) and result (ok, duplicate, unknown_token, unreadable, mismatch, error)."},
			[]string{"kind", "result"}),
		alerts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ledger_mpesa_alerts_total",
			Help: "M-Pesa transactions an operator must look at, by kind (late_payment: paid after its payment ended; contradiction: a result that contradicts the recorded one; lost: a B2C payout M-Pesa does not know)."},
			[]string{"kind"}),
	}
	reg.MustRegister(m.callbacks, m.alerts)
	return &Rail{pool: pool, client: client, cfg: cfg, deposits: deposits, outcomes: outcomes, log: log, metrics: m, now: time.Now}
}

// newToken is a callback URL's secret: 128 random bits.
func newToken() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return hex.EncodeToString(b)
}

// callbackURL is where Daraja sends the callback of kind about token.
func (c Config) callbackURL(kind, token string) string {
	return strings.TrimRight(c.CallbackURL, "/") + CallbackPrefix + kind + "/" + token
}

// msisdn is an E.164 Kenyan number as Daraja takes it: 2547XXXXXXXX.
func msisdn(e164 string) string { return strings.TrimPrefix(e164, "+") }

// maxCallback bounds a callback's body: Daraja's are about a kilobyte.
const maxCallback = 64 << 10

// ServeHTTP is POST /rails/mpesa/{kind}/{token}: Daraja's callbacks. A
// token that names no payment of ours is refused (404) and logged: the
// URL is the only proof a callback comes from Daraja.
func (p *Rail) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	kind, token, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, CallbackPrefix), "/")
	var handle func(context.Context, string, []byte) error
	switch kind {
	case "stk":
		handle = p.stkCallback
	case "b2c":
		handle = p.b2cResult
	case "status":
		handle = p.statusResult
	case "timeout":
		handle = p.queueTimeout
	default:
		http.NotFound(w, r)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxCallback))
	if err != nil {
		p.answer(w, kind, "unreadable", http.StatusBadRequest)
		return
	}
	err = handle(r.Context(), token, body)
	switch {
	case err == nil:
		p.answer(w, kind, "ok", http.StatusOK)
	case errors.Is(err, errUnknownToken):
		p.log.Warn("mpesa callback: unknown token; refused", "kind", kind, "remote", r.RemoteAddr, "bytes", len(body))
		p.answer(w, kind, "unknown_token", http.StatusNotFound)
	case errors.Is(err, errUnreadable):
		p.log.Error("mpesa callback: unreadable; refused", "kind", kind, "err", err)
		p.answer(w, kind, "unreadable", http.StatusBadRequest)
	case errors.Is(err, errMismatch):
		// Logged where found, with what disagreed.
		p.answer(w, kind, "mismatch", http.StatusOK)
	default:
		p.log.Warn("mpesa callback: not recorded", "kind", kind, "err", err)
		p.answer(w, kind, "error", http.StatusServiceUnavailable)
	}
}

var _ http.Handler = (*Rail)(nil)

var (
	errUnknownToken = errors.New("mpesa: no payment with this callback token")
	errUnreadable   = errors.New("mpesa: unreadable callback")
	// errMismatch is a callback whose ids or amounts are not what was
	// asked for: it moves no money (and is answered 200: sending it again
	// would not change it).
	errMismatch = errors.New("mpesa: the callback does not match the request")
)

// answer writes Daraja's acknowledgement ({"ResultCode": 0} when taken).
func (p *Rail) answer(w http.ResponseWriter, kind, result string, status int) {
	p.metrics.callbacks.WithLabelValues(kind, result).Inc()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if status == http.StatusOK {
		_, _ = io.WriteString(w, `{"ResultCode":0,"ResultDesc":"Accepted"}`)
		return
	}
	_, _ = io.WriteString(w, `{"ResultCode":1,"ResultDesc":"Rejected"}`)
}

// Ready says whether Daraja gives this app a token (GET /readyz). The
// token is cached, so this costs a call an hour.
func (p *Rail) Ready(ctx context.Context) error {
	if _, err := p.client.accessToken(ctx); err != nil {
		p.log.Warn("readiness: mpesa", "err", err)
		return errors.New("m-pesa is unreachable")
	}
	return nil
}
