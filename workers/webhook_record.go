package workers

import (
	"context"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/ledger/ledger/domain"
)

// record records attempt a of d and, when leaseNext, leases the payment's
// next delivery to this process in the same transaction, trying again
// until it succeeds or d's lease ends. A 2xx whose record is lost is sent
// again once the lease ends, so the record must not fail needlessly.
//
// The first try goes with the records other senders here ask for
// meanwhile (recordBatched). Every error is tried again, not only those
// known to mean the database is away: what a failover returns is no
// closed list (a connection cut, a server shutting down or starting up, a
// statement that reached a server that became a standby, pgx's own errors
// about a broken connection), and the record is idempotent, so trying
// again after an error that will not pass costs only a few statements.
// After a first failure the record is made alone, at once and then with
// a growing wait: a batch fails for any of its records, and the lease
// rides on it, which must never cost a 2xx its record. Past the lease
// another process may claim d and send it again anyway.
func (w *Workers) record(ctx context.Context, d domain.WebhookDelivery, a domain.PaymentWebhookAttempted, leaseNext bool) ([]domain.WebhookDelivery, error) {
	ctx, cancel := context.WithDeadline(ctx, d.LeaseUntil)
	defer cancel()
	rec := domain.WebhookAttemptRecord{TenantID: d.TenantID, PaymentID: d.PaymentID, Attempt: a, LeaseNext: leaseNext}
	next, err := w.recordBatched(ctx, rec)
	if err == nil || ctx.Err() != nil {
		return next, err
	}
	rec.LeaseNext = false
	wait := recordRetryFirst
	for {
		if _, err = w.payments.RecordWebhookAttempts(ctx, []domain.WebhookAttemptRecord{rec}, w.now(), time.Time{}); err == nil || ctx.Err() != nil {
			return nil, err
		}
		if !w.now().Add(wait).Before(d.LeaseUntil) {
			return nil, err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, err
		case <-t.C:
		}
		wait = min(2*wait, recordRetryMax)
	}
}

// The record's retries start quickly, as most outages a retry meets are a
// pooled connection the server closed, and slow to recordRetryMax over a
// failover, so that a process's many pending records do not hammer a
// server that is starting.
const (
	recordRetryFirst = 50 * time.Millisecond
	recordRetryMax   = time.Second
)

// attemptRecords batches this process's records of webhook attempts. A
// record asked for while recordBatches batches are being written waits
// for one of them to end, and then goes with every other record asked for
// meanwhile, in one round trip and one transaction
// (Payments.RecordWebhookAttempts). Alone, each record cost a round trip
// and a synchronous commit, four a settled payment; a record asked for
// while fewer batches are being written still goes at once.
//
// Whoever asks for a record and finds a batch free writes the batch
// itself, so there is no goroutine to start or stop.
type attemptRecords struct {
	batches chan struct{} // one token per batch being written
	mu      sync.Mutex
	waiting []*pendingRecord
}

// recordBatches is how many batches of records are written at once.
const recordBatches = 2

func newAttemptRecords() *attemptRecords {
	return &attemptRecords{batches: make(chan struct{}, recordBatches)}
}

// pendingRecord is a record asked for and, once done is closed, its result.
type pendingRecord struct {
	ctx  context.Context
	rec  domain.WebhookAttemptRecord
	done chan struct{}
	next []domain.WebhookDelivery
	err  error
}

// recordBatched records rec with the records asked for meanwhile and
// returns the payment's next delivery when it was leased with it. A record
// taken into a batch is waited for even when ctx ends, as that batch may
// lease its payment's next delivery: the batch itself ends by the earliest
// deadline of its records.
func (w *Workers) recordBatched(ctx context.Context, rec domain.WebhookAttemptRecord) ([]domain.WebhookDelivery, error) {
	r := w.records
	p := &pendingRecord{ctx: ctx, rec: rec, done: make(chan struct{})}
	r.mu.Lock()
	r.waiting = append(r.waiting, p)
	r.mu.Unlock()
	select {
	case <-p.done: // taken into a batch another goroutine wrote
		return p.next, p.err
	case r.batches <- struct{}{}:
	}
	r.mu.Lock()
	batch := r.waiting
	r.waiting = nil
	r.mu.Unlock()
	if len(batch) > 0 {
		w.writeRecords(batch)
	}
	<-r.batches
	// p was in this batch, or in one another goroutine took before and is
	// still writing: either way it needs no other. (Trying again for a
	// batch of its own found nothing waiting, and spun until that one
	// ended.)
	<-p.done
	return p.next, p.err
}

// writeRecords writes batch in one transaction and tells each record its
// result. Records whose context ended while they waited are left out.
func (w *Workers) writeRecords(batch []*pendingRecord) {
	recs := make([]domain.WebhookAttemptRecord, 0, len(batch))
	var taken []*pendingRecord
	var deadline time.Time
	for _, p := range batch {
		if err := p.ctx.Err(); err != nil {
			p.err = err
			close(p.done)
			continue
		}
		if d, ok := p.ctx.Deadline(); ok && (deadline.IsZero() || d.Before(deadline)) {
			deadline = d
		}
		recs = append(recs, p.rec)
		taken = append(taken, p)
	}
	if len(taken) == 0 {
		return
	}
	ctx, cancel := context.Background(), context.CancelFunc(func() {})
	if !deadline.IsZero() {
		ctx, cancel = context.WithDeadline(ctx, deadline)
	}
	defer cancel()
	now := w.now()
	leased, err := w.payments.RecordWebhookAttempts(ctx, recs, now, now.Add(leaseFor))
	next := make(map[uuid.UUID]domain.WebhookDelivery, len(leased))
	for _, d := range leased {
		next[d.PaymentID] = d
	}
	for _, p := range taken {
		p.err = err
		if d, ok := next[p.rec.PaymentID]; ok && p.rec.LeaseNext {
			p.next = []domain.WebhookDelivery{d}
			delete(next, p.rec.PaymentID)
		}
		close(p.done)
	}
}
