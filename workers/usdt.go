package workers

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/domain"
)

// USDT is the watcher of USDT deposits (ethereum.Watcher in production).
type USDT interface {
	// Poll reads the chain and credits the confirmed transfers.
	Poll(ctx context.Context) error
	// Pending says a transfer to the payment's address, in a block made
	// before the given time, is not credited yet: it awaits confirmations.
	Pending(ctx context.Context, paymentID uuid.UUID, before time.Time) (bool, error)
}

// transferPending says an overdue USDT payment has a transfer made before
// its deadline that is still being confirmed: it is not to expire yet, or
// the payer's money, sent in time, would be left on no payment. A
// transfer reorganised away no longer holds it.
func (w *Workers) transferPending(ctx context.Context, d deadline) (bool, error) {
	if w.cfg.USDT == nil || !d.usdt {
		return false, nil
	}
	pending, err := w.cfg.USDT.Pending(ctx, d.payment, d.expiresAt)
	if pending {
		w.log.Info("expiry: held, a USDT transfer made in time awaits confirmations", "payment", d.payment)
	}
	return pending, err
}

// USDTDeposited records a confirmed USDT transfer from sender to the
// payment's deposit address, dated at (its block's time): partial
// transfers accumulate until the amount due is covered. The payment counts
// each transfer (ref) once, so the watcher may report one again. A payment
// that cannot take it (expired, already deposited, the transfer came
// after its validity, or never created) decides nothing, and the answer
// says why: the funds are held as unmatched funds, once per transfer, for
// an operator to return or apply.
func (w *Workers) USDTDeposited(ctx context.Context, tenantID, paymentID uuid.UUID, amount decimal.Decimal, ref, sender, address string,
	at time.Time) (string, error) {
	var unmatched, reason string
	_, err := w.execute(ctx, tenantID, paymentID, func(p domain.Payment) ([]domain.Event, error) {
		unmatched = ""
		events, err := domain.DecideDeposit(p, domain.RecordDeposit{Amount: amount, Now: at, Ref: ref})
		if domain.ErrorKind(err) == domain.Conflict {
			unmatched, reason = err.Error(), domain.UnmatchedReasonOf(err)
			return nil, nil
		}
		return events, err
	})
	funds := domain.RailFunds{Rail: domain.FundingUSDT, TenantID: tenantID, PaymentID: &paymentID, Reason: reason, Amount: amount,
		Currency: "USDT", Account: address, Reference: ref, Payer: sender}
	if domain.ErrorKind(err) == domain.NotFound {
		// An address whose payment was never created: its creation
		// failed after the address was handed out.
		unmatched, funds.PaymentID, funds.Reason, err = "no such payment", nil, domain.UnmatchedNoMatch, nil
	}
	if err != nil || unmatched == "" {
		return unmatched, err
	}
	_, err = w.payments.RecordRailFunds(ctx, funds, workerMeta)
	return unmatched, err
}
