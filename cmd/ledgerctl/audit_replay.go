package main

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
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
// (domain.CheckBalanced), equal to the ledger_postings rows of the event
// (read with it), and, per tenant, the sums of ledger_postings equal the
// sums of the events' postings.
type auditReplayCheck struct {
	replay, postings auditFindings

	streams, events, rows, postingLines int64

	models *auditReadModels
	// sums are the events' postings summed per tenant, account, currency
	// and side: a few dozen entries per tenant.
	sums map[uuid.UUID]map[auditPostingKey]decimal.Decimal
}

type auditPostingKey struct{ account, currency, side string }

// auditEvent is an event with the ledger_postings rows stored for it.
type auditEvent struct {
	rec      domain.Record
	postings []auditPostingRow
}

// auditPostingRow is a ledger_postings row.
type auditPostingRow struct {
	line       int
	tenantID   uuid.UUID
	recordedAt time.Time
	account    string
	currency   string
	side       string
	amount     decimal.Decimal
}

// auditEventsQuery reads every event in stream order with its
// ledger_postings rows as arrays (one index probe per event, in Postgres).
var auditEventsQuery = `SELECT ` + auditEventColumns + `, p.lines, p.tenants, p.recorded, p.accounts, p.currencies,
		p.sides, p.amounts
	FROM events e LEFT JOIN LATERAL (
		SELECT array_agg(line ORDER BY line) AS lines, array_agg(tenant_id ORDER BY line) AS tenants,
			array_agg(recorded_at ORDER BY line) AS recorded, array_agg(account ORDER BY line) AS accounts,
			array_agg(currency ORDER BY line) AS currencies, array_agg(side ORDER BY line) AS sides,
			array_agg(amount::text ORDER BY line) AS amounts
		FROM ledger_postings lp WHERE lp.event_id = e.id) p ON true
	ORDER BY e.stream_id, e.stream_version`

func scanAuditEventPostings(row pgx.CollectableRow) (auditEvent, error) {
	var (
		ev                                   auditEvent
		lines                                []int
		tenants                              []uuid.UUID
		recorded                             []time.Time
		accounts, currencies, sides, amounts []string
	)
	dest, done := eventrow.Dest(&ev.rec)
	err := row.Scan(append(dest, &lines, &tenants, &recorded, &accounts, &currencies, &sides, &amounts)...)
	if err != nil {
		return ev, fmt.Errorf("scan event: %w", err)
	}
	if err := done(); err != nil {
		return ev, err
	}
	for i := range lines {
		amount, err := decimal.NewFromString(amounts[i])
		if err != nil {
			return ev, fmt.Errorf("ledger_postings %s/%d: amount: %w", ev.rec.ID, lines[i], err)
		}
		ev.postings = append(ev.postings, auditPostingRow{line: lines[i], tenantID: tenants[i], recordedAt: recorded[i],
			account: accounts[i], currency: currencies[i], side: sides[i], amount: amount})
	}
	return ev, nil
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
		ev, err := scanAuditEventPostings(rows)
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
	rc.checkPostings(r, domain.PostingsOf(e), ev.postings)
}

// finish compares the fold of a whole stream with the read models.
func (rc *auditReplayCheck) finish(ctx context.Context, s *auditStream) error {
	if s == nil || s.agg == nil {
		return nil
	}
	return s.agg.check(ctx, rc, s)
}

// checkPostings checks one event's postings: balanced, and stored as its
// ledger_postings rows, line i+1 holding posting i.
func (rc *auditReplayCheck) checkPostings(r domain.Record, ps []domain.Posting, rows []auditPostingRow) {
	event := fmt.Sprintf("event %s (%s)", r.ID, r.Type)
	if len(ps) > 0 {
		if err := domain.CheckBalanced(ps); err != nil {
			rc.postings.add(auditDifference{Subject: event, Note: err.Error()})
		}
	}
	sums := rc.sums[r.TenantID]
	for _, p := range ps {
		if sums == nil {
			sums = map[auditPostingKey]decimal.Decimal{}
			rc.sums[r.TenantID] = sums
		}
		k := auditPostingKey{p.Account, p.Currency, p.Side}
		sums[k] = sums[k].Add(p.Amount)
	}
	byLine := make(map[int]auditPostingRow, len(rows))
	for _, row := range rows {
		byLine[row.line] = row
	}
	for i, p := range ps {
		rc.postingLines++
		subject := fmt.Sprintf("ledger_postings %s/%d", r.ID, i+1)
		row, ok := byLine[i+1]
		if !ok {
			rc.postings.add(auditDifference{Subject: subject,
				Note: fmt.Sprintf("missing: %s carries %s %s %s %s", event, p.Side, p.Account, p.Amount, p.Currency)})
			continue
		}
		delete(byLine, i+1)
		rc.rows++
		c := auditFields{f: &rc.postings, subject: subject}
		c.eq("tenant_id", r.TenantID, row.tenantID)
		c.eq("recorded_at", r.RecordedAt, row.recordedAt)
		c.eq("account", p.Account, row.account)
		c.eq("currency", p.Currency, row.currency)
		c.eq("side", p.Side, row.side)
		c.eq("amount", p.Amount, row.amount)
	}
	for _, line := range slices.Sorted(maps.Keys(byLine)) {
		rc.postings.add(auditDifference{Subject: fmt.Sprintf("ledger_postings %s/%d", r.ID, line),
			Note: "extra: " + event + " carries no such line"})
	}
}

// checkOrphanPostings reports ledger_postings rows of events that do not exist.
func (rc *auditReplayCheck) checkOrphanPostings(ctx context.Context, conn *pgx.Conn) error {
	rows, err := conn.Query(ctx, `SELECT p.event_id, p.line FROM ledger_postings p
		WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.id = p.event_id) ORDER BY p.event_id, p.line`)
	if err != nil {
		return fmt.Errorf("find orphan postings: %w", err)
	}
	var id uuid.UUID
	var line int
	_, err = pgx.ForEachRow(rows, []any{&id, &line}, func() error {
		rc.postings.add(auditDifference{Subject: fmt.Sprintf("ledger_postings %s/%d", id, line),
			Note: "extra: no event has this id"})
		return nil
	})
	if err != nil {
		return fmt.Errorf("find orphan postings: %w", err)
	}
	return nil
}

// checkSums compares, per tenant, account, currency and side, the sum of
// ledger_postings with the sum of the events' postings.
func (rc *auditReplayCheck) checkSums(ctx context.Context, conn *pgx.Conn) error {
	rows, err := conn.Query(ctx, `SELECT tenant_id, account, currency, side, sum(amount)::text FROM ledger_postings
		GROUP BY tenant_id, account, currency, side ORDER BY tenant_id, account, currency, side`)
	if err != nil {
		return fmt.Errorf("sum ledger_postings: %w", err)
	}
	var (
		tenant uuid.UUID
		k      auditPostingKey
		sum    decimal.Decimal
	)
	_, err = pgx.ForEachRow(rows, []any{&tenant, &k.account, &k.currency, &k.side, &sum}, func() error {
		want, ok := rc.sums[tenant][k]
		if ok {
			delete(rc.sums[tenant], k)
		}
		if !want.Equal(sum) {
			rc.postings.add(auditSumDifference(tenant, k, want, sum.String()))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sum ledger_postings: %w", err)
	}
	for _, tenant := range slices.SortedFunc(maps.Keys(rc.sums), func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) }) {
		for _, k := range slices.SortedFunc(maps.Keys(rc.sums[tenant]), compareAuditPostingKey) {
			rc.postings.add(auditSumDifference(tenant, k, rc.sums[tenant][k], "0 (no rows)"))
		}
	}
	return nil
}

func auditSumDifference(tenant uuid.UUID, k auditPostingKey, want decimal.Decimal, got string) auditDifference {
	return auditDifference{Subject: "tenant " + tenant.String(),
		Field:    fmt.Sprintf("sum of ledger_postings %s %s %s", k.side, k.account, k.currency),
		Expected: want.String() + " (the events' postings)", Actual: got}
}

func compareAuditPostingKey(a, b auditPostingKey) int {
	return cmp.Or(strings.Compare(a.account, b.account), strings.Compare(a.currency, b.currency), strings.Compare(a.side, b.side))
}
