package domain

import (
	"time"

	"github.com/google/uuid"
)

// WebhookRetrySchedule is contract §8's default: the waits before the
// second to the eighth attempt.
var WebhookRetrySchedule = []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour,
	5 * time.Hour, 10 * time.Hour, 10 * time.Hour}

// PaymentWebhookAttempted records one delivery attempt of a status event's
// webhook (contract §8): deliveries are events too, so an auditor sees
// every attempt, and the delivery's state changes in the same transaction
// as this record.
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

// An attempt happened whatever the payment's state: see StateIndependent.
func (PaymentWebhookAttempted) stateIndependent() {}

var _ = register(EventDef{Type: "payment.webhook_attempted", Version: 1, New: func() Event { return new(PaymentWebhookAttempted) },
	Doc: "One delivery attempt of a payment status webhook, with its outcome and the next attempt's time."})

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

// DecideWebhookAttempt records an attempt (NewWebhookAttempted) on an
// existing payment.
func DecideWebhookAttempt(p Payment, a WebhookAttempt, schedule []time.Duration) ([]Event, error) {
	if p.ID == uuid.Nil {
		return nil, Errorf(NotFound, "not_found", "the payment does not exist")
	}
	return []Event{NewWebhookAttempted(a, schedule)}, nil
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
