package main

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// auditPostingsCheck checks that ledger_entries is a ledger: each row's
// lines well formed (an account, a currency, a side of debit or credit, a
// positive amount, as many of each) and balanced per currency, as
// domain.CheckBalanced checks an event's postings. That each row holds its
// event's postings is the replay's check, ledger_entries being a read model.
type auditPostingsCheck struct {
	postings auditFindings
	lines    int64
}

// run reads ledger_entries in Postgres, so memory does not grow with it.
func (p *auditPostingsCheck) run(ctx context.Context, conn *pgx.Conn) error {
	// unnest pads the shorter arrays of a row with NULLs, which are ill
	// formed lines; the row's first ill-formed column is named.
	rows, err := conn.Query(ctx, `SELECT le.event_id::text || '/' || l.n,
			CASE WHEN l.account IS NULL THEN 'account' WHEN l.currency IS NULL THEN 'currency'
				WHEN l.side IS DISTINCT FROM 'debit' AND l.side IS DISTINCT FROM 'credit' THEN 'side' ELSE 'amount' END,
			concat_ws(' ', l.side, l.account, l.amount, l.currency)
		FROM ledger_entries le, unnest(le.accounts, le.currencies, le.sides, le.amounts) WITH ORDINALITY AS l(account, currency, side, amount, n)
		WHERE l.account IS NULL OR l.currency IS NULL OR l.side IS NULL OR l.side NOT IN ('debit', 'credit')
			OR l.amount IS NULL OR l.amount <= 0
		ORDER BY le.event_id, l.n`)
	if err != nil {
		return fmt.Errorf("check ledger_entries lines: %w", err)
	}
	var subject, field, line string
	_, err = pgx.ForEachRow(rows, []any{&subject, &field, &line}, func() error {
		p.postings.add(auditDifference{Subject: "ledger_entries " + subject, Field: field, Note: "ill-formed line: " + line})
		return nil
	})
	if err != nil {
		return fmt.Errorf("check ledger_entries lines: %w", err)
	}
	rows, err = conn.Query(ctx, `SELECT le.event_id::text, string_agg(format('%s off by %s', s.currency, s.off), ', ' ORDER BY s.currency)
		FROM ledger_entries le, LATERAL (
			SELECT l.currency, sum(CASE l.side WHEN 'debit' THEN l.amount WHEN 'credit' THEN -l.amount END) AS off
			FROM unnest(le.currencies, le.sides, le.amounts) AS l(currency, side, amount) GROUP BY l.currency) s
		WHERE s.off <> 0 GROUP BY le.event_id ORDER BY le.event_id`)
	if err != nil {
		return fmt.Errorf("check ledger_entries balance: %w", err)
	}
	var off string
	_, err = pgx.ForEachRow(rows, []any{&subject, &off}, func() error {
		p.postings.add(auditDifference{Subject: "ledger_entries " + subject, Note: "unbalanced: " + off})
		return nil
	})
	if err != nil {
		return fmt.Errorf("check ledger_entries balance: %w", err)
	}
	if err := conn.QueryRow(ctx, `SELECT coalesce(sum(cardinality(amounts)), 0) FROM ledger_entries`).Scan(&p.lines); err != nil {
		return fmt.Errorf("count ledger_entries lines: %w", err)
	}
	return nil
}
