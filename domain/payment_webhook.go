package domain

import (
	"time"

	"github.com/google/uuid"
)

// WebhookRetrySchedule is contract §8's default: the waits before the
// second to the eighth attempt.
var WebhookRetrySchedule = []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour,
	5 * time.Hour, 10 * time.Hour, 10 * time.Hour}

// PaymentWebhookAttempted is one delivery attempt of a status event's
// webhook (contract §8) as the delivery log keeps it (webhook_attempts,
// projections.DeliveryLog). It is no longer appended: how often a receiver
// was called is operational, not a fact of the ledger. It stays a
// registered event because payment histories written before hold it.
type PaymentWebhookAttempted struct {
	EventID       uuid.UUID  `json:"eventId"` // the status event delivered (= webhook-id)
	Type          string     `json:"type"`    // payment.<status>
	Attempt       int        `json:"attempt"` // from 1 per event
	StatusCode    *int       `json:"statusCode"`
	DurationMs    int64      `json:"durationMs"`
	Error         *string    `json:"error"`
	Delivered     bool       `json:"delivered"`     // a 2xx: never sent again
	NextAttemptAt *time.Time `json:"nextAttemptAt"` // nil when delivered or out of retries
	At            time.Time  `json:"at"`
}

func (PaymentWebhookAttempted) EventType() string { return "payment.webhook_attempted" }

var _ = register(EventDef{Type: "payment.webhook_attempted", Version: 1, New: func() Event { return new(PaymentWebhookAttempted) },
	Doc: "One delivery attempt of a payment status webhook, with its outcome and the next attempt's time. " +
		"No longer appended: attempts are kept in the delivery log (GET /payments/{id}/webhooks); older histories hold these events."})

// WebhookAttempt is the outcome of one delivery.
type WebhookAttempt struct {
	EventID    uuid.UUID
	Type       string
	Attempt    int
	StatusCode int // 0: no HTTP answer
	Duration   time.Duration
	Err        string
	Delivered  bool
	Now        time.Time
}

// NewWebhookAttempted is the record of attempt a, with the next attempt
// scheduled by schedule (the waits before attempts 2, 3, ...): none after a
// 2xx or after the last wait.
func NewWebhookAttempted(a WebhookAttempt, schedule []time.Duration) PaymentWebhookAttempted {
	at := a.Now.UTC().Truncate(time.Millisecond)
	e := PaymentWebhookAttempted{EventID: a.EventID, Type: a.Type, Attempt: a.Attempt, DurationMs: a.Duration.Milliseconds(),
		Delivered: a.Delivered, At: at}
	if a.StatusCode != 0 {
		code := a.StatusCode
		e.StatusCode = &code
	}
	if !a.Delivered {
		msg := a.Err
		e.Error = &msg
		if a.Attempt <= len(schedule) {
			next := at.Add(schedule[a.Attempt-1])
			e.NextAttemptAt = &next
		}
	}
	return e
}

// WebhookHandoff is how long a new delivery is left to the process that
// wrote it before the dispatchers of every process may claim it: its
// first attempt is due at once to that process's fast path (and to the
// record of the payment's delivery before it), and to the others only
// after the handoff. Due to all at once, the dispatchers, which poll every
// few milliseconds, raced the fast path for each new delivery, and under
// load most claims on either side found the other had leased it first.
// A delivery whose writer has no fast path (ledgerctl) or dropped it
// (queue full) waits this long.
const WebhookHandoff = time.Second

// WebhookDelivery is a leased delivery of a status event's webhook: the
// event it announces, the payment as that event left it (its state JSON),
// and until when no other sender may claim it.
type WebhookDelivery struct {
	EventID, TenantID, PaymentID uuid.UUID
	Type                         string
	OccurredAt                   time.Time
	Payment                      []byte
	Attempts                     int
	LeaseUntil                   time.Time
}

// WebhookAttemptRecord is an attempt to log: Attempt of a delivery of
// TenantID's payment PaymentID, and whether, when it delivered, the
// payment's next delivery is to be leased in the same transaction.
type WebhookAttemptRecord struct {
	TenantID, PaymentID uuid.UUID
	Attempt             PaymentWebhookAttempted
	LeaseNext           bool
}
