package workers

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/google/uuid"

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
		var claimed []domain.WebhookDelivery
		if slots > 0 {
			var err error
			claimed, err = w.claimWebhooks(context.WithoutCancel(ctx), slots)
			if err != nil && ctx.Err() == nil {
				w.log.Warn("webhooks: claim", "err", err)
			}
			w.sendSlots.give(slots - len(claimed))
		}
		for _, d := range claimed {
			w.senders.enter(d.PaymentID)
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
// the payment's next status if one is due: a payment whose statuses follow
// each other closely (deposited, transferring, success within
// milliseconds) then has them sent back to back, each as soon as the one
// before got its 2xx, instead of one per round of the dispatcher. When
// this process announced a newer delivery (w.senders), the record of a 2xx
// leases it in the same round trip (DeliveryLog.RecordWebhookAttempts);
// one announced after that is claimed on its own. The
// caller has entered d's payment in w.senders; this leaves it.
func (w *Workers) deliverInOrder(ctx context.Context, d domain.WebhookDelivery) {
	for {
		delivered, next := w.deliver(ctx, d)
		if !delivered {
			w.senders.leave(d.PaymentID)
			return
		}
		if len(next) > 0 {
			// Whatever was announced since the last claim is this one or
			// follows it, and the next record looks for it again.
			w.senders.claimedNext(d.PaymentID)
		} else {
			if !w.senders.claimNext(d.PaymentID) {
				return
			}
			var err error
			if next, err = w.claimPaymentsWebhooks(ctx, d.PaymentID); err != nil || len(next) == 0 {
				w.senders.leave(d.PaymentID)
				return
			}
		}
		d = next[0]
	}
}

// claimBatch is the most deliveries one claim of the dispatcher leases.
const claimBatch = 100

// claimWebhooks leases up to limit due deliveries whose payment has no
// earlier pending one.
func (w *Workers) claimWebhooks(ctx context.Context, limit int) ([]domain.WebhookDelivery, error) {
	now := w.now()
	return w.payments.ClaimWebhooks(ctx, now, now.Add(leaseFor), limit)
}

// claimPaymentsWebhooks leases each payment's next delivery if it is due
// (its earliest pending status, so at most one a payment).
func (w *Workers) claimPaymentsWebhooks(ctx context.Context, payments ...uuid.UUID) ([]domain.WebhookDelivery, error) {
	now := w.now()
	return w.payments.ClaimPaymentsWebhooks(ctx, payments, now, now.Add(leaseFor))
}

// webhookBody is the delivered JSON (contract §8).
type webhookBody struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	CreatedAt string          `json:"createdAt"`
	Data      json.RawMessage `json:"data"`
}

// deliver makes one attempt and records it. It reports whether the
// receiver answered 2xx and that answer is recorded, and returns the
// payment's next delivery when the record leased it.
func (w *Workers) deliver(ctx context.Context, d domain.WebhookDelivery) (bool, []domain.WebhookDelivery) {
	p, err := domain.DecodePayment(d.Payment)
	if err != nil {
		w.log.Error("webhooks: stored payment", "event", d.EventID, "err", err)
		return false, nil
	}
	data, err := w.cfg.RenderPayment(domain.PaymentSnapshot{Payment: p, UpdatedAt: p.UpdatedAt})
	if err != nil {
		w.log.Error("webhooks: render payment", "event", d.EventID, "err", err)
		return false, nil
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
	sendBy := d.LeaseUntil.Add(-w.cfg.WebhookTimeout - recordFor)
	openCtx, cancel := context.WithTimeout(ctx, sendBy.Sub(w.now()))
	var a webhooks.Attempt
	secret, err := w.cfg.OpenSecret(openCtx, p.WebhookSecret)
	cancel()
	if err == nil && !w.now().Before(sendBy) {
		err = errors.New("too late to send within the delivery's lease")
	}
	switch {
	case errors.Is(err, ErrSecretUnreadable):
		w.log.Error("webhooks: open the webhook secret", "event", d.EventID, "err", err)
		a = webhooks.Attempt{Err: webhooks.FailureSecretUnusable}
	case err != nil:
		// Nothing was sent: the delivery is given back at once rather
		// than left leased, which would hold it, and every later status
		// of its payment, for the rest of the lease.
		w.log.Warn("webhooks: open the webhook secret", "event", d.EventID, "err", err)
		if err := w.payments.ReleaseWebhook(context.WithoutCancel(ctx), d.EventID, d.LeaseUntil); err != nil {
			w.log.Warn("webhooks: release a delivery not attempted; it waits for its lease to end", "event", d.EventID, "err", err)
		}
		return false, nil
	default:
		body, _ := json.Marshal(webhookBody{ID: d.EventID.String(), Type: d.Type, CreatedAt: d.OccurredAt.UTC().Format(domain.TimeFormat), Data: data})
		a = w.webhooks.Deliver(ctx, p.WebhookURL, secret, d.EventID.String(), body, w.now())
	}
	w.metrics.webhooks.WithLabelValues(map[bool]string{true: "delivered", false: "failed"}[a.Delivered]).Inc()
	at := w.now()
	attempt := domain.NewWebhookAttempted(domain.WebhookAttempt{EventID: d.EventID, Type: d.Type, Attempt: d.Attempts + 1,
		StatusCode: a.StatusCode, Duration: a.Duration, Err: a.Err, Delivered: a.Delivered, Now: at}, w.cfg.WebhookSchedule)
	next, err := w.record(ctx, d, attempt, a.Delivered && w.senders.announced(d.PaymentID))
	if err != nil && !errors.Is(err, context.Canceled) {
		w.log.Warn("webhooks: record attempt", "event", d.EventID, "err", err)
	}
	return err == nil && a.Delivered, next
}
