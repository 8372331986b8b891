package mpesa

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// push is an mpesa_pushes row.
type push struct {
	paymentID, tenantID      uuid.UUID
	token, phone, checkoutID string
	status, receipt, reason  string
	amount                   int64
	posted                   bool
	paidAt                   *time.Time
}

const pushColumns = `payment_id, tenant_id, token, phone, checkout_id, status, receipt, reason, amount, posted, paid_at`

func scanPush(row pgx.Row) (push, error) {
	var p push
	err := row.Scan(&p.paymentID, &p.tenantID, &p.token, &p.phone, &p.checkoutID, &p.status, &p.receipt, &p.reason,
		&p.amount, &p.posted, &p.paidAt)
	return p, err
}

// Prompt prompts the payer of a payment at phone (E.164) to pay amount
// (whole shillings), once per payment. The workers call it for every
// momo-funded payment still awaiting funds, after payment.created has
// committed: never the API request, which may run twice on two processes
// of which only one commits.
//
// Exactly once: the row is stored first, and the one call whose claim
// (posted) succeeds sends the prompt; later calls, here or in another
// process, send nothing. A prompt whose answer was lost (a timeout, a
// 5xx) is not sent again, which could prompt the payer twice: its
// callback, whose URL holds the token, is still taken, and the expiry
// worker's Settle asks about any prompt whose callback never came.
func (p *Rail) Prompt(ctx context.Context, tenantID, paymentID uuid.UUID, phone string, amount int64) error {
	if amount <= 0 || phone == "" {
		// The payer removed the default momo number since, say: no prompt
		// can be sent, and the payment expires. Recorded so that the
		// workers' next polls do not ask again.
		tag, err := p.pool.Exec(ctx, `INSERT INTO mpesa_pushes (payment_id, tenant_id, token, amount, phone, posted, status, reason)
			VALUES ($1, $2, $3, $4, '', true, 'unpaid', 'nothing to prompt') ON CONFLICT (payment_id) DO NOTHING`,
			paymentID, tenantID, newToken(), amount)
		if err == nil && tag.RowsAffected() == 1 {
			p.log.Warn("mpesa prompt: no momo number or amount to prompt; the payment will expire", "payment", paymentID, "amount", amount)
		}
		return err
	}
	_, err := p.pool.Exec(ctx, `INSERT INTO mpesa_pushes (payment_id, tenant_id, token, amount, phone)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT (payment_id) DO NOTHING`, paymentID, tenantID, newToken(), amount, msisdn(phone))
	if err != nil {
		return fmt.Errorf("mpesa prompt %s: store: %w", paymentID, err)
	}
	row, err := scanPush(p.pool.QueryRow(ctx, `UPDATE mpesa_pushes SET posted = true, updated_at = now()
		WHERE payment_id = $1 AND NOT posted RETURNING `+pushColumns, paymentID))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil // prompted before, here or by another process
	}
	if err != nil {
		return fmt.Errorf("mpesa prompt %s: claim: %w", paymentID, err)
	}
	ts := Timestamp(p.now())
	ack, err := p.client.Push(ctx, STKPush{BusinessShortCode: p.cfg.ShortCode, Password: Password(p.cfg.ShortCode, p.cfg.PassKey, ts),
		Timestamp: ts, TransactionType: "CustomerPayBillOnline", Amount: row.amount, PartyA: row.phone, PartyB: p.cfg.ShortCode,
		PhoneNumber: row.phone, CallBackURL: p.cfg.callbackURL("stk", row.token), AccountReference: accountReference(paymentID),
		TransactionDesc: "Payment"})
	if api, ok := refused(err); ok {
		// Not taken: no prompt reached the phone; the payment expires.
		_, err := p.pool.Exec(ctx, `UPDATE mpesa_pushes SET status = 'unpaid', reason = $2, updated_at = now()
			WHERE payment_id = $1 AND status = 'pending'`, paymentID, "M-Pesa refused the prompt: "+api.Message)
		p.log.Warn("mpesa prompt: refused", "payment", paymentID, "code", api.Code, "message", api.Message)
		return err
	}
	if err != nil {
		return fmt.Errorf("mpesa prompt %s: the answer was lost, the callback may still come: %w", paymentID, err)
	}
	_, err = p.pool.Exec(ctx, `UPDATE mpesa_pushes SET checkout_id = $2, updated_at = now()
		WHERE payment_id = $1 AND checkout_id = ''`, paymentID, ack.CheckoutRequestID)
	return err
}

// accountReference is the prompt's AccountReference (12 characters at
// most, shown on the payer's phone): the payment id's first 12 hex digits.
func accountReference(id uuid.UUID) string {
	s := id.String()
	return s[:8] + s[9:13]
}

// Settle says whether a payment's prompt may still bring money in (open):
// it was paid (the deposit is recorded again, which is safe), or Daraja
// still processes it; a pending one is asked about (STK Push Query). The
// expiry worker asks before it expires a momo payment, so a prompt paid
// whose callback never came still funds its payment.
func (p *Rail) Settle(ctx context.Context, paymentID uuid.UUID) (open bool, err error) {
	row, err := scanPush(p.pool.QueryRow(ctx, `SELECT `+pushColumns+` FROM mpesa_pushes WHERE payment_id = $1`, paymentID))
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil // never prompted
	}
	if err != nil {
		return false, fmt.Errorf("mpesa settle %s: load: %w", paymentID, err)
	}
	switch {
	case row.status == "paid":
		return true, p.deposit(ctx, row)
	case row.status != "pending":
		return false, nil
	case row.checkoutID == "":
		// Its answer was lost: only its callback can tell.
		return false, nil
	}
	q, err := p.client.Query(ctx, p.cfg.ShortCode, p.cfg.PassKey, row.checkoutID)
	if errors.Is(err, errProcessing) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("mpesa settle %s: query: %w", paymentID, err)
	}
	if q.ResultCode != "0" {
		_, err := p.pool.Exec(ctx, `UPDATE mpesa_pushes SET status = 'unpaid', reason = $2, updated_at = now()
			WHERE payment_id = $1 AND status = 'pending'`, paymentID, fmt.Sprintf("%s: %s", q.ResultCode, q.ResultDesc))
		return false, err
	}
	// Paid, and the query tells no more: the amount is the one asked for
	// (the payer cannot change it), the receipt comes with the callback.
	if err := p.paid(ctx, row, row.amount, "", p.now()); err != nil {
		return false, err
	}
	return true, nil
}

// paid records a paid prompt (unless recorded already) and its deposit.
func (p *Rail) paid(ctx context.Context, row push, amount int64, receipt string, at time.Time) error {
	_, err := p.pool.Exec(ctx, `UPDATE mpesa_pushes SET status = 'paid', receipt = $2, paid_at = $3, updated_at = now()
		WHERE payment_id = $1 AND status <> 'paid'`, row.paymentID, receipt, at)
	if err != nil {
		return fmt.Errorf("mpesa %s: record paid: %w", row.paymentID, err)
	}
	_, err = p.pool.Exec(ctx, `UPDATE mpesa_pushes SET receipt = $2 WHERE payment_id = $1 AND receipt = ''`, row.paymentID, receipt)
	if err != nil {
		return fmt.Errorf("mpesa %s: record receipt: %w", row.paymentID, err)
	}
	row, err = scanPush(p.pool.QueryRow(ctx, `SELECT `+pushColumns+` FROM mpesa_pushes WHERE payment_id = $1`, row.paymentID))
	if err != nil {
		return fmt.Errorf("mpesa %s: load: %w", row.paymentID, err)
	}
	return p.deposit(ctx, row)
}

// deposit records a paid prompt's money on its payment.
func (p *Rail) deposit(ctx context.Context, row push) error {
	at := p.now()
	if row.paidAt != nil {
		at = *row.paidAt
	}
	taken, err := p.deposits.MomoPaid(ctx, row.tenantID, row.paymentID, row.amount, row.receipt, row.phone, p.cfg.ShortCode, at)
	if err == nil && !taken {
		p.metrics.alerts.WithLabelValues("late_payment").Inc()
		p.log.Error("mpesa: a prompt was paid after its payment ended; the money is held as unmatched funds for an operator to return",
			"payment", row.paymentID, "tenant", row.tenantID, "amount", row.amount, "receipt", row.receipt, "phone", maskMSISDN(row.phone))
	}
	return err
}

// samePhone says a callback's PhoneNumber is the number prompted. A
// number Daraja masks (digits with "*" between) matches on the digits it
// shows.
func samePhone(got, want string) bool {
	first, last := strings.IndexByte(got, '*'), strings.LastIndexByte(got, '*')
	if first < 0 {
		return got == want
	}
	head, tail := strings.ReplaceAll(got[:first], " ", ""), strings.ReplaceAll(got[last+1:], " ", "")
	return len(head)+len(tail) >= 6 && strings.HasPrefix(want, head) && strings.HasSuffix(want, tail)
}

// maskMSISDN keeps a phone number out of the logs but its last digits.
func maskMSISDN(s string) string {
	if len(s) < 4 {
		return "***"
	}
	return "***" + s[len(s)-3:]
}

// stkCallback takes an STK Push callback. It moves money only when its
// CheckoutRequestID is the prompt's, and its amount and phone are the
// ones prompted; a callback repeated, late or out of order records what
// was recorded the first time. A result contradicting the recorded one
// (unpaid, then paid) is checked with an STK Push Query first.
func (p *Rail) stkCallback(ctx context.Context, token string, body []byte) error {
	row, err := scanPush(p.pool.QueryRow(ctx, `SELECT `+pushColumns+` FROM mpesa_pushes WHERE token = $1`, token))
	if errors.Is(err, pgx.ErrNoRows) {
		return errUnknownToken
	}
	if err != nil {
		return fmt.Errorf("mpesa stk callback: load: %w", err)
	}
	res, err := DecodeSTKCallback(body)
	if err != nil {
		return fmt.Errorf("%w: %v", errUnreadable, err)
	}
	if row.checkoutID != "" && res.CheckoutRequestID != row.checkoutID || row.checkoutID == "" && !row.posted {
		p.log.Error("mpesa stk callback: not the prompt of its payment; refused", "payment", row.paymentID,
			"checkout", res.CheckoutRequestID, "want", row.checkoutID)
		return errMismatch
	}
	if res.ResultCode != 0 {
		if row.status == "paid" {
			p.metrics.alerts.WithLabelValues("contradiction").Inc()
			p.log.Error("mpesa stk callback: unpaid after paid; the recorded payment stands", "payment", row.paymentID,
				"code", res.ResultCode, "desc", res.ResultDesc)
			return nil
		}
		_, err := p.pool.Exec(ctx, `UPDATE mpesa_pushes SET status = 'unpaid', checkout_id = $2, reason = $3, updated_at = now()
			WHERE payment_id = $1 AND status = 'pending'`, row.paymentID, res.CheckoutRequestID, fmt.Sprintf("%d: %s", res.ResultCode, res.ResultDesc))
		return err
	}
	if res.Amount != row.amount || !samePhone(res.Phone, row.phone) {
		p.metrics.alerts.WithLabelValues("contradiction").Inc()
		p.log.Error("mpesa stk callback: amount or phone not the ones prompted; refused, an operator must look",
			"payment", row.paymentID, "amount", res.Amount, "want", row.amount, "receipt", res.Receipt)
		return errMismatch
	}
	if row.checkoutID == "" {
		// The prompt's answer was lost; this callback names it.
		if _, err := p.pool.Exec(ctx, `UPDATE mpesa_pushes SET checkout_id = $2 WHERE payment_id = $1 AND checkout_id = ''`,
			row.paymentID, res.CheckoutRequestID); err != nil {
			return err
		}
		row.checkoutID = res.CheckoutRequestID
	}
	if row.status == "unpaid" {
		q, err := p.client.Query(ctx, p.cfg.ShortCode, p.cfg.PassKey, row.checkoutID)
		if err != nil {
			return fmt.Errorf("mpesa stk callback: confirm a paid result after unpaid: %w", err)
		}
		if q.ResultCode != "0" {
			p.metrics.alerts.WithLabelValues("contradiction").Inc()
			p.log.Error("mpesa stk callback: paid, but M-Pesa's query says not; refused", "payment", row.paymentID,
				"receipt", res.Receipt, "query", q.ResultCode)
			return errMismatch
		}
		if _, err := p.pool.Exec(ctx, `UPDATE mpesa_pushes SET status = 'pending' WHERE payment_id = $1 AND status = 'unpaid'`,
			row.paymentID); err != nil {
			return err
		}
	}
	at, err := ParseTimestamp(res.TransactionDate)
	if err != nil {
		at = p.now()
	}
	return p.paid(ctx, row, res.Amount, res.Receipt, at)
}
