package workers

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/domain"
)

// Prompts sends the payment prompts of momo-funded payments to their
// payers' phones (mpesa.Rail in production).
type Prompts interface {
	// Prompt prompts the payer at phone (E.164) to pay amount (whole
	// units) for a payment; safe to repeat: one prompt per payment.
	Prompt(ctx context.Context, tenantID, paymentID uuid.UUID, phone string, amount int64) error
	// Settle asks how a payment's prompt ended and records its deposit if
	// paid. open says it is paid or still in progress: not to expire yet.
	Settle(ctx context.Context, paymentID uuid.UUID) (open bool, err error)
}

// runPrompts sends the prompts of the momo-funded payments awaiting funds.
// It reads payment_deadlines, which only holds committed payments, so a
// payment whose POST /payments did not commit (a keyed request run twice
// on two processes, one of them rolled back) is never prompted; Prompts
// makes the prompt once however many processes poll.
func (w *Workers) runPrompts(ctx context.Context) error {
	return w.poll(ctx, w.cfg.PromptPoll, "prompts: poll", w.sendPrompts)
}

// openPrompt is a momo-funded payment awaiting funds, with its payer's
// default momo number ("" when the payer removed it since).
type openPrompt struct {
	payment, tenant uuid.UUID
	phone           string
	outstanding     decimal.Decimal
}

// sendPrompts prompts every open momo payment, page by page.
func (w *Workers) sendPrompts(ctx context.Context) error {
	var after uuid.UUID
	var first error
	for {
		rows, err := w.pool.Query(ctx, `SELECT d.payment_id, d.tenant_id, coalesce(m.phone_number, ''),
			(p.state->>'depositDue')::numeric - coalesce((p.state->>'amountDeposited')::numeric, 0)
			FROM payment_deadlines d JOIN payments p ON p.id = d.payment_id
			LEFT JOIN users u ON u.id = (p.state->>'userId')::uuid
			LEFT JOIN momo_accounts m ON m.id = u.default_momo_account_id
			WHERE d.payment_id > $1 AND p.state->>'funding' = $2 ORDER BY d.payment_id LIMIT $3`,
			after, domain.FundingMomo, openInvoicesPage)
		if err != nil {
			return err
		}
		page, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (openPrompt, error) {
			var o openPrompt
			err := r.Scan(&o.payment, &o.tenant, &o.phone, &o.outstanding)
			return o, err
		})
		if err != nil || len(page) == 0 {
			if err != nil {
				return err
			}
			return first
		}
		for _, o := range page {
			if err := w.cfg.Prompts.Prompt(ctx, o.tenant, o.payment, o.phone, o.outstanding.Ceil().IntPart()); err != nil && first == nil {
				first = fmt.Errorf("prompt of payment %s: %w", o.payment, err)
			}
		}
		after = page[len(page)-1].payment
	}
}

// MomoPaid records what a payment's prompt brought in (mpesa.Deposits).
// A payment has one prompt, paid once: a payment that already took funds
// decides nothing, so repeated callbacks and queries record it once.
// taken is false when the payment ended (expired) unfunded: the money,
// paid from phone to the paybill, is then held as unmatched funds, once
// per receipt.
//
// The deposit counts whatever at says of the payment's expiry, as a
// settled Lightning invoice does: the prompt was made for this payment,
// and the expiry worker asks the provider how it ended before it expires
// a momo payment (promptOpen), so one still created was paid in time.
func (w *Workers) MomoPaid(ctx context.Context, tenantID, paymentID uuid.UUID, amount int64, receipt, phone, paybill string,
	at time.Time) (bool, error) {
	p, err := w.execute(ctx, tenantID, paymentID, func(p domain.Payment) ([]domain.Event, error) {
		if p.Status != domain.StatusCreated || p.AmountDeposited.IsPositive() {
			return nil, nil
		}
		return domain.DecideDeposit(p, domain.RecordDeposit{Amount: decimal.NewFromInt(amount), Now: at, InvoiceSettled: true,
			Ref: receipt, Payer: domain.MomoPayer(phone)})
	})
	if err != nil {
		return false, err
	}
	if p.AmountDeposited.IsPositive() {
		w.log.Info("prompts: momo deposit recorded", "payment", paymentID, "receipt", receipt)
		return true, nil
	}
	reason := domain.UnmatchedNotAwaiting
	if p.Status == domain.StatusExpired {
		reason = domain.UnmatchedExpired
	}
	_, err = w.payments.RecordRailFunds(ctx, domain.RailFunds{Rail: domain.FundingMomo, TenantID: tenantID, PaymentID: &paymentID,
		Reason: reason, Amount: decimal.NewFromInt(amount), Currency: p.DepositCurrency, Account: paybill, Reference: receipt,
		Payer: phone}, workerMeta)
	return false, err
}

// promptOpen says whether an overdue momo payment's prompt may still
// fund it (paid, or in progress at the provider): not to expire yet.
func (w *Workers) promptOpen(ctx context.Context, d openInvoice) (bool, error) {
	if w.cfg.Prompts == nil || !d.momo {
		return false, nil
	}
	return w.cfg.Prompts.Settle(ctx, d.payment)
}
