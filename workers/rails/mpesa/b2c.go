package mpesa

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/google/uuid"

	"github.com/ledger/ledger/workers/rails/payout"
)

// payoutRow is an mpesa_payouts row.
type payoutRow struct {
	originatorID, token, conversationID, status, receipt, reason string
	tenantID, paymentID                                          uuid.UUID
	amount                                                       int64
	posted                                                       bool
}

const payoutColumns = `originator_id, token, conversation_id, status, receipt, reason, tenant_id, payment_id, amount, posted`

func scanPayout(row pgx.Row) (payoutRow, error) {
	var r payoutRow
	err := row.Scan(&r.originatorID, &r.token, &r.conversationID, &r.status, &r.receipt, &r.reason, &r.tenantID,
		&r.paymentID, &r.amount, &r.posted)
	return r, err
}

func (r payoutRow) outcome() payout.Outcome {
	if r.status == "failed" {
		return payout.Outcome{Rejected: true, Reason: r.reason}
	}
	return payout.Outcome{PayoutID: r.receipt}
}

// errPending says M-Pesa has the payout and its result has not come.
var errPending = fmt.Errorf("mpesa: %w", payout.ErrPending)

// Payout pays r to a momo number by B2C, once per r.IdempotencyKey, which
// is also the request's OriginatorConversationID.
//
// Exactly once: the row is stored first and the one call whose claim
// (posted) succeeds asks for the payment. B2C answers only that it took
// the request; its result comes to ResultURL. Every later call, after a
// timeout, a 500 or a crash, asks for a Transaction Status instead of
// paying again, and answers payout.ErrPending until a result is recorded.
func (p *Rail) Payout(ctx context.Context, r payout.Request) (payout.Outcome, error) {
	amount := r.Amount
	switch {
	case r.Rail != "MOMO" || r.Currency != "KES":
		return payout.Outcome{Rejected: true, Reason: fmt.Sprintf("not an M-Pesa payout: %s to %s", r.Currency, r.Rail)}, nil
	case !amount.IsInteger() || !amount.IsPositive() || !amount.BigInt().IsInt64():
		// B2C pays whole shillings only.
		return payout.Outcome{Rejected: true, Reason: fmt.Sprintf("not a payable M-Pesa amount: KES %s", r.Amount)}, nil
	case r.PhoneNumber == "":
		return payout.Outcome{Rejected: true, Reason: "the recipient has no momo number"}, nil
	}
	_, err := p.pool.Exec(ctx, `INSERT INTO mpesa_payouts (originator_id, tenant_id, payment_id, token, amount)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT (originator_id) DO NOTHING`, r.IdempotencyKey, r.TenantID, r.PaymentID, newToken(), amount.IntPart())
	if err != nil {
		return payout.Outcome{}, fmt.Errorf("mpesa payout %s: store: %w", r.IdempotencyKey, err)
	}
	row, err := scanPayout(p.pool.QueryRow(ctx, `UPDATE mpesa_payouts SET posted = true, updated_at = now()
		WHERE originator_id = $1 AND NOT posted RETURNING `+payoutColumns, r.IdempotencyKey))
	if errors.Is(err, pgx.ErrNoRows) {
		return p.recover(ctx, r.IdempotencyKey)
	}
	if err != nil {
		return payout.Outcome{}, fmt.Errorf("mpesa payout %s: claim: %w", r.IdempotencyKey, err)
	}
	ack, err := p.client.Pay(ctx, B2C{OriginatorConversationID: row.originatorID, InitiatorName: p.cfg.Initiator,
		SecurityCredential: p.cfg.SecurityCredential, CommandID: "BusinessPayment", Amount: row.amount, PartyA: p.cfg.B2CShortCode,
		PartyB: msisdn(r.PhoneNumber), Remarks: remarks(r), QueueTimeOutURL: p.cfg.callbackURL("timeout", row.token),
		ResultURL: p.cfg.callbackURL("b2c", row.token), Occasion: accountReference(r.PaymentID)})
	if api, ok := refused(err); ok {
		// Not taken: no money left.
		return p.finish(ctx, row, "failed", "", "M-Pesa refused the payout: "+api.Message)
	}
	if err != nil {
		return payout.Outcome{}, fmt.Errorf("mpesa payout %s: b2c (the next call asks for its status): %w", row.originatorID, err)
	}
	if _, err := p.pool.Exec(ctx, `UPDATE mpesa_payouts SET conversation_id = $2, updated_at = now()
		WHERE originator_id = $1 AND conversation_id = ''`, row.originatorID, ack.ConversationID); err != nil {
		return payout.Outcome{}, fmt.Errorf("mpesa payout %s: record conversation: %w", row.originatorID, err)
	}
	return payout.Outcome{}, errPending
}

// remarks are a B2C request's Remarks, which Daraja limits to 100
// characters: what the request pays, with the payment id's first group.
func remarks(r payout.Request) string {
	purpose := r.Purpose()
	return purpose[:len(purpose)-len(r.PaymentID.String())+8]
}

// recover answers a payout asked for before: its recorded outcome, or,
// while none is, a Transaction Status query whose result (statusResult)
// records it, and payout.ErrPending.
func (p *Rail) recover(ctx context.Context, originatorID string) (payout.Outcome, error) {
	row, err := scanPayout(p.pool.QueryRow(ctx, `SELECT `+payoutColumns+` FROM mpesa_payouts WHERE originator_id = $1`, originatorID))
	if err != nil {
		return payout.Outcome{}, fmt.Errorf("mpesa payout %s: load: %w", originatorID, err)
	}
	if row.status != "pending" {
		return row.outcome(), nil
	}
	if err := askStatus(ctx, p.client, p.cfg, row); err != nil {
		return payout.Outcome{}, err
	}
	return payout.Outcome{}, errPending
}

// askStatus sends a Transaction Status query of a payout by its
// OriginatorConversationID; the answer comes to status/{token}, where
// the rail (statusResult) records what it proves.
func askStatus(ctx context.Context, client *Client, cfg Config, row payoutRow) error {
	_, err := client.Status(ctx, StatusQuery{Initiator: cfg.Initiator, SecurityCredential: cfg.SecurityCredential,
		CommandID: "TransactionStatusQuery", TransactionID: row.receipt, OriginalConversationID: row.originatorID,
		PartyA: cfg.B2CShortCode, IdentifierType: "4", ResultURL: cfg.callbackURL("status", row.token),
		QueueTimeOutURL: cfg.callbackURL("timeout", row.token), Remarks: "Payout status", Occasion: accountReference(row.paymentID)})
	if err != nil {
		return fmt.Errorf("mpesa payout %s: transaction status: %w", row.originatorID, err)
	}
	return nil
}

// finish records a pending payout's outcome, unless another call recorded
// one first, and answers the stored outcome.
func (p *Rail) finish(ctx context.Context, row payoutRow, status, receipt, reason string) (payout.Outcome, error) {
	stored, err := scanPayout(p.pool.QueryRow(ctx, `WITH u AS (UPDATE mpesa_payouts SET status = $2, receipt = $3, reason = $4,
		updated_at = now() WHERE originator_id = $1 AND status = 'pending' RETURNING 1)
		SELECT `+payoutColumns+` FROM mpesa_payouts WHERE originator_id = $1`, row.originatorID, status, receipt, reason))
	if err != nil {
		return payout.Outcome{}, fmt.Errorf("mpesa payout %s: record %s: %w", row.originatorID, status, err)
	}
	if stored.status == "pending" {
		// The CTE's update is not visible to its own SELECT.
		stored.status, stored.receipt, stored.reason = status, receipt, reason
	}
	return stored.outcome(), nil
}

// payoutByToken loads the payout a result URL's token names.
func (p *Rail) payoutByToken(ctx context.Context, token string) (payoutRow, error) {
	row, err := scanPayout(p.pool.QueryRow(ctx, `SELECT `+payoutColumns+` FROM mpesa_payouts WHERE token = $1`, token))
	if errors.Is(err, pgx.ErrNoRows) {
		return row, errUnknownToken
	}
	return row, err
}

// settle records an outcome a result proved and tells Outcomes.
func (p *Rail) settle(ctx context.Context, row payoutRow, status, receipt, reason string) error {
	if _, err := p.finish(ctx, row, status, receipt, reason); err != nil {
		return err
	}
	return p.outcomes.PayoutSettled(ctx, row.tenantID, row.paymentID)
}

// b2cResult takes a B2C result. It records an outcome only when its
// OriginatorConversationID is the payout's and, for a payment made, its
// amount is the one asked for. A result that disagrees with the record
// (a success after a failure, a failure after a success, another amount)
// moves no money: a Transaction Status query is asked for, and its answer
// decides.
func (p *Rail) b2cResult(ctx context.Context, token string, body []byte) error {
	row, err := p.payoutByToken(ctx, token)
	if err != nil {
		return err
	}
	res, err := DecodeResult(body)
	if err != nil {
		return fmt.Errorf("%w: %v", errUnreadable, err)
	}
	if res.OriginatorConversationID != row.originatorID {
		p.log.Error("mpesa b2c result: not the payout of its URL; refused", "payment", row.paymentID,
			"originator", res.OriginatorConversationID)
		return errMismatch
	}
	amount, _ := res.amountParam("TransactionAmount")
	receipt := res.Params["TransactionReceipt"]
	if receipt == "" {
		receipt = res.TransactionID
	}
	paid := res.ResultCode == 0
	agrees := row.status == "pending" && (!paid || amount == row.amount && receipt != "") ||
		row.status == "success" && paid && receipt == row.receipt || row.status == "failed" && !paid
	if !agrees {
		p.metrics.alerts.WithLabelValues("contradiction").Inc()
		p.log.Error("mpesa b2c result: disagrees with the record; asking for the transaction's status", "payment", row.paymentID,
			"recorded", row.status, "code", res.ResultCode, "amount", amount, "want", row.amount)
		if err := askStatus(ctx, p.client, p.cfg, row); err != nil {
			return err
		}
		return errMismatch
	}
	if paid {
		return p.settle(ctx, row, "success", receipt, "")
	}
	return p.settle(ctx, row, "failed", "", fmt.Sprintf("M-Pesa did not pay: %d %s", res.ResultCode, res.ResultDesc))
}

// Transaction Status results name the transaction's state in the
// TransactionStatus parameter.
const statusCompleted = "Completed"

// statusResult takes a Transaction Status result: Completed for the amount
// asked is a payout made; a transaction M-Pesa reports in any other final
// state (Failed, Cancelled, Expired) is one not made. A query M-Pesa could
// not answer (no transaction with that id) records nothing: paying again
// might pay twice. For a payout M-Pesa never acknowledged (its answer was
// lost or was a 5xx) that is the operator's case; an acknowledged one is
// asked about again by the next call.
func (p *Rail) statusResult(ctx context.Context, token string, body []byte) error {
	row, err := p.payoutByToken(ctx, token)
	if err != nil {
		return err
	}
	res, err := DecodeResult(body)
	if err != nil {
		return fmt.Errorf("%w: %v", errUnreadable, err)
	}
	if id := res.Params["Originator Conversation ID"]; id != row.originatorID {
		p.log.Error("mpesa status result: not the payout of its URL; refused", "payment", row.paymentID, "originator", id)
		return errMismatch
	}
	if res.ResultCode != 0 {
		switch {
		case row.status == "pending" && row.conversationID == "":
			p.metrics.alerts.WithLabelValues("lost").Inc()
			p.log.Error("mpesa status result: M-Pesa does not know a payout whose request got no answer; an operator must check it before it is paid again",
				"payment", row.paymentID, "originator", row.originatorID, "code", res.ResultCode, "desc", res.ResultDesc)
		case row.status == "pending":
			p.log.Warn("mpesa status result: M-Pesa does not report an acknowledged payout yet; asked again on the next call",
				"payment", row.paymentID, "originator", row.originatorID, "code", res.ResultCode)
		}
		return nil
	}
	state := res.Params["TransactionStatus"]
	amount, _ := res.amountParam("Amount")
	receipt := res.Params["ReceiptNo"]
	switch {
	case state == statusCompleted && amount == row.amount && receipt != "" && row.status != "failed":
		return p.settle(ctx, row, "success", receipt, "")
	case state != statusCompleted && state != "" && row.status != "success":
		return p.settle(ctx, row, "failed", "", "M-Pesa reports the payout "+state)
	}
	p.metrics.alerts.WithLabelValues("contradiction").Inc()
	p.log.Error("mpesa status result: contradicts the recorded outcome; an operator must reconcile it", "payment", row.paymentID,
		"recorded", row.status, "state", state, "amount", amount, "want", row.amount)
	return nil
}

// queueTimeout takes Daraja's notice that a request timed out in its
// queue: the payout stays pending, and the next call asks its status.
func (p *Rail) queueTimeout(ctx context.Context, token string, _ []byte) error {
	row, err := p.payoutByToken(ctx, token)
	if err != nil {
		return err
	}
	p.log.Warn("mpesa: a request timed out in Daraja's queue; its status will be asked", "payment", row.paymentID)
	return nil
}
