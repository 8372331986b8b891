package workers

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/domain"
)

// Poller is a watcher that reads a rail for deposits on each poll.
type Poller interface {
	Poll(ctx context.Context) error
}

// USDTDeposited records a confirmed USDT transfer on its payment, dated
// at (its block's time): partial transfers accumulate until the amount due
// is covered. The payment counts each transfer (ref) once, so the watcher
// may report one again. A payment that cannot take it (expired, already
// deposited, or the transfer came after its validity) decides nothing, and
// the answer says why: those funds are an operator's to return or apply.
func (w *Workers) USDTDeposited(ctx context.Context, tenantID, paymentID uuid.UUID, amount decimal.Decimal, ref string,
	at time.Time) (string, error) {
	var unmatched string
	_, err := w.execute(ctx, tenantID, paymentID, func(p domain.Payment) ([]domain.Event, error) {
		unmatched = ""
		events, err := domain.DecideDeposit(p, domain.RecordDeposit{Amount: amount, Now: at, Ref: ref})
		if domain.ErrorKind(err) == domain.Conflict {
			unmatched = err.Error()
			return nil, nil
		}
		return events, err
	})
	if domain.ErrorKind(err) == domain.NotFound {
		// An address whose payment was never created: its creation
		// failed after the address was handed out.
		return "no such payment", nil
	}
	return unmatched, err
}
