package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore"
	"github.com/ledger/ledger/eventstore/eventrow"
)

// auditChainCheck verifies the global order and the hash chains (contract §9):
// positions are 1, 2, 3, ... with no gap up to sequencer_state.last_position;
// every sequenced event's hash is SHA-256(prevhash + "\n" + JCS(envelope)),
// recomputed with eventstore.Hash, the sequencer's own function; its
// prevhash is the hash of the previous event of its tenant in position
// order (64 zeros for the first); each tenant's chain head is its last
// event; and no event waits for its position longer than unsequencedAge.
//
// The chains are walked tenant by tenant (index events_tenant_position), so
// only the previous event's hash is held; the gap search runs in Postgres.
type auditChainCheck struct {
	unsequencedAge time.Duration

	positions, sequencing, chain auditFindings
	events, tenants, unsequenced int64
}

// run streams the sequenced events on events and reads everything else on aux.
func (c *auditChainCheck) run(ctx context.Context, events, aux *pgx.Conn) error {
	rows, err := events.Query(ctx, `SELECT `+auditEventColumns+` FROM events e
		WHERE e.position IS NOT NULL ORDER BY e.tenant_id, e.position`)
	if err != nil {
		return fmt.Errorf("read events: %w", err)
	}
	defer rows.Close()
	if err := c.checkPositions(ctx, aux); err != nil {
		return err
	}
	if err := c.checkUnsequenced(ctx, aux); err != nil {
		return err
	}
	if err := c.walk(ctx, rows, aux); err != nil {
		return err
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read events: %w", err)
	}
	return nil
}

// auditMaxGaps bounds the gap ranges read; each is one difference.
const auditMaxGaps = 10_000

func (c *auditChainCheck) checkPositions(ctx context.Context, conn *pgx.Conn) error {
	rows, err := conn.Query(ctx, `SELECT prev + 1, position - 1 FROM (
			SELECT position, lag(position, 1, 0::bigint) OVER (ORDER BY position) AS prev
			FROM events WHERE position IS NOT NULL) s
		WHERE position <> prev + 1 ORDER BY position LIMIT $1`, auditMaxGaps)
	if err != nil {
		return fmt.Errorf("find position gaps: %w", err)
	}
	var from, to int64
	_, err = pgx.ForEachRow(rows, []any{&from, &to}, func() error {
		c.positions.add(auditGap(from, to, "no event has these positions"))
		return nil
	})
	if err != nil {
		return fmt.Errorf("find position gaps: %w", err)
	}
	var last, top int64
	err = conn.QueryRow(ctx, `SELECT last_position, (SELECT coalesce(max(position), 0) FROM events) FROM sequencer_state`).
		Scan(&last, &top)
	if err != nil {
		return fmt.Errorf("read sequencer state: %w", err)
	}
	switch {
	case top < last:
		c.positions.add(auditGap(top+1, last, "sequencer_state.last_position is "+strconv.FormatInt(last, 10)+
			" but no event has these positions"))
	case top > last:
		c.positions.add(auditDifference{Subject: "sequencer_state", Field: "last_position",
			Expected: strconv.FormatInt(top, 10), Actual: strconv.FormatInt(last, 10)})
	}
	return nil
}

func auditGap(from, to int64, note string) auditDifference {
	subject := fmt.Sprintf("positions %d-%d", from, to)
	if from == to {
		subject = fmt.Sprintf("position %d", from)
	}
	return auditDifference{Subject: subject, Note: note}
}

// checkUnsequenced counts the events still waiting for a position and
// reports those older than unsequencedAge (contract §9: sequenced within
// 1 s of commit under normal load).
func (c *auditChainCheck) checkUnsequenced(ctx context.Context, conn *pgx.Conn) error {
	age := c.unsequencedAge.Seconds()
	rows, err := conn.Query(ctx, `SELECT id, type, recorded_at, count(*) OVER (), now() - recorded_at > make_interval(secs => $1)
		FROM events WHERE position IS NULL ORDER BY seq`, age)
	if err != nil {
		return fmt.Errorf("read unsequenced events: %w", err)
	}
	var (
		id    uuid.UUID
		typ   string
		at    time.Time
		total int64
		old   bool
	)
	_, err = pgx.ForEachRow(rows, []any{&id, &typ, &at, &total, &old}, func() error {
		c.unsequenced = total
		if old {
			c.sequencing.add(auditDifference{Subject: "event " + id.String() + " (" + typ + ")",
				Note: fmt.Sprintf("recorded %s and still has no position (older than %s)", at.UTC().Format(time.RFC3339), c.unsequencedAge)})
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("read unsequenced events: %w", err)
	}
	return nil
}

// walk recomputes every sequenced event's hash and checks every link and
// each tenant's chain head.
func (c *auditChainCheck) walk(ctx context.Context, events pgx.Rows, conn *pgx.Conn) error {
	var last domain.Record // the previous event, of the tenant being walked
	endTenant := func() error {
		if last.TenantID == uuid.Nil {
			return nil
		}
		var position int64
		var hash string
		err := conn.QueryRow(ctx, `SELECT last_position, hash FROM chain_heads WHERE tenant_id = $1`, last.TenantID).Scan(&position, &hash)
		subject := "chain_heads " + last.TenantID.String()
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			c.chain.add(auditDifference{Subject: subject, Note: "missing: the tenant has sequenced events"})
		case err != nil:
			return fmt.Errorf("read chain_heads: %w", err)
		case position != last.Position || hash != last.Hash:
			c.chain.add(auditDifference{Subject: subject, Field: "last_position, hash",
				Expected: fmt.Sprintf("%d, %s", last.Position, last.Hash), Actual: fmt.Sprintf("%d, %s", position, hash)})
		}
		return nil
	}
	for events.Next() {
		r, err := eventrow.Scan(events)
		if err != nil {
			return err
		}
		c.events++
		prev := last.Hash
		if r.TenantID != last.TenantID {
			if err := endTenant(); err != nil {
				return err
			}
			c.tenants++
			prev = eventstore.GenesisHash
		}
		subject := fmt.Sprintf("event %s (position %d)", r.ID, r.Position)
		if r.PrevHash != prev {
			link := "the tenant's first event links to 64 zeros"
			if prev != eventstore.GenesisHash {
				link = fmt.Sprintf("the chain is broken: expected the hash of position %d, the tenant's previous event", last.Position)
			}
			c.chain.add(auditDifference{Subject: subject, Field: "prevhash", Expected: prev, Actual: r.PrevHash, Note: link})
		}
		// The hash is recomputed from the stored prevhash, so a broken link
		// is reported once, above, and not as a wrong hash of every later event.
		h, err := eventstore.Hash(r.PrevHash, r)
		switch {
		case err != nil:
			c.chain.add(auditDifference{Subject: subject, Field: "hash", Note: err.Error()})
		case h != r.Hash:
			c.chain.add(auditDifference{Subject: subject, Field: "hash", Expected: h, Actual: r.Hash,
				Note: "the stored event is not the one that was hashed"})
		}
		last = r
	}
	if err := endTenant(); err != nil {
		return err
	}
	rows, err := conn.Query(ctx, `SELECT tenant_id FROM chain_heads h
		WHERE NOT EXISTS (SELECT FROM events e WHERE e.tenant_id = h.tenant_id AND e.position IS NOT NULL) ORDER BY tenant_id`)
	if err != nil {
		return fmt.Errorf("read chain_heads: %w", err)
	}
	var tenant uuid.UUID
	_, err = pgx.ForEachRow(rows, []any{&tenant}, func() error {
		c.chain.add(auditDifference{Subject: "chain_heads " + tenant.String(), Note: "extra: the head of a tenant without sequenced events"})
		return nil
	})
	if err != nil {
		return fmt.Errorf("read chain_heads: %w", err)
	}
	return nil
}
