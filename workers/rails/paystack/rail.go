package paystack

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ledger/ledger/workers/rails/payout"
)

// Migrations is the rail's schema (numbered SQL files under migrations/),
// applied by ledgerd as the "paystack-payouts" component.
//
//go:embed migrations/*.sql
var Migrations embed.FS

// Outcomes is told what the rail learned outside a payout call: a webhook
// (or a verification it prompted) ended a transfer, or reversed one that
// had succeeded. Both must be safe to repeat: a webhook comes again until
// it is answered 200.
type Outcomes interface {
	// PayoutSettled asks for the payout to be called again, which now
	// answers the recorded outcome and moves the payment on.
	PayoutSettled(ctx context.Context, tenantID, paymentID uuid.UUID) error
	// PayoutReversed records that a successful payout came back; key is
	// the payout's idempotency key (the payment's payout, or its change
	// refund).
	PayoutReversed(ctx context.Context, tenantID, paymentID uuid.UUID, key, transferCode, reason string) error
}

// Rail is the payout rail for bank accounts through Paystack Transfers.
//
// Exactly once: the payout's row is stored before a transfer is asked for,
// and the transfer's reference is the payout's idempotency key, of which
// Paystack makes one transfer however often it is sent. A call that finds
// the row marked posted verifies the reference first, so after a crash,
// a timeout or a 500 the outcome is learned rather than the transfer sent
// blind. A transfer still pending answers payout.ErrPending: the webhook
// ends it (Reconcile), or the stalled-payment sweep's next call verifies.
type Rail struct {
	pool     *pgxpool.Pool
	client   *Client
	banks    *BankList
	outcomes Outcomes
	log      *slog.Logger
	metrics  metrics
}

type metrics struct {
	webhooks *prometheus.CounterVec
	alerts   *prometheus.CounterVec
}

// NewRail returns the Paystack rail over pool, registering its metrics with reg.
func NewRail(pool *pgxpool.Pool, client *Client, banks *BankList, outcomes Outcomes, log *slog.Logger, reg prometheus.Registerer) *Rail {
	m := metrics{
		webhooks: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ledger_paystack_webhooks_total",
			Help: "Paystack webhooks received, by result (ok, ignored, bad_signature, unreadable, error)."}, []string{"result"}),
		alerts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ledger_paystack_alerts_total",
			Help: "Paystack transfers an operator must look at, by kind (reversed: reversed after success; contradiction: a status that contradicts the recorded outcome; balance: a payout the balance cannot pay)."},
			[]string{"kind"}),
	}
	reg.MustRegister(m.webhooks, m.alerts)
	return &Rail{pool: pool, client: client, banks: banks, outcomes: outcomes, log: log, metrics: m}
}

// transfer is a paystack_transfers row.
type transfer struct {
	reference, currency, transferCode, status, reason string
	tenantID, paymentID                               uuid.UUID
	amount                                            int64
	posted                                            bool
}

func (t transfer) outcome() payout.Outcome {
	if t.status == "failed" {
		return payout.Outcome{Rejected: true, Reason: t.reason}
	}
	// success, or reversed after success: the payout was made; its
	// reversal is an event of its own (PayoutReversed).
	return payout.Outcome{PayoutID: t.transferCode}
}

// errPending says Paystack has the transfer and has not ended it yet.
var errPending = fmt.Errorf("paystack: %w", payout.ErrPending)

// Payout pays r once per r.IdempotencyKey.
func (p *Rail) Payout(ctx context.Context, r payout.Request) (payout.Outcome, error) {
	amount, why := subunits(r)
	if why != "" {
		// The service's own routing decided this request; it will not change.
		return payout.Outcome{Rejected: true, Reason: why}, nil
	}
	row, err := p.store(ctx, r, amount)
	if err != nil || row.status != "pending" {
		return row.outcome(), err
	}
	if row.posted {
		t, err := p.client.Verify(ctx, row.reference)
		if err == nil {
			return p.record(ctx, row, t)
		}
		if !errors.Is(err, errNotFound) {
			return payout.Outcome{}, fmt.Errorf("paystack payout %s: verify: %w", row.reference, err)
		}
	}
	recipient, why, err := p.recipient(ctx, r)
	if err != nil {
		return payout.Outcome{}, fmt.Errorf("paystack payout %s: recipient: %w", row.reference, err)
	}
	if why != "" {
		return p.finish(ctx, row, "failed", "", why)
	}
	if _, err := p.pool.Exec(ctx, `UPDATE paystack_transfers SET posted = true, updated_at = now() WHERE reference = $1`, row.reference); err != nil {
		return payout.Outcome{}, fmt.Errorf("paystack payout %s: mark posted: %w", row.reference, err)
	}
	t, err := p.client.Initiate(ctx, TransferRequest{Source: "balance", Amount: amount, Recipient: recipient,
		Reason: r.Purpose(), Currency: r.Currency, Reference: row.reference})
	if api, ok := refused(err); ok && lowBalance(api) {
		// Ours to fix, not the recipient's: the payout waits for a top-up
		// (the stalled-payment sweep retries it) rather than failing.
		p.metrics.alerts.WithLabelValues("balance").Inc()
		p.log.Error("paystack: the balance cannot pay a payout; top it up", "reference", row.reference,
			"currency", r.Currency, "amount", amount, "message", api.Message)
		return payout.Outcome{}, fmt.Errorf("paystack payout %s: %w", row.reference, err)
	}
	if api, ok := refused(err); ok {
		// A refusal may be of a reference already used (a call whose
		// answer was lost): the transfer it made is the answer.
		v, verr := p.client.Verify(ctx, row.reference)
		switch {
		case verr == nil:
			t, err = v, nil
		case errors.Is(verr, errNotFound):
			return p.finish(ctx, row, "failed", "", "Paystack refused the transfer: "+api.Message)
		default:
			return payout.Outcome{}, fmt.Errorf("paystack payout %s: verify after %v: %w", row.reference, err, verr)
		}
	}
	if err != nil {
		return payout.Outcome{}, fmt.Errorf("paystack payout %s: initiate: %w", row.reference, err)
	}
	return p.record(ctx, row, t)
}

// lowBalance says Paystack refused a transfer for want of balance ("Your
// balance is not enough to fulfil this request",
// https://paystack.com/docs/transfers/managing-transfers/).
func lowBalance(api *APIError) bool {
	return strings.Contains(strings.ToLower(api.Message), "balance is not enough")
}

// subunits is r's amount in its currency's subunit, or why r is not a
// payout this rail makes.
func subunits(r payout.Request) (int64, string) {
	minor := r.Amount.Shift(2)
	switch _, ok := countries[r.Currency]; {
	case r.Rail != "BANK" || !ok:
		return 0, fmt.Sprintf("not a Paystack bank payout: %s to %s", r.Currency, r.Rail)
	case !minor.IsInteger() || !minor.IsPositive() || !minor.BigInt().IsInt64():
		return 0, fmt.Sprintf("not a payable amount: %s %s", r.Amount, r.Currency)
	case r.AccountNumber == "" || r.BankName == "":
		return 0, "the recipient has no bank account"
	}
	return minor.IntPart(), ""
}

// store returns the payout's row, inserting it pending on the first call.
func (p *Rail) store(ctx context.Context, r payout.Request, amount int64) (transfer, error) {
	_, err := p.pool.Exec(ctx, `INSERT INTO paystack_transfers (reference, tenant_id, payment_id, amount, currency, status)
		VALUES ($1, $2, $3, $4, $5, 'pending') ON CONFLICT (reference) DO NOTHING`, r.IdempotencyKey, r.TenantID, r.PaymentID, amount, r.Currency)
	if err != nil {
		return transfer{}, fmt.Errorf("paystack payout %s: store: %w", r.IdempotencyKey, err)
	}
	row, _, err := p.load(ctx, r.IdempotencyKey)
	return row, err
}

// recipient returns the transfer recipient of r's bank account, creating
// it on the account's first payout, or why the account cannot be paid.
func (p *Rail) recipient(ctx context.Context, r payout.Request) (code, why string, err error) {
	bank, ok, err := p.banks.Bank(ctx, r.Currency, r.BankName)
	if err != nil || !ok {
		return "", fmt.Sprintf("Paystack does not pay %q in %s", r.BankName, r.Currency), err
	}
	sum := sha256.Sum256([]byte(r.Currency + "\x00" + bank.Code + "\x00" + r.AccountNumber))
	key := hex.EncodeToString(sum[:])
	err = p.pool.QueryRow(ctx, `SELECT recipient_code FROM paystack_recipients WHERE account_hash = $1`, key).Scan(&code)
	if err == nil || !errors.Is(err, pgx.ErrNoRows) {
		return code, "", err
	}
	name := r.Name
	if name == "" {
		name = "Merchant " + r.PaymentID.String()
	}
	code, err = p.client.CreateRecipient(ctx, RecipientRequest{Type: countries[r.Currency].recipientType, Name: name,
		AccountNumber: r.AccountNumber, BankCode: bank.Code, Currency: r.Currency})
	if api, ok := refused(err); ok {
		return "", "Paystack refused the bank account: " + api.Message, nil
	}
	if err != nil {
		return "", "", err
	}
	_, err = p.pool.Exec(ctx, `INSERT INTO paystack_recipients (account_hash, recipient_code) VALUES ($1, $2)
		ON CONFLICT (account_hash) DO NOTHING`, key, code)
	return code, "", err
}

// record stores what Paystack reported of a pending payout's transfer.
func (p *Rail) record(ctx context.Context, row transfer, t Transfer) (payout.Outcome, error) {
	switch t.Status {
	case "success":
		return p.finish(ctx, row, "success", t.TransferCode, "")
	case "failed", "reversed", "abandoned", "blocked", "rejected":
		// Conclusive, and the money did not leave (a reversed transfer's
		// amount is returned to the balance): the payout failed.
		return p.finish(ctx, row, "failed", t.TransferCode, failureReason(t))
	}
	// pending, otp (the integration must not require OTP for API
	// transfers), received: not over.
	if t.TransferCode != "" && row.transferCode == "" {
		if _, err := p.pool.Exec(ctx, `UPDATE paystack_transfers SET transfer_code = $2, updated_at = now()
			WHERE reference = $1`, row.reference, t.TransferCode); err != nil {
			return payout.Outcome{}, fmt.Errorf("paystack payout %s: record code: %w", row.reference, err)
		}
	}
	return payout.Outcome{}, fmt.Errorf("paystack payout %s: %w (%s)", row.reference, errPending, t.Status)
}

func failureReason(t Transfer) string {
	if s, ok := t.Failures.(string); ok && s != "" {
		return fmt.Sprintf("Paystack transfer %s: %s", t.Status, s)
	}
	return "Paystack transfer " + t.Status
}

// finish records a pending payout's outcome, unless another call recorded
// one first, and answers the stored outcome.
func (p *Rail) finish(ctx context.Context, row transfer, status, code, reason string) (payout.Outcome, error) {
	_, err := p.pool.Exec(ctx, `UPDATE paystack_transfers SET status = $2, transfer_code = coalesce(nullif($3, ''), transfer_code),
		reason = $4, updated_at = now() WHERE reference = $1 AND status = 'pending'`, row.reference, status, code, reason)
	if err != nil {
		return payout.Outcome{}, fmt.Errorf("paystack payout %s: record %s: %w", row.reference, status, err)
	}
	stored, _, err := p.load(ctx, row.reference)
	return stored.outcome(), err
}

const transferColumns = `reference, tenant_id, payment_id, amount, currency, posted, transfer_code, status, reason`

func (p *Rail) load(ctx context.Context, reference string) (transfer, bool, error) {
	var t transfer
	err := p.pool.QueryRow(ctx, `SELECT `+transferColumns+` FROM paystack_transfers WHERE reference = $1`, reference).
		Scan(&t.reference, &t.tenantID, &t.paymentID, &t.amount, &t.currency, &t.posted, &t.transferCode, &t.status, &t.reason)
	if errors.Is(err, pgx.ErrNoRows) {
		return t, false, nil
	}
	if err != nil {
		return t, false, fmt.Errorf("paystack payout %s: load: %w", reference, err)
	}
	return t, true, nil
}

// Ready says whether Paystack answers with this key (GET /readyz).
func (p *Rail) Ready(ctx context.Context) error {
	_, err := p.banks.Banks(ctx, "ZAR")
	if err != nil {
		p.log.Warn("readiness: paystack", "err", err)
		return errors.New("paystack is unreachable")
	}
	return nil
}
