package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore/eventrow"
)

// auditReplayCheck folds every stream through the domain, one stream at a time
// (events in stream_id, stream_version order), and compares the result
// with the read models, which it reads beside the events in the same key
// order (tables below): memory holds one stream and one batch per cursor.
// It also checks every event's postings: balanced per currency
// (domain.CheckBalanced), equal to the ledger_entries row of the event
// (read with it), and, per tenant, the sums of ledger_entries' lines equal
// the sums of the events' postings (audit_postings.go).
type auditReplayCheck struct {
	replay, postings auditFindings

	streams, events, rows, postingLines int64

	models *auditReadModels
	// sums are the events' postings summed per tenant, account, currency
	// and side: a few dozen entries per tenant.
	sums map[uuid.UUID]map[auditPostingKey]decimal.Decimal
}

// auditEvent is an event with the ledger_entries row stored for it.
type auditEvent struct {
	rec   domain.Record
	entry auditEntry
}

// auditEventsQuery reads every event in stream order with its
// ledger_entries row (one index probe per event, in Postgres).
var auditEventsQuery = `SELECT ` + auditEventColumns + `, le.event_id IS NOT NULL, le.tenant_id, le.recorded_at,
		le.accounts, le.currencies, le.sides, le.amounts::text[]
	FROM events e LEFT JOIN LATERAL (SELECT * FROM ledger_entries x WHERE x.event_id = e.id) le ON true
	ORDER BY e.stream_id, e.stream_version`

func scanAuditEvent(row pgx.CollectableRow) (auditEvent, error) {
	var ev auditEvent
	dest, done := eventrow.Dest(&ev.rec)
	if err := row.Scan(append(dest, ev.entry.dest()...)...); err != nil {
		return ev, fmt.Errorf("scan event: %w", err)
	}
	err := done() // it fills ev.rec
	return ev, err
}

// auditStream is the fold of one stream so far, with the facts of its records
// that the read models carry beside the domain state.
type auditStream struct {
	ref     domain.StreamRef
	firstID uuid.UUID // the id of its first event (users.record_id)
	version int       // the last version folded
	created time.Time // recorded_at of its first event
	updated time.Time // recorded_at of its last event
	count   int
	agg     auditFold // nil for a stream type no read model reflects
	subject string    // "stream payment <id>"
}

// auditFold is the fold of one stream type and its comparison with the
// read models that type's projection writes.
type auditFold interface {
	apply(r domain.Record, e domain.Event)
	check(ctx context.Context, rc *auditReplayCheck, s *auditStream) error
}

func newAuditFold(streamType string) auditFold {
	switch streamType {
	case "tenant":
		return &auditTenantFold{}
	case "user":
		return &auditUserFold{}
	case "merchant":
		return &auditMerchantFold{}
	case "payment":
		return &auditPaymentFold{}
	case "dashboard_user":
		return &auditDashboardUserFold{}
	}
	return nil
}

// run streams the events on events and reads the read models on models.
func (rc *auditReplayCheck) run(ctx context.Context, events, models *pgx.Conn) error {
	rc.sums = map[uuid.UUID]map[auditPostingKey]decimal.Decimal{}
	rows, err := events.Query(ctx, auditEventsQuery)
	if err != nil {
		return fmt.Errorf("read events: %w", err)
	}
	defer rows.Close()
	if rc.models, err = openAuditReadModels(ctx, models, &rc.replay); err != nil {
		return err
	}
	var s *auditStream
	for rows.Next() {
		ev, err := scanAuditEvent(rows)
		if err != nil {
			return err
		}
		if s == nil || ev.rec.StreamID != s.ref.ID {
			if err := rc.finish(ctx, s); err != nil {
				return err
			}
			s = rc.begin(ev.rec)
		}
		rc.event(s, ev)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read events: %w", err)
	}
	if err := rc.finish(ctx, s); err != nil {
		return err
	}
	if err := rc.models.rest(ctx); err != nil {
		return err
	}
	if err := rc.checkOrphanPostings(ctx, models); err != nil {
		return err
	}
	return rc.checkSums(ctx, models)
}

func (rc *auditReplayCheck) begin(r domain.Record) *auditStream {
	rc.streams++
	s := &auditStream{ref: r.Stream(), firstID: r.ID, created: r.RecordedAt, agg: newAuditFold(r.StreamType),
		subject: "stream " + r.StreamType + " " + r.StreamID.String()}
	if s.agg == nil {
		rc.replay.add(auditDifference{Subject: s.subject,
			Note: fmt.Sprintf("stream type %q has no read model to compare", r.StreamType)})
	}
	return s
}

// event folds one event into s and checks its postings.
func (rc *auditReplayCheck) event(s *auditStream, ev auditEvent) {
	r := ev.rec
	rc.events++
	if r.StreamType != s.ref.Type || r.TenantID != s.ref.TenantID {
		rc.replay.add(auditDifference{Subject: "event " + r.ID.String(), Field: "stream_type, tenant_id",
			Expected: s.ref.Type + ", " + s.ref.TenantID.String(), Actual: r.StreamType + ", " + r.TenantID.String(),
			Note: "differs from the stream's first event"})
	}
	if r.StreamVersion != s.version+1 {
		missing := fmt.Sprintf("version %d", s.version+1)
		if r.StreamVersion > s.version+2 {
			missing = fmt.Sprintf("versions %d-%d", s.version+1, r.StreamVersion-1)
		}
		rc.replay.add(auditDifference{Subject: s.subject, Field: "stream_version",
			Expected: strconv.Itoa(s.version + 1), Actual: strconv.Itoa(r.StreamVersion),
			Note: missing + " missing before event " + r.ID.String()})
	}
	s.version, s.updated = r.StreamVersion, r.RecordedAt
	s.count++
	e, err := r.Decode()
	if err != nil {
		rc.replay.add(auditDifference{Subject: fmt.Sprintf("event %s (%s)", r.ID, r.Type), Note: err.Error()})
		return
	}
	if s.agg != nil {
		s.agg.apply(r, e)
	}
	rc.checkPostings(r, domain.PostingsOf(e), ev.entry)
}

// finish compares the fold of a whole stream with the read models.
func (rc *auditReplayCheck) finish(ctx context.Context, s *auditStream) error {
	if s == nil || s.agg == nil {
		return nil
	}
	return s.agg.check(ctx, rc, s)
}
