package main

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/domain"
)

// The postings check of the audit's replay: every event's postings are
// balanced and stored as its ledger_entries row, line n in element n of
// each array; no row is left without its event; and each tenant's sums
// of the rows' lines are the sums of its events' postings.

type auditPostingKey struct{ account, currency, side string }

// auditEntry is an event's ledger_entries row as the audit reads it: the
// elements as nullable text, so an array a constraint no longer guards
// (a NULL element, or arrays of different lengths) is a difference, not a
// failure to read.
type auditEntry struct {
	found                                bool
	tenantID                             *uuid.UUID
	recordedAt                           *time.Time
	accounts, currencies, sides, amounts []*string
}

// dest is where a row's entry columns scan to (auditEventsQuery).
func (e *auditEntry) dest() []any {
	return []any{&e.found, &e.tenantID, &e.recordedAt, &e.accounts, &e.currencies, &e.sides, &e.amounts}
}

// lines is the number of lines the row holds: its longest array's length.
func (e *auditEntry) lines() int {
	return max(len(e.accounts), len(e.currencies), len(e.sides), len(e.amounts))
}

// element is the i-th element of column, nil where it is NULL or missing.
func element(column []*string, i int) *string {
	if i < len(column) {
		return column[i]
	}
	return nil
}

// checkPostings checks one event's postings: balanced, and stored as its
// ledger_entries row.
func (rc *auditReplayCheck) checkPostings(r domain.Record, ps []domain.Posting, entry auditEntry) {
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
	rc.postingLines += int64(len(ps))
	subject := "ledger_entries " + r.ID.String()
	switch {
	case !entry.found && len(ps) == 0:
		return
	case !entry.found:
		rc.postings.add(auditDifference{Subject: subject, Note: fmt.Sprintf("missing: %s carries %d posting lines", event, len(ps))})
		return
	case len(ps) == 0:
		rc.postings.add(auditDifference{Subject: subject, Note: "extra: " + event + " carries no postings"})
		return
	}
	rc.rows++
	c := auditFields{f: &rc.postings, subject: subject}
	c.eq("tenant_id", &r.TenantID, entry.tenantID)
	c.eq("recorded_at", &r.RecordedAt, entry.recordedAt)
	for i := range max(len(ps), entry.lines()) {
		line := auditFields{f: &rc.postings, subject: fmt.Sprintf("%s/%d", subject, i+1)}
		if i >= len(ps) {
			line.note("extra: %s carries %d posting lines", event, len(ps))
			continue
		}
		p := ps[i]
		if i >= entry.lines() {
			line.note("missing: %s carries %s %s %s %s", event, p.Side, p.Account, p.Amount, p.Currency)
			continue
		}
		line.eq("account", &p.Account, element(entry.accounts, i))
		line.eq("currency", &p.Currency, element(entry.currencies, i))
		line.eq("side", &p.Side, element(entry.sides, i))
		amount := element(entry.amounts, i)
		if amount == nil {
			line.eq("amount", p.Amount.String(), amount)
			continue
		}
		stored, err := decimal.NewFromString(*amount)
		if err != nil {
			line.note("amount %q: %v", *amount, err)
			continue
		}
		line.eq("amount", p.Amount, stored)
	}
}

// checkOrphanPostings reports ledger_entries rows of events that do not exist.
func (rc *auditReplayCheck) checkOrphanPostings(ctx context.Context, conn *pgx.Conn) error {
	rows, err := conn.Query(ctx, `SELECT le.event_id FROM ledger_entries le
		WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.id = le.event_id) ORDER BY le.event_id`)
	if err != nil {
		return fmt.Errorf("find orphan postings: %w", err)
	}
	var id uuid.UUID
	_, err = pgx.ForEachRow(rows, []any{&id}, func() error {
		rc.postings.add(auditDifference{Subject: "ledger_entries " + id.String(), Note: "extra: no event has this id"})
		return nil
	})
	if err != nil {
		return fmt.Errorf("find orphan postings: %w", err)
	}
	return nil
}

// checkSums compares, per tenant, account, currency and side, the sum of
// ledger_entries' lines with the sum of the events' postings.
func (rc *auditReplayCheck) checkSums(ctx context.Context, conn *pgx.Conn) error {
	// unnest pads the shorter arrays of a row with NULLs; NULL elements
	// count under "(none)".
	rows, err := conn.Query(ctx, `SELECT le.tenant_id, coalesce(l.account, '(none)'), coalesce(l.currency, '(none)'),
			coalesce(l.side, '(none)'), coalesce(sum(l.amount), 0)::text
		FROM ledger_entries le, unnest(le.accounts, le.currencies, le.sides, le.amounts) AS l(account, currency, side, amount)
		GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4`)
	if err != nil {
		return fmt.Errorf("sum ledger_entries: %w", err)
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
		return fmt.Errorf("sum ledger_entries: %w", err)
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
		Field:    fmt.Sprintf("sum of ledger_entries %s %s %s", k.side, k.account, k.currency),
		Expected: want.String() + " (the events' postings)", Actual: got}
}

func compareAuditPostingKey(a, b auditPostingKey) int {
	return cmp.Or(strings.Compare(a.account, b.account), strings.Compare(a.currency, b.currency), strings.Compare(a.side, b.side))
}
