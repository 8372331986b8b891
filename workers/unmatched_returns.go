package workers

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ledger/ledger/domain"
)

// The unmatched returns worker pays back the unmatched funds an operator
// marked for return (ledgerctl unmatched return), by the payout rail that
// can pay the payer the funding rail reported, as the change refund worker
// does a payment's change (domain/unmatched_return.go): the intent, the
// rail's call with the return's own key, its answer. Funds no rail can pay
// back stay returning for the operator to send by hand.

// unmatchedReturnsDurable is the worker's durable: never rename it. It
// starts with the returns requested since the process that creates it
// started (startAt): those requested before were the operators' to send
// by hand, and may have been.
const unmatchedReturnsDurable = "unmatched_returns"

func (w *Workers) unmatchedReturnsConsumer() *consumer {
	return &consumer{name: unmatchedReturnsDurable, stream: w.cfg.Stream, startAt: w.started,
		filter: w.cfg.SubjectPrefix + ".*.unmatched_funds.*.return_requested", maxDeliver: 12, concurrency: 2,
		handle: w.handleUnmatchedReturn, log: w.log, metrics: w.metrics}
}

func (w *Workers) handleUnmatchedReturn(ctx context.Context, subject string) error {
	_, aggregate, id, _, ok := subjectParts(subject)
	itemID, err := uuid.Parse(id)
	if !ok || aggregate != "unmatched_funds" || err != nil {
		return nil // not a subject this service writes
	}
	return w.returnUnmatched(ctx, itemID)
}

// returnUnmatched records the return of funds marked for it, when a rail
// can pay their payer, and pays it.
func (w *Workers) returnUnmatched(ctx context.Context, id uuid.UUID) error {
	u, err := w.payments.ExecuteUnmatched(ctx, id, workerMeta, func(u domain.UnmatchedFunds) ([]domain.Event, error) {
		return domain.DecideSendReturn(u, w.cfg.RefundRails, w.now())
	})
	if err != nil || !u.ReturnSending() {
		return err
	}
	return w.payReturn(ctx, u)
}

// payReturn calls the rail for u's return, sent, and records its answer.
func (w *Workers) payReturn(ctx context.Context, u domain.UnmatchedFunds) error {
	return w.payBack(ctx, payerRequest(u.ID, u.TenantID, *u.Return, u.Amount, u.Currency, u.ReturnPayer()),
		func(r domain.PayoutResult) error {
			_, err := w.payments.ExecuteUnmatched(ctx, u.ID, workerMeta, func(u domain.UnmatchedFunds) ([]domain.Event, error) {
				return domain.DecideReturnResult(u, r)
			})
			return err
		})
}

// settleReturn is a rail's report that it learned how the return of
// unmatched funds id ended: the rail is called again and its answer
// recorded. Funds whose return is not being sent are left as they are.
func (w *Workers) settleReturn(ctx context.Context, id uuid.UUID) error {
	u, err := w.payments.ExecuteUnmatched(ctx, id, workerMeta, func(domain.UnmatchedFunds) ([]domain.Event, error) { return nil, nil })
	if err != nil || !u.ReturnSending() {
		return err
	}
	return w.payReturn(ctx, u)
}

// returnsStalled asks the rail again about the returns sent that have no
// answer since before StalledAfter (a result the provider never sent):
// few, an operator's volume.
func (w *Workers) returnsStalled(ctx context.Context) error {
	rows, err := w.pool.Query(ctx, `SELECT id FROM unmatched_funds WHERE status = 'returning' AND state->'return' IS NOT NULL
		AND state->'return'->>'reason' IS NULL AND updated_at < $1 ORDER BY updated_at, id LIMIT $2`,
		w.now().Add(-w.cfg.StalledAfter), stalledBatch)
	if err != nil {
		return err
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return err
	}
	for _, id := range ids {
		if err := w.settleReturn(ctx, id); err != nil {
			w.log.Warn("stalled returns: step failed; the next sweep tries again", "unmatched", id, "err", err)
		}
	}
	return nil
}
