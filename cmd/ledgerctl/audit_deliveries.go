package main

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ledger/ledger/domain"
)

// The webhook work list (webhook_deliveries) as the events leave it
// (projections/payments.go): a payment with a webhookUrl gets a pending
// row for payment.created and for each status event, holding the payment
// as that event left it; each payment.webhook_attempted moves its row on
// (attempts, next attempt, exhausted) or, after a 2xx, deletes it. Only
// lease_until is the dispatchers' and is not compared: a row the events do
// not account for would have the dispatchers send a webhook no status
// change ordered, perhaps to another URL.

// auditDelivery is what the events say of one delivery.
type auditDelivery struct {
	event     uuid.UUID
	version   int
	typ       string
	occurred  time.Time
	payment   domain.Payment // as the event left it (payment.created's data is the payment)
	status    string
	attempts  int
	next      time.Time
	delivered bool
}

// deliveries are a payment stream's deliveries, in the order of their events.
type auditDeliveries []*auditDelivery

// apply moves the deliveries on by r (whose event e has been applied to p).
func (ds *auditDeliveries) apply(r domain.Record, e domain.Event, p domain.Payment) {
	switch e := e.(type) {
	case domain.PaymentWebhookAttempted:
		for _, d := range *ds {
			if d.event != e.EventID || d.delivered {
				continue
			}
			if e.Delivered {
				d.delivered = true
				continue
			}
			d.status, d.attempts = "pending", e.Attempt
			if e.NextAttemptAt == nil {
				d.status = "exhausted"
			} else {
				d.next = auditMicros(*e.NextAttemptAt)
			}
		}
	default: // payment.created and each status event
		if domain.StatusOf(e) != "" && p.WebhookURL != "" {
			ds.add(r, p)
		}
	}
}

func (ds *auditDeliveries) add(r domain.Record, payment domain.Payment) {
	*ds = append(*ds, &auditDelivery{event: r.ID, version: r.StreamVersion, typ: r.Type, occurred: r.RecordedAt,
		payment: payment, status: "pending", next: r.RecordedAt})
}

// check compares them with the payment's webhook_deliveries rows.
func (ds auditDeliveries) check(rc *auditReplayCheck, s *auditStream, rows []auditDeliveryRow) error {
	byEvent := map[uuid.UUID]auditDeliveryRow{}
	for _, row := range rows {
		byEvent[row.event] = row
	}
	for _, d := range ds {
		if d.delivered {
			continue // deleted by its 2xx; a row left is extra below
		}
		c := auditFields{f: &rc.replay, subject: "webhook_deliveries " + d.event.String()}
		row, ok := byEvent[d.event]
		if !ok {
			c.note("missing: the %s of %s, not delivered", d.typ, s.subject)
			continue
		}
		delete(byEvent, d.event)
		rc.rows++
		c.eq("tenant_id", s.ref.TenantID, row.tenant)
		c.eq("stream_version", d.version, row.version)
		c.eq("type", d.typ, row.typ)
		c.eq("occurred_at", d.occurred, row.occurred)
		payment, err := json.Marshal(d.payment)
		if err != nil {
			return fmt.Errorf("encode payment %s: %w", s.ref.ID, err)
		}
		c.json("payment", payment, row.state)
		// Compared by value, 1500.0 passes for 1500; the dispatcher reads
		// the copy into domain.Payment, which that fails, for every attempt
		// (and the payment's later deliveries wait behind it).
		var read domain.Payment
		if err := json.Unmarshal(row.state, &read); err != nil {
			c.note("payment: the webhook dispatcher cannot read it: %v", err)
		}
		c.eq("status", d.status, row.status)
		c.eq("attempts", d.attempts, row.attempts)
		c.eq("next_attempt_at", d.next, row.next)
	}
	for _, row := range rows {
		if _, left := byEvent[row.event]; left {
			rc.models.deliveries.extra(row)
		}
	}
	return nil
}

type auditDeliveryRow struct {
	paymentID, event, tenant uuid.UUID
	version, attempts        int
	typ, status              string
	occurred, next           time.Time
	state                    []byte // the payment column
}

func (r auditDeliveryRow) streamID() uuid.UUID { return r.paymentID }
func (r auditDeliveryRow) rowID() string       { return r.event.String() }
func scanAuditDeliveryRow(row pgx.CollectableRow) (r auditDeliveryRow, err error) {
	err = row.Scan(&r.paymentID, &r.event, &r.tenant, &r.version, &r.typ, &r.occurred, &r.state, &r.status, &r.attempts, &r.next)
	return r, err
}
