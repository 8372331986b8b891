package projections

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledger/ledger/domain"
)

// DeliveryLog is the append-only log of webhook delivery attempts
// (webhook_attempts) and the work list the attempts move on
// (webhook_deliveries, whose rows the status events write). Unlike the read
// models it is not written from the events, so a rebuild of the read models
// must leave it as it is: how often a receiver was called is operational,
// not a fact of the ledger.
type DeliveryLog struct{ pool *pgxpool.Pool }

// NewDeliveryLog returns the delivery log in pool's database.
func NewDeliveryLog(pool *pgxpool.Pool) *DeliveryLog { return &DeliveryLog{pool: pool} }

// RecordWebhookAttempts logs each of recs' attempts and moves its
// delivery on: gone from the work list after a 2xx, else pending until
// the attempt's NextAttemptAt or, with none, exhausted. A delivered row is
// deleted rather than marked: nothing reads it again (the log is its
// history), and a delete writes no new row version with another copy of
// its payment.
//
// All of it is one round trip and one transaction, which the caller may
// send again when its answer is lost: an attempt already logged is kept as
// it is, and its delivery moves to the same place again. Several senders'
// records share it (the workers batch them), so a settled payment's four
// records do not cost four commits of their own.
//
// The same transaction also leases, until leaseNext, the next delivery of
// each record's payment that asks for it (LeaseNext) and was delivered,
// if it is due at now (ClaimPaymentsWebhooks), and returns those: the
// sender of a payment's webhooks goes on with the next status without
// another round trip and commit. The leases then commit with the records,
// synchronously.
func (l *DeliveryLog) RecordWebhookAttempts(ctx context.Context, recs []domain.WebhookAttemptRecord,
	now, leaseNext time.Time) ([]domain.WebhookDelivery, error) {
	b := &pgx.Batch{}
	var next []uuid.UUID
	for _, r := range recs {
		queueAttempt(b, r.TenantID, r.PaymentID, r.Attempt)
		if r.LeaseNext && r.Attempt.Delivered {
			next = append(next, r.PaymentID)
		}
	}
	conn, waited, err := l.acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("record webhook attempts: %w", err)
	}
	defer conn.Release()
	if len(next) > 0 {
		leaseNext, now = leaseNext.Add(waited), now.Add(waited)
		b.Queue(claimPaymentDue, leaseNext, now, next)
	}
	// One implicit transaction: the batch is sent with a single Sync.
	br := conn.SendBatch(ctx, b)
	defer br.Close()
	for range recs {
		if _, err := br.Exec(); err != nil {
			return nil, fmt.Errorf("record webhook attempts: %w", err)
		}
	}
	var leased []domain.WebhookDelivery
	if len(next) > 0 {
		if leased, err = collectDeliveries(br, leaseNext); err != nil {
			return nil, fmt.Errorf("record webhook attempts: lease the next: %w", err)
		}
	}
	if err := br.Close(); err != nil {
		return nil, fmt.Errorf("record webhook attempts: %w", err)
	}
	return leased, nil
}

// queueAttempt queues attempt a's record, the attempt logged and its
// delivery moved on, as one statement.
func queueAttempt(b *pgx.Batch, tenantID, paymentID uuid.UUID, a domain.PaymentWebhookAttempted) {
	delivery := `DELETE FROM webhook_deliveries WHERE event_id = $1`
	args := []any{a.EventID, a.Attempt, tenantID, paymentID, a.Type, a.At, a.StatusCode, a.DurationMs, a.Error}
	if !a.Delivered {
		status := "pending"
		if a.NextAttemptAt == nil {
			status = "exhausted"
		}
		delivery = `UPDATE webhook_deliveries SET status = $10, attempts = $2, next_attempt_at = coalesce($11, next_attempt_at),
			lease_until = NULL WHERE event_id = $1`
		args = append(args, status, a.NextAttemptAt)
	}
	b.Queue(`WITH attempt AS (
			INSERT INTO webhook_attempts (event_id, attempt, tenant_id, payment_id, type, at, status_code, duration_ms, error)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT DO NOTHING)
		`+delivery, args...)
}

// ClaimWebhooks leases until until up to limit deliveries due at now
// whose payment has no earlier pending one, those due longest first.
func (l *DeliveryLog) ClaimWebhooks(ctx context.Context, now, until time.Time, limit int) ([]domain.WebhookDelivery, error) {
	return l.claim(ctx, claimDue+`ORDER BY greatest(d.next_attempt_at, d.lease_until) LIMIT $3`+claimReturning, until, now, limit)
}

// ClaimPaymentsWebhooks leases until until each of payments' next
// delivery if it is due at now (its earliest pending status), in one
// statement: at most one delivery a payment.
func (l *DeliveryLog) ClaimPaymentsWebhooks(ctx context.Context, payments []uuid.UUID, now, until time.Time) ([]domain.WebhookDelivery, error) {
	return l.claim(ctx, claimPaymentDue, until, now, payments)
}

// ReleaseWebhook ends a lease that ends at leaseUntil of a delivery its
// sender did not attempt (too late in its lease to send it, or its secret
// could not be read right now): a delivery left leased waits for the
// whole lease, a release only for the dispatcher's next claim. Another
// sender's lease (a later leaseUntil) is left alone.
func (l *DeliveryLog) ReleaseWebhook(ctx context.Context, eventID uuid.UUID, leaseUntil time.Time) error {
	_, err := l.pool.Exec(ctx, `UPDATE webhook_deliveries SET lease_until = NULL WHERE event_id = $1 AND lease_until = $2`,
		eventID, leaseUntil)
	if err != nil {
		return fmt.Errorf("release webhook delivery: %w", err)
	}
	return nil
}

// claimDue and claimReturning frame a lease of the due deliveries the
// tail between them selects among those whose payment has no earlier
// pending one (the dispatcher's claim): $1 is the lease's end, $2 now.
// greatest(next_attempt_at, lease_until) is when a delivery can next be
// claimed: its index (webhook_deliveries_claimable) skips the rows other
// senders hold. Every claim ends with returningDelivery, whose columns
// collectDeliveries reads.
const (
	returningDelivery = `RETURNING event_id, tenant_id, payment_id, type, occurred_at, payment, attempts`

	claimDue = `UPDATE webhook_deliveries SET lease_until = $1
		WHERE event_id IN (
			SELECT d.event_id FROM webhook_deliveries d
			WHERE d.status = 'pending' AND greatest(d.next_attempt_at, d.lease_until) <= $2
				AND d.next_attempt_at <= $2 AND (d.lease_until IS NULL OR d.lease_until < $2)
				AND NOT EXISTS (SELECT 1 FROM webhook_deliveries e WHERE e.payment_id = d.payment_id
					AND e.status = 'pending' AND e.stream_version < d.stream_version)
			`
	claimReturning = ` FOR UPDATE SKIP LOCKED)
		` + returningDelivery

	// claimPaymentDue leases each of payments $3's earliest pending
	// delivery when it is due at $2, until $1; a first attempt is due to
	// it at once, within the handoff too (domain.WebhookHandoff). Each is
	// found and locked through the payment's index
	// (webhook_deliveries_payment), one payment after the other (a LATERAL
	// with a LIMIT is never flattened), in the order of their ids (two
	// claims lock alike), and then leased by its key. With the deliveries
	// joined to the payments' ids instead, the planner could choose to
	// read every pending delivery for each claim (it did, under a backlog
	// that grew after the table was last analysed), and the join made the
	// statement costlier to plan (planned anew on each call, its array's
	// length being part of the plan) than to run. Two claimers of one
	// delivery: the second waits for the first's row lock and, the
	// delivery leased, skips it; one whose delivery the first deleted (its
	// record) or gave up on (exhausted) locks the payment's next pending
	// one instead, which is then the earliest.
	claimPaymentDue = `WITH next AS (
			SELECT n.event_id FROM (SELECT id FROM unnest($3::uuid[]) AS u(id) ORDER BY id) AS p CROSS JOIN LATERAL (
				SELECT e.event_id, e.attempts, e.next_attempt_at, e.lease_until FROM webhook_deliveries e
				WHERE e.payment_id = p.id AND e.status = 'pending' ORDER BY e.stream_version LIMIT 1 FOR UPDATE) AS n
			WHERE (n.next_attempt_at <= $2 OR n.attempts = 0) AND (n.lease_until IS NULL OR n.lease_until < $2))
		UPDATE webhook_deliveries SET lease_until = $1 WHERE event_id = ANY (ARRAY(SELECT event_id FROM next))
		` + returningDelivery
)

// claim leases the due deliveries query selects, given args.
//
// The lease commits without waiting for its WAL flush (synchronous_commit
// off for this one transaction, sent in the same round trip): a lease lost
// to a Postgres crash only lets another sender make the same attempt again,
// as a process dying after its claim does, and the attempt's record, which
// commits synchronously, makes every lease written before it durable too.
// Each delivery is claimed before it is sent, so waiting for that flush
// cost every webhook one more fsync.
func (l *DeliveryLog) claim(ctx context.Context, query string, until, now time.Time, arg any) ([]domain.WebhookDelivery, error) {
	conn, waited, err := l.acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("claim webhook deliveries: %w", err)
	}
	defer conn.Release()
	until, now = until.Add(waited), now.Add(waited)
	b := &pgx.Batch{}
	b.Queue(`SELECT set_config('synchronous_commit', 'off', true)`)
	b.Queue(query, until, now, arg)
	// One implicit transaction: the batch is sent with a single Sync.
	br := conn.SendBatch(ctx, b)
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		return nil, fmt.Errorf("claim webhook deliveries: %w", err)
	}
	claimed, err := collectDeliveries(br, until)
	if err != nil {
		return nil, fmt.Errorf("claim webhook deliveries: %w", err)
	}
	return claimed, br.Close()
}

// acquire takes a connection and says how long that took, for a lease
// to run from when its statement is sent rather than from when its sender
// began to wait: under load the wait for a connection took seconds, and
// a delivery must be sent within the first seconds of its lease (the rest
// is its attempt's timeout and its record's retries), so a lease that had
// spent them waiting was given back unsent.
func (l *DeliveryLog) acquire(ctx context.Context) (*pgxpool.Conn, time.Duration, error) {
	start := time.Now()
	conn, err := l.pool.Acquire(ctx)
	return conn, time.Since(start), err
}

// collectDeliveries reads the next result of br, a claim's, as deliveries
// leased until until.
func collectDeliveries(br pgx.BatchResults, until time.Time) ([]domain.WebhookDelivery, error) {
	rows, err := br.Query()
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (domain.WebhookDelivery, error) {
		d := domain.WebhookDelivery{LeaseUntil: until}
		err := r.Scan(&d.EventID, &d.TenantID, &d.PaymentID, &d.Type, &d.OccurredAt, &d.Payment, &d.Attempts)
		return d, err
	})
}

// ListWebhookAttempts returns every delivery attempt of a payment's
// webhooks, oldest first.
func (l *DeliveryLog) ListWebhookAttempts(ctx context.Context, tenantID, paymentID uuid.UUID) ([]domain.WebhookAttemptItem, error) {
	rows, err := l.pool.Query(ctx, `SELECT event_id, type, attempt, at, status_code, duration_ms, error FROM webhook_attempts
		WHERE tenant_id = $1 AND payment_id = $2 ORDER BY at, event_id, attempt`, tenantID, paymentID)
	if err != nil {
		return nil, fmt.Errorf("list webhook attempts: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (domain.WebhookAttemptItem, error) {
		var a domain.WebhookAttemptItem
		err := r.Scan(&a.EventID, &a.Type, &a.Attempt, &a.At, &a.StatusCode, &a.DurationMs, &a.Error)
		a.At = a.At.UTC()
		return a, err
	})
}
