package eventstore

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ledger/ledger/domain"
)

// Global order: positions are assigned after commit by one sequencer.
//
// Writers only INSERT (events.position stays NULL), so appends to different
// streams never wait on each other and take no tenant-wide or global lock.
// The sequencer reads committed rows whose position is NULL, in insert order,
// and in one transaction gives them the next positions after
// sequencer_state.last_position, their prevhash and hash (per-tenant chain,
// hash.go), and moves the chain heads and last_position on.
//
// Why readers can trust it: a reader following "position > P" only sees rows
// whose position was committed, and positions are only ever assigned by
// sequencer transactions that (a) lock the sequencer_state row, so they run one
// after another even if two processes believed they were the sequencer, and
// (b) hand out last_position+1, +2, ... . A position N+1 therefore never
// becomes visible before N: there are no gaps to skip, and an event that
// commits late simply gets a later position. Per-stream order holds because a
// stream's version v+1 can only be inserted after v has committed (the insert
// checks the stream's current version), so v+1 has a higher seq and, if both
// wait in the same batch, is sequenced after v.
//
// The cost is the sequencing delay (one poll interval under load, contract:
// within 1 s) between commit and visibility in the event APIs; read models are
// unaffected because they are written in the append's own transaction.

// sequence assigns positions and hashes to at most limit committed,
// unsequenced events and returns how many it sequenced.
func sequence(ctx context.Context, conn *pgx.Conn, limit int) (int, error) {
	var n int
	err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		var last int64
		if err := tx.QueryRow(ctx, `SELECT last_position FROM sequencer_state WHERE id = 1 FOR UPDATE`).Scan(&last); err != nil {
			return fmt.Errorf("lock sequencer state: %w", err)
		}
		rows, err := tx.Query(ctx, `SELECT `+recordColumns+` FROM events WHERE position IS NULL ORDER BY seq LIMIT $1`, limit)
		if err != nil {
			return fmt.Errorf("read unsequenced events: %w", err)
		}
		recs, err := pgx.CollectRows(rows, scanRecord)
		if err != nil || len(recs) == 0 {
			return err
		}
		heads, err := chainHeads(ctx, tx, recs)
		if err != nil {
			return err
		}
		ids := make([]string, len(recs))
		positions := make([]int64, len(recs))
		prevs, hashes := make([]string, len(recs)), make([]string, len(recs))
		for i := range recs {
			r := &recs[i]
			last++
			r.Position = last
			r.PrevHash = heads[r.TenantID]
			if r.PrevHash == "" {
				r.PrevHash = GenesisHash
			}
			if r.Hash, err = Hash(r.PrevHash, *r); err != nil {
				return err
			}
			heads[r.TenantID] = r.Hash
			ids[i], positions[i], prevs[i], hashes[i] = r.ID.String(), r.Position, r.PrevHash, r.Hash
		}
		if _, err := tx.Exec(ctx, `UPDATE events e SET position = v.position, prevhash = v.prevhash, hash = v.hash
			FROM unnest($1::uuid[], $2::bigint[], $3::text[], $4::text[]) AS v(id, position, prevhash, hash)
			WHERE e.id = v.id`, ids, positions, prevs, hashes); err != nil {
			return fmt.Errorf("assign positions: %w", err)
		}
		var tenants, tenantHashes []string
		var tenantPositions []int64
		for i := len(recs) - 1; i >= 0; i-- { // the newest event of each tenant is its head
			t := recs[i].TenantID
			if heads[t] == "" {
				continue
			}
			tenants, tenantHashes, tenantPositions = append(tenants, t.String()), append(tenantHashes, heads[t]), append(tenantPositions, recs[i].Position)
			heads[t] = ""
		}
		if _, err := tx.Exec(ctx, `INSERT INTO chain_heads (tenant_id, last_position, hash)
			SELECT * FROM unnest($1::uuid[], $2::bigint[], $3::text[])
			ON CONFLICT (tenant_id) DO UPDATE SET last_position = excluded.last_position, hash = excluded.hash`,
			tenants, tenantPositions, tenantHashes); err != nil {
			return fmt.Errorf("move chain heads: %w", err)
		}
		if _, err := tx.Exec(ctx, `UPDATE sequencer_state SET last_position = $1 WHERE id = 1`, last); err != nil {
			return fmt.Errorf("move last position: %w", err)
		}
		n = len(recs)
		return nil
	})
	return n, err
}

// chainHeads returns the current chain head of every tenant in recs.
func chainHeads(ctx context.Context, tx pgx.Tx, recs []domain.Record) (map[uuid.UUID]string, error) {
	seen := map[uuid.UUID]bool{}
	var tenants []string
	for _, r := range recs {
		if !seen[r.TenantID] {
			seen[r.TenantID] = true
			tenants = append(tenants, r.TenantID.String())
		}
	}
	rows, err := tx.Query(ctx, `SELECT tenant_id, hash FROM chain_heads WHERE tenant_id = ANY($1::uuid[])`, tenants)
	if err != nil {
		return nil, fmt.Errorf("read chain heads: %w", err)
	}
	heads := map[uuid.UUID]string{}
	var t uuid.UUID
	var h string
	_, err = pgx.ForEachRow(rows, []any{&t, &h}, func() error { heads[t] = h; return nil })
	if err != nil {
		return nil, fmt.Errorf("read chain heads: %w", err)
	}
	return heads, nil
}
