package workers

import (
	"context"

	"github.com/google/uuid"

	"github.com/ledger/ledger/domain"
)

// conflictRetries is how many times a worker decides again, from fresh
// state, when its append lost the race for the payment's stream version.
// Inside one process a payment's writers take turns (eventstore's stream
// locks), so the races left are with other processes' workers (the
// lifecycle, the webhook dispatcher, expiry) and with API requests, which
// append in their own transactions; each loss is a few milliseconds. Handing the message back to JetStream instead
// would wait for its redelivery backoff (200 ms at least), which is what
// a payment's latency would show.
const conflictRetries = 20

// execute runs decide on the payment's current state and appends what it
// decides, deciding again after a version conflict, up to conflictRetries
// times. Every decision is made on fresh state, so a retry never repeats
// an effect: it decides nothing when another writer got there first.
func (w *Workers) execute(ctx context.Context, tenantID, paymentID uuid.UUID,
	decide func(domain.Payment) ([]domain.Event, error)) (domain.PaymentSnapshot, error) {
	return w.executeFrom(ctx, tenantID, paymentID, domain.PaymentSnapshot{}, decide)
}

// executeFrom is execute deciding first on read, the payment as this
// process has just read or written it, instead of reading it again
// (Payments.ExecutePaymentFrom); every decision after a conflict is made on
// a fresh read.
func (w *Workers) executeFrom(ctx context.Context, tenantID, paymentID uuid.UUID, read domain.PaymentSnapshot,
	decide func(domain.Payment) ([]domain.Event, error)) (domain.PaymentSnapshot, error) {
	for try := 0; ; try++ {
		p, err := w.payments.ExecutePaymentFrom(ctx, paymentRef(tenantID, paymentID), read, workerMeta, decide)
		read = domain.PaymentSnapshot{}
		if err == nil || domain.ErrorKind(err) != domain.Conflict || try >= conflictRetries || ctx.Err() != nil {
			return p, err
		}
	}
}
