package eventstore

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore/eventrow"
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

// The chain heads are cached in memory (sequencer.heads) while this process
// sequences, so a round costs two round trips: one pipeline that begins the
// transaction, locks sequencer_state and reads the unsequenced events, and one
// that writes positions and hashes, moves the chain heads and the state row on
// and commits. The cache is only trusted while last_position, read under the
// row lock, is the one this sequencer committed last: any other sequencer's
// transaction moves last_position, so a stale cache is detected and reloaded
// from chain_heads, and the row lock (not the cache, nor the advisory lock)
// stays what makes sequencing safe. A failed transaction drops the cache.

// maxCachedHeads bounds the chain-head cache; past it the cache starts over
// and reloads heads lazily, one query per round for the tenants it misses.
const maxCachedHeads = 100_000

// sequencer assigns positions and hashes; one per connection that sequences.
type sequencer struct {
	last  int64                // last_position as this sequencer last committed it; -1: unknown
	heads map[uuid.UUID]string // chain heads as of last, of the tenants loaded so far
}

func newSequencer() *sequencer { return &sequencer{last: -1} }

// forget drops what the sequencer remembers, after a failure or when it
// stops being the sequencer.
func (s *sequencer) forget() { s.last, s.heads = -1, nil }

// mark asks a sequencing transaction to move published_position from from
// to to, if it still is at from; the relay folds its marking into the next
// transaction this way, saving a round trip per round.
type mark struct{ from, to int64 }

// round is what one sequencing transaction saw and did.
type round struct {
	recs      []domain.Record // the events sequenced, in position order, with position, prevhash and hash
	prevLast  int64           // last_position before recs
	published int64           // published_position at commit: as read under the lock, or the mark's to
}

// last is the last_position the round committed.
func (rd round) last() int64 { return rd.prevLast + int64(len(rd.recs)) }

// sequence assigns positions and hashes to at most limit committed,
// unsequenced events, applies m (nil: none), and returns what it did.
func (s *sequencer) sequence(ctx context.Context, conn *pgx.Conn, limit int, m *mark) (round, error) {
	rd, err := s.run(ctx, conn, limit, m)
	if err != nil {
		s.forget()
		if !conn.IsClosed() && conn.PgConn().TxStatus() != 'I' {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			if _, rerr := conn.Exec(rctx, "ROLLBACK"); rerr != nil {
				conn.Close(rctx) // the connection's state is unknown: the caller must not reuse it
			}
		}
		return round{}, err
	}
	return rd, nil
}

func (s *sequencer) run(ctx context.Context, conn *pgx.Conn, limit int, m *mark) (round, error) {
	var rd round
	read := &pgx.Batch{}
	read.Queue("BEGIN")
	read.Queue(`SELECT last_position, published_position FROM sequencer_state WHERE id = 1 FOR UPDATE`)
	read.Queue(`SELECT `+recordColumns+` FROM events WHERE position IS NULL ORDER BY seq LIMIT $1`, limit)
	br := conn.SendBatch(ctx, read)
	_, err := br.Exec()
	if err == nil {
		if err = br.QueryRow().Scan(&rd.prevLast, &rd.published); err != nil {
			err = fmt.Errorf("lock sequencer state: %w", err)
		}
	}
	if err == nil {
		var rows pgx.Rows
		if rows, err = br.Query(); err == nil {
			rd.recs, err = pgx.CollectRows(rows, eventrow.Scan)
		}
		if err != nil {
			err = fmt.Errorf("read unsequenced events: %w", err)
		}
	}
	if cerr := br.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("read unsequenced events: %w", cerr)
	}
	if err != nil {
		return rd, err
	}
	if rd.prevLast != s.last || len(s.heads) > maxCachedHeads { // another sequencer ran, or nothing is cached yet
		s.last, s.heads = rd.prevLast, nil
	}
	if s.heads == nil {
		s.heads = map[uuid.UUID]string{}
	}

	write := &pgx.Batch{}
	heads, err := s.chain(ctx, conn, write, rd)
	if err != nil {
		return rd, err
	}
	published := rd.published
	if m != nil && m.from == rd.published {
		published = m.to
	}
	if len(rd.recs) > 0 || published != rd.published {
		write.Queue(`UPDATE sequencer_state SET last_position = $1, published_position = $2 WHERE id = 1`, rd.last(), published)
	}
	write.Queue("COMMIT")
	br = conn.SendBatch(ctx, write)
	var tag pgconn.CommandTag
	for i := range write.Len() {
		if tag, err = br.Exec(); err != nil {
			err = fmt.Errorf("sequence (%s): %w", statementName(write.QueuedQueries[i].SQL), err)
			break
		}
	}
	if cerr := br.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("sequence: %w", cerr)
	}
	if err == nil && tag.String() != "COMMIT" {
		err = fmt.Errorf("sequence: commit answered %q", tag.String())
	}
	if err != nil {
		return rd, err
	}
	rd.published = published
	s.last = rd.last()
	for t, h := range heads {
		s.heads[t] = h
	}
	return rd, nil
}

// chain gives rd's records their positions, prevhash and hash, and queues on
// w the statements that store them and move the chain heads. It returns the
// new chain heads, for the cache once the transaction has committed.
func (s *sequencer) chain(ctx context.Context, conn *pgx.Conn, w *pgx.Batch, rd round) (map[uuid.UUID]string, error) {
	if len(rd.recs) == 0 {
		return nil, nil
	}
	heads, err := s.chainHeads(ctx, conn, rd.recs)
	if err != nil {
		return nil, err
	}
	recs := rd.recs
	last := rd.prevLast
	ids := make([]uuid.UUID, len(recs))
	positions := make([]int64, len(recs))
	prevs, hashes := make([]string, len(recs)), make([]string, len(recs))
	headPos := map[uuid.UUID]int64{}
	for i := range recs {
		r := &recs[i]
		last++
		r.Position = last
		r.PrevHash = heads[r.TenantID]
		if r.PrevHash == "" {
			r.PrevHash = GenesisHash
		}
		if r.Hash, err = Hash(r.PrevHash, *r); err != nil {
			return nil, err
		}
		heads[r.TenantID], headPos[r.TenantID] = r.Hash, r.Position
		ids[i], positions[i], prevs[i], hashes[i] = r.ID, r.Position, r.PrevHash, r.Hash
	}
	// The UPDATE is planned for its arguments on every run: a generic plan
	// cached while the events table was small (a new database, not yet
	// analyzed by autovacuum) joins by a sequential scan of the whole table,
	// and keeps doing so, at a cost growing with the table, until the
	// statistics move. Only this statement: the read of unsequenced events
	// is best served by its generic plan (the partial index).
	w.Queue(`SET LOCAL plan_cache_mode = force_custom_plan`)
	w.Queue(`UPDATE events e SET position = v.position, prevhash = v.prevhash, hash = v.hash
		FROM unnest($1::uuid[], $2::bigint[], $3::text[], $4::text[]) AS v(id, position, prevhash, hash)
		WHERE e.id = v.id`, ids, positions, prevs, hashes)
	var tenants []uuid.UUID
	var tenantHashes []string
	var tenantPositions []int64
	for t, p := range headPos { // the newest event of each tenant is its head
		tenants, tenantHashes, tenantPositions = append(tenants, t), append(tenantHashes, heads[t]), append(tenantPositions, p)
	}
	w.Queue(`INSERT INTO chain_heads (tenant_id, last_position, hash)
		SELECT * FROM unnest($1::uuid[], $2::bigint[], $3::text[])
		ON CONFLICT (tenant_id) DO UPDATE SET last_position = excluded.last_position, hash = excluded.hash`,
		tenants, tenantPositions, tenantHashes)
	return heads, nil
}

// chainHeads returns the current chain head of every tenant in recs: from
// the cache, and from chain_heads for the tenants it does not hold (an
// absent row, a tenant's first event, reads as "").
func (s *sequencer) chainHeads(ctx context.Context, conn *pgx.Conn, recs []domain.Record) (map[uuid.UUID]string, error) {
	heads := map[uuid.UUID]string{}
	var missing []uuid.UUID
	for _, r := range recs {
		if _, ok := heads[r.TenantID]; ok {
			continue
		}
		h, ok := s.heads[r.TenantID]
		heads[r.TenantID] = h
		if !ok {
			missing = append(missing, r.TenantID)
		}
	}
	if len(missing) == 0 {
		return heads, nil
	}
	rows, err := conn.Query(ctx, `SELECT tenant_id, hash FROM chain_heads WHERE tenant_id = ANY($1::uuid[])`, missing)
	if err != nil {
		return nil, fmt.Errorf("read chain heads: %w", err)
	}
	var t uuid.UUID
	var h string
	_, err = pgx.ForEachRow(rows, []any{&t, &h}, func() error { heads[t] = h; return nil })
	if err != nil {
		return nil, fmt.Errorf("read chain heads: %w", err)
	}
	return heads, nil
}
