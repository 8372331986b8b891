package payout

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledger/ledger/workers/rails/lightning"
)

// Resolver makes an invoice for a payout from the recipient's Lightning
// address or LNURL (lightning.LNURLPay). Each call may make a new invoice.
type Resolver interface {
	Invoice(ctx context.Context, destination string, amountMsat int64, comment string) (lightning.PayoutInvoice, error)
}

// Payer pays invoices from our node and reports on payments it made
// (lightning.LND). It pays a payment hash at most once.
type Payer interface {
	PayInvoice(ctx context.Context, paymentRequest string, maxFeeSats int64) (lightning.PaymentResult, error)
	TrackPayment(ctx context.Context, paymentHash [32]byte) (lightning.PaymentResult, error)
}

// FeeLimit bounds the routing fee of one payout: the larger of Sats and
// PPM millionths of the amount (LEDGER_LN_MAX_FEE_SATS, LEDGER_LN_MAX_FEE_PPM).
// The service pays it, on top of what the recipient receives.
type FeeLimit struct {
	Sats int64
	PPM  int64
}

// of is the limit for a payout of amountSats, the PPM part rounded up. The
// amount is split so the product stays within int64 (PPM is at most 10^6).
func (f FeeLimit) of(amountSats int64) int64 {
	whole, rest := amountSats/1_000_000, amountSats%1_000_000
	return max(f.Sats, whole*f.PPM+(rest*f.PPM+999_999)/1_000_000)
}

// minValidity is how long a recipient's invoice must still be payable when
// we first pay it: LND needs up to a minute to find a route.
const minValidity = 90 * time.Second

// payWait bounds how long a call waits for LND's final answer to its send,
// holding the payout's row lock and with it a connection of the process's
// pool. LND stops looking for routes after its 60 s timeout, but a payment
// whose HTLCs a node downstream holds stays in flight for as long as that
// node likes: hours. Past payWait the call returns (the payment goes on in
// LND, which does not cancel it with our request) and a later call learns
// its outcome from a lookup. Without the bound, a few stuck payments took
// every connection of the pool and stopped the whole process.
const payWait = 90 * time.Second

// Lightning is the production payout rail for Lightning recipients.
//
// Exactly once: the first call resolves the recipient's invoice and stores
// it under the idempotency key before paying it; every later call with the
// key pays or looks up that stored invoice only. LND keys payments by
// payment hash and never pays one twice, so the recipient is paid at most
// once however often, and from however many processes, the rail is called.
// A call that cannot learn the outcome (LND unreachable, payment in flight)
// returns an error, and the caller retries with the same key.
type Lightning struct {
	pool     *pgxpool.Pool
	resolver Resolver
	payer    Payer
	fees     FeeLimit
	now      func() time.Time
	payWait  time.Duration
}

// NewLightning returns the Lightning payout rail over pool.
func NewLightning(pool *pgxpool.Pool, resolver Resolver, payer Payer, fees FeeLimit) *Lightning {
	return &Lightning{pool: pool, resolver: resolver, payer: payer, fees: fees, now: time.Now, payWait: payWait}
}

// lnPayout is a lightning_payouts row.
type lnPayout struct {
	amountMsat     int64
	paymentRequest string
	paymentHash    string
	status         string // pending, paid or failed
	reason         string
}

// Payout pays r.Amount sats to r.LNURL once per r.IdempotencyKey.
func (l *Lightning) Payout(ctx context.Context, r Request) (Outcome, error) {
	if r.Currency != "BTC" || !r.Amount.IsInteger() || !r.Amount.IsPositive() || r.LNURL == "" {
		// The service's own routing decided this request; it will not change.
		return Outcome{Rejected: true, Reason: fmt.Sprintf("not a Lightning payout: %s %s to %q", r.Amount, r.Currency, r.LNURL)}, nil
	}
	row, found, err := l.load(ctx, r.IdempotencyKey)
	if err != nil {
		return Outcome{}, err
	}
	if !found {
		if row, err = l.resolve(ctx, r); err != nil {
			return Outcome{}, err
		}
	}
	if row.status == "pending" {
		if row, err = l.pay(ctx, r.IdempotencyKey, row); err != nil {
			return Outcome{}, err
		}
	}
	if row.status == "failed" {
		return Outcome{Rejected: true, Reason: row.reason}, nil
	}
	return Outcome{PayoutID: row.paymentHash}, nil
}

// resolve asks the recipient's service for an invoice, checks it, and
// stores it (or the refusal) unless another call stored one first: the
// stored row is the answer either way, so only one invoice is ever paid.
func (l *Lightning) resolve(ctx context.Context, r Request) (lnPayout, error) {
	msat := r.Amount.IntPart() * 1000
	row := lnPayout{amountMsat: msat, status: "pending"}
	inv, err := l.resolver.Invoice(ctx, r.LNURL, msat, "")
	var rejected *lightning.RejectedError
	switch {
	case errors.As(err, &rejected):
		row.status, row.reason = "failed", "the recipient's Lightning service refused: "+rejected.Reason
	case err != nil:
		return lnPayout{}, fmt.Errorf("lightning payout: resolve invoice: %w", err)
	default:
		row.paymentRequest, row.paymentHash = inv.PaymentRequest, inv.PaymentHash
		if why := l.check(inv.PaymentRequest, msat); why != "" {
			row.status, row.reason = "failed", why
		}
	}
	_, err = l.pool.Exec(ctx, `INSERT INTO lightning_payouts (idempotency_key, payment_id, amount_msat, payment_request,
		payment_hash, status, reason) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (idempotency_key) DO NOTHING`,
		r.IdempotencyKey, r.PaymentID, msat, row.paymentRequest, row.paymentHash, row.status, row.reason)
	if err != nil {
		return lnPayout{}, fmt.Errorf("lightning payout: store invoice: %w", err)
	}
	stored, _, err := l.load(ctx, r.IdempotencyKey)
	return stored, err
}

// check returns why the recipient's invoice must not be paid, or "". The
// resolver already checked its amount and LUD-06 description hash; the
// amount is checked again here because paying it is this rail's decision.
func (l *Lightning) check(pr string, msat int64) string {
	terms, err := lightning.DecodeBolt11(pr)
	switch {
	case err != nil:
		return fmt.Sprintf("the recipient's invoice is invalid: %v", err)
	case terms.AmountMsat != uint64(msat):
		return fmt.Sprintf("the recipient's invoice is for %d msat, not %d", terms.AmountMsat, msat)
	case l.now().Add(minValidity).After(terms.ExpiresAt()):
		return fmt.Sprintf("the recipient's invoice expires at %s, too soon to pay", terms.ExpiresAt().UTC().Format(time.RFC3339))
	}
	return ""
}

// errPayingElsewhere says another call is paying the stored invoice now;
// like a payment in flight, the next call learns the outcome.
var errPayingElsewhere = errors.New("another call is paying it")

// pay settles a pending payout. It first asks LND whether an earlier call
// already paid the stored invoice: a retry must learn that outcome rather
// than send again, since LND may refuse a second send for reasons (an
// expired invoice) that say nothing about the first.
//
// One call at a time does this for a payout: its row stays locked from the
// lookup to the record of the outcome. LND never pays a hash twice, but it
// takes a new attempt at a hash whose payment failed, so two calls that
// both found no payment could otherwise both send: the first's payment
// fails and is recorded failed (and the payment refunded), the second's
// succeeds, and the recipient is paid too. A call that finds the row
// locked returns errPayingElsewhere. The lock goes with its connection
// when a process dies, and the next call asks LND. The call holds one
// connection of the pool while it waits for LND, never a second one, and
// for at most payWait (plus a lookup).
func (l *Lightning) pay(ctx context.Context, key string, row lnPayout) (lnPayout, error) {
	hash, err := hex.DecodeString(row.paymentHash)
	if err != nil || len(hash) != 32 {
		return lnPayout{}, fmt.Errorf("lightning payout %s: stored payment hash %q", key, row.paymentHash)
	}
	tx, err := l.pool.Begin(ctx)
	if err != nil {
		return lnPayout{}, fmt.Errorf("lightning payout %s: %w", key, err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	locked, err := scanPayout(tx.QueryRow(ctx, `SELECT `+payoutColumns+` FROM lightning_payouts WHERE idempotency_key = $1 FOR UPDATE NOWAIT`, key))
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &pgErr) && pgErr.Code == "55P03": // lock_not_available: NOWAIT found it locked
		return lnPayout{}, fmt.Errorf("lightning payout %s: %w", key, errPayingElsewhere)
	case err != nil:
		return lnPayout{}, fmt.Errorf("lightning payout %s: lock: %w", key, err)
	case locked.status != "pending": // recorded while this call looked
		return locked, nil
	}
	res, err := l.payer.TrackPayment(ctx, [32]byte(hash))
	if errors.Is(err, lightning.ErrPaymentNotFound) {
		sendCtx, cancel := context.WithTimeout(ctx, l.payWait)
		res, err = l.payer.PayInvoice(sendCtx, row.paymentRequest, l.fees.of(row.amountMsat/1000))
		cancel()
		var rejected *lightning.RejectedError
		if errors.As(err, &rejected) {
			// A process that died after its send reached LND may have
			// started this payment between our lookup and our send: its
			// outcome, if any, is the answer.
			if again, terr := l.payer.TrackPayment(ctx, [32]byte(hash)); !errors.Is(terr, lightning.ErrPaymentNotFound) {
				res, err = again, terr
			}
		}
	}
	var rejected *lightning.RejectedError
	switch {
	case err == nil:
		return l.finish(ctx, tx, key, "paid", "", res)
	case errors.As(err, &rejected):
		return l.finish(ctx, tx, key, "failed", "Lightning payment failed: "+rejected.Reason, res)
	default: // in flight, or no answer: the next call asks again
		return lnPayout{}, fmt.Errorf("lightning payout %s: %w", key, err)
	}
}

// finish records a pending payout's outcome in tx, which holds its row,
// commits, and returns the stored row.
func (l *Lightning) finish(ctx context.Context, tx pgx.Tx, key, status, reason string, res lightning.PaymentResult) (lnPayout, error) {
	_, err := tx.Exec(ctx, `UPDATE lightning_payouts SET status = $2, reason = $3, preimage = $4, fee_msat = $5,
		updated_at = now() WHERE idempotency_key = $1 AND status = 'pending'`, key, status, reason, res.Preimage, res.FeeMsat)
	if err == nil {
		err = tx.Commit(ctx)
	}
	if err != nil {
		return lnPayout{}, fmt.Errorf("lightning payout %s: record %s: %w", key, status, err)
	}
	row, _, err := l.load(ctx, key)
	return row, err
}

// payoutColumns are the columns of an lnPayout, in scanPayout's order.
const payoutColumns = `amount_msat, payment_request, payment_hash, status, reason`

func scanPayout(r pgx.Row) (lnPayout, error) {
	var row lnPayout
	err := r.Scan(&row.amountMsat, &row.paymentRequest, &row.paymentHash, &row.status, &row.reason)
	return row, err
}

func (l *Lightning) load(ctx context.Context, key string) (lnPayout, bool, error) {
	row, err := scanPayout(l.pool.QueryRow(ctx, `SELECT `+payoutColumns+` FROM lightning_payouts WHERE idempotency_key = $1`, key))
	if errors.Is(err, pgx.ErrNoRows) {
		return row, false, nil
	}
	if err != nil {
		return row, false, fmt.Errorf("lightning payout %s: load: %w", key, err)
	}
	return row, true, nil
}
