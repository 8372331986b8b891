package workers

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/workers/webhooks"
)

// recordFor is the least time an attempt's record has, retries included:
// an attempt starts only while its timeout and recordFor still fit in the
// lease. It outlasts a Postgres failover (a Patroni leader key's TTL, 20 s
// in docs/deployment.md, and the promotion after it), so a 2xx answered as
// the primary dies is recorded on the new one rather than sent again.
const recordFor = 30 * time.Second

// leaseFor is how long a claimed delivery is this process's: an attempt's
// timeout and its record's retries (recordFor), with a few seconds in
// which to start it, so a live process never loses a delivery it is
// making, and short enough that a crashed one's deliveries resume within
// a minute.
const leaseFor = 45 * time.Second

// delivery is one claimed webhook delivery.
type delivery struct {
	eventID, tenantID, paymentID uuid.UUID
	typ                          string
	occurredAt                   time.Time
	payment                      []byte
	attempts                     int
	leaseUntil                   time.Time // when another process may claim it
}

// runWebhooks delivers status webhooks (contract §8). Deliveries are rows
// written with the status events; this loop leases the due ones, oldest
// status first per payment (a later status waits until the earlier one got
// a 2xx or ran out of retries), sends each on its own goroutine so a slow
// receiver delays nobody else, and records each attempt in the delivery
// log, which moves the delivery on in the same transaction (not as an
// event: how often a receiver was called is not a fact of the ledger). A
// 2xx is never sent again; a crash between the receiver's 2xx and the
// record repeats that one delivery, with the same webhook-id, when the
// lease ends. A status change's first delivery is
// usually sent at once by the process that made it (Appended); this loop
// takes the rest: retries that fall due, deliveries whose process died or
// whose fast path was full.
func (w *Workers) runWebhooks(ctx context.Context) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	wait := w.cfg.WebhookPoll
	for {
		// Not cancelled by shutdown: a claim that committed must reach its
		// deliveries, or its leases would strand them until they lapse.
		// It claims no more deliveries than it has free slots for.
		slots := w.sendSlots.tryTake(claimBatch)
		var claimed []delivery
		if slots > 0 {
			var err error
			claimed, err = w.claimWebhooks(context.WithoutCancel(ctx), slots)
			if err != nil && ctx.Err() == nil {
				w.log.Warn("webhooks: claim", "err", err)
			}
			w.sendSlots.give(slots - len(claimed))
		}
		for _, d := range claimed {
			w.senders.enter(d.paymentID)
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer w.sendSlots.give(1)
				w.deliverInOrder(context.WithoutCancel(ctx), d)
			}()
		}
		// Busy (or with every slot taken), the dispatcher polls every
		// WebhookPoll; idle, it backs off to webhookIdlePoll rather than
		// query Postgres 50 times a second for nothing.
		if len(claimed) > 0 || slots == 0 {
			wait = w.cfg.WebhookPoll
		} else {
			wait = min(2*wait, max(webhookIdlePoll, w.cfg.WebhookPoll))
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}

// webhookIdlePoll is the longest the dispatcher sleeps when there is
// nothing to deliver: the delay of a retry that falls due, or of a
// delivery whose process died, once its lease ends.
const webhookIdlePoll = 250 * time.Millisecond

// deliverInOrder makes d's attempt and, once it is delivered, goes on with
// the payment's next status if one was written here meanwhile: a payment
// whose statuses follow each other closely (deposited, transferring,
// success within milliseconds) then has them sent back to back, each as
// soon as the one before got its 2xx, instead of one per round of the
// dispatcher. The caller has entered d's payment in w.senders; this leaves it.
func (w *Workers) deliverInOrder(ctx context.Context, d delivery) {
	for {
		if !w.deliver(ctx, d) {
			w.senders.leave(d.paymentID)
			return
		}
		if !w.senders.claimNext(d.paymentID) {
			return
		}
		next, err := w.claimPaymentWebhook(ctx, d.paymentID)
		if err != nil || len(next) == 0 {
			w.senders.leave(d.paymentID)
			return
		}
		d = next[0]
	}
}

// claimBatch is the most deliveries one claim of the dispatcher leases.
const claimBatch = 100

// claimWebhooks leases up to limit due deliveries whose payment has no
// earlier pending one.
func (w *Workers) claimWebhooks(ctx context.Context, limit int) ([]delivery, error) {
	return w.claim(ctx, `ORDER BY greatest(d.next_attempt_at, d.lease_until) LIMIT $3`, limit)
}

// claimPaymentWebhook leases the payment's next delivery if it is due (the
// earliest pending status, so at most one).
func (w *Workers) claimPaymentWebhook(ctx context.Context, paymentID uuid.UUID) ([]delivery, error) {
	return w.claim(ctx, `AND d.payment_id = $3`, paymentID)
}

// claim leases the due deliveries the query's tail selects among those
// whose payment has no earlier pending one. greatest(next_attempt_at,
// lease_until) is when a delivery can next be claimed: its index
// (webhook_deliveries_claimable) skips the rows other senders hold.
//
// The lease commits without waiting for its WAL flush (synchronous_commit
// off for this one transaction, sent in the same round trip): a lease lost
// to a Postgres crash only lets another sender make the same attempt again,
// as a process dying after its claim does, and the attempt's record, which
// commits synchronously, makes every lease written before it durable too.
// Each delivery is claimed before it is sent, so waiting for that flush
// cost every webhook one more fsync.
func (w *Workers) claim(ctx context.Context, tail string, args ...any) ([]delivery, error) {
	until := w.now().Add(leaseFor)
	b := &pgx.Batch{}
	b.Queue(`SELECT set_config('synchronous_commit', 'off', true)`)
	b.Queue(`UPDATE webhook_deliveries SET lease_until = $1
		WHERE event_id IN (
			SELECT d.event_id FROM webhook_deliveries d
			WHERE d.status = 'pending' AND greatest(d.next_attempt_at, d.lease_until) <= $2
				AND d.next_attempt_at <= $2 AND (d.lease_until IS NULL OR d.lease_until < $2)
				AND NOT EXISTS (SELECT 1 FROM webhook_deliveries e WHERE e.payment_id = d.payment_id
					AND e.status = 'pending' AND e.stream_version < d.stream_version)
			`+tail+` FOR UPDATE SKIP LOCKED)
		RETURNING event_id, tenant_id, payment_id, type, occurred_at, payment, attempts`,
		append([]any{until, w.now()}, args...)...)
	// One implicit transaction: the batch is sent with a single Sync.
	br := w.pool.SendBatch(ctx, b)
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		return nil, err
	}
	rows, err := br.Query()
	if err != nil {
		return nil, err
	}
	claimed, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (delivery, error) {
		var d delivery
		err := r.Scan(&d.eventID, &d.tenantID, &d.paymentID, &d.typ, &d.occurredAt, &d.payment, &d.attempts)
		d.leaseUntil = until
		return d, err
	})
	if err != nil {
		return nil, err
	}
	return claimed, br.Close()
}

// webhookBody is the delivered JSON (contract §8).
type webhookBody struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	CreatedAt string          `json:"createdAt"`
	Data      json.RawMessage `json:"data"`
}

// deliver makes one attempt and records it. It reports whether the
// receiver answered 2xx and that answer is recorded.
func (w *Workers) deliver(ctx context.Context, d delivery) bool {
	var p domain.Payment
	if err := json.Unmarshal(d.payment, &p); err != nil {
		w.log.Error("webhooks: stored payment", "event", d.eventID, "err", err)
		return false
	}
	data, err := w.cfg.RenderPayment(domain.PaymentSnapshot{Payment: p, UpdatedAt: p.UpdatedAt})
	if err != nil {
		w.log.Error("webhooks: render payment", "event", d.eventID, "err", err)
		return false
	}
	// The secret is stored sealed (sealing.Sealer). One that cannot be
	// opened now (the database is away) is tried again when the lease ends.
	// One that cannot be opened at all (its sealing key is gone, the value
	// was altered) is an attempt that failed before it was sent: recorded
	// like any other, so the retries run out on their schedule and the
	// partner sees why, instead of a try every lease, for ever, unseen.
	//
	// The attempt, and its record, must be over before the lease ends: past
	// it, another process may claim the delivery and send it again, after
	// a later status perhaps. So the secret is opened, and the request
	// started, only while the request's timeout and the record's retries
	// still fit in the lease; a delivery that missed that is left to the
	// next claim.
	sendBy := d.leaseUntil.Add(-w.cfg.WebhookTimeout - recordFor)
	openCtx, cancel := context.WithTimeout(ctx, sendBy.Sub(w.now()))
	var a webhooks.Attempt
	secret, err := w.cfg.OpenSecret(openCtx, p.WebhookSecret)
	cancel()
	if err == nil && !w.now().Before(sendBy) {
		err = errors.New("too late to send within the delivery's lease")
	}
	switch {
	case errors.Is(err, ErrSecretUnreadable):
		w.log.Error("webhooks: open the webhook secret", "event", d.eventID, "err", err)
		a = webhooks.Attempt{Err: webhooks.FailureSecretUnusable}
	case err != nil:
		w.log.Warn("webhooks: open the webhook secret", "event", d.eventID, "err", err)
		return false
	default:
		body, _ := json.Marshal(webhookBody{ID: d.eventID.String(), Type: d.typ, CreatedAt: d.occurredAt.UTC().Format(domain.TimeFormat), Data: data})
		a = w.webhooks.Deliver(ctx, p.WebhookURL, secret, d.eventID.String(), body, w.now())
	}
	w.metrics.webhooks.WithLabelValues(map[bool]string{true: "delivered", false: "failed"}[a.Delivered]).Inc()
	at := w.now()
	attempt := domain.NewWebhookAttempted(domain.WebhookAttempt{EventID: d.eventID, Type: d.typ, Attempt: d.attempts + 1,
		StatusCode: a.StatusCode, Duration: a.Duration, Err: a.Err, Delivered: a.Delivered, Now: at}, w.cfg.WebhookSchedule)
	err = w.record(ctx, d, attempt)
	if err != nil && !errors.Is(err, context.Canceled) {
		w.log.Warn("webhooks: record attempt", "event", d.eventID, "err", err)
	}
	return err == nil && a.Delivered
}

// record records attempt a of d, trying again until it succeeds or d's
// lease ends. A 2xx whose record is lost is sent again once the lease
// ends, so the record must not fail needlessly. Every error is tried
// again, not only those known to mean the database is away: what a
// failover returns is no closed list (a connection cut, a server shutting
// down or starting up, a statement that reached a server that became a
// standby, pgx's own errors about a broken connection), and the record is
// idempotent, so trying again after an error that will not pass costs
// only a few statements. Past the lease another process may claim d and
// send it again anyway.
func (w *Workers) record(ctx context.Context, d delivery, a domain.PaymentWebhookAttempted) error {
	ctx, cancel := context.WithDeadline(ctx, d.leaseUntil)
	defer cancel()
	wait := recordRetryFirst
	for {
		err := w.payments.RecordWebhookAttempt(ctx, d.tenantID, d.paymentID, a)
		if err == nil || ctx.Err() != nil || !w.now().Add(wait).Before(d.leaseUntil) {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
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
