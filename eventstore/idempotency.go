package eventstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore/sealing"
)

// IdempotencyTTL is how long a key's first response is replayed.
const IdempotencyTTL = 24 * time.Hour

// Idempotency runs requests that carry an Idempotency-Key (contract §1).
//
// The whole request runs in one transaction that also records the key, the
// request's hash and the response, so the effect and the record commit
// together: a crash at any point leaves either both or neither, and a retry
// then replays or re-executes safely. The key is held with a transaction
// advisory lock, so a second request with the same key while the first is in
// flight is told so (409) instead of waiting.
//
// A recorded response is sealed (sealing.Sealer), not kept as sent: for 24
// hours it holds whatever the request returned, a user's bearer token from
// POST /users/token among them, which anyone reading the table or a backup
// of it could otherwise use. Responses recorded before sealing replay as stored.
type Idempotency struct {
	pool   *pgxpool.Pool
	sealer *sealing.Sealer
	// slots bounds the transactions held open across requests to half the
	// pool, so a request holding one can always get a second connection for
	// its reads and the pool cannot deadlock.
	slots chan struct{}
	// committed is called after each request's transaction commits
	// (OnCommit): events its appends wrote are now visible.
	committed func()
}

// NewIdempotency returns the idempotency store over pool, sealing the
// responses it records with sealer.
func NewIdempotency(pool *pgxpool.Pool, sealer *sealing.Sealer) *Idempotency {
	n := max(int(pool.Config().MaxConns)/2, 1)
	return &Idempotency{pool: pool, sealer: sealer, slots: make(chan struct{}, n)}
}

// OnCommit has f called after each request's transaction commits: the
// appends made in it (Store.Append inside Do) are visible from then on.
// ledgerd wires it to Relay.Wake. Set it before serving.
func (i *Idempotency) OnCommit(f func()) { i.committed = f }

// Do runs run once per (scope, key) within IdempotencyTTL and returns its
// response, or the recorded response of the first run (replayed true). A
// response with status >= 500, or that run says is not final (it asks to
// be retried), is not recorded and its transaction is rolled back, so the
// request can be retried with the same key.
func (i *Idempotency) Do(ctx context.Context, scope, key string, requestHash []byte,
	run func(ctx context.Context) (status int, contentType string, body []byte, final bool)) (status int, contentType string, body []byte, replayed bool, err error) {
	select {
	case i.slots <- struct{}{}:
		defer func() { <-i.slots }()
	case <-ctx.Done():
		return 0, "", nil, false, ctx.Err()
	}
	tx, err := i.pool.Begin(ctx)
	if err != nil {
		return 0, "", nil, false, fmt.Errorf("idempotency: begin: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))

	var locked bool
	// The separator is a newline, which neither a scope nor a header value
	// can hold; a NUL byte is not valid in Postgres text.
	if err := tx.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0))`, scope+"\n"+key).Scan(&locked); err != nil {
		return 0, "", nil, false, fmt.Errorf("idempotency: lock: %w", err)
	}
	if !locked {
		return 0, "", nil, false, domain.Errorf(domain.Conflict, "idempotency_key_in_flight",
			"a request with this Idempotency-Key is still being processed")
	}
	var storedHash []byte
	var createdAt time.Time
	err = tx.QueryRow(ctx, `SELECT request_hash, status, content_type, body, created_at FROM idempotency_keys
		WHERE scope = $1 AND key = $2`, scope, key).Scan(&storedHash, &status, &contentType, &body, &createdAt)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
	case err != nil:
		return 0, "", nil, false, fmt.Errorf("idempotency: read: %w", err)
	case time.Since(createdAt) > IdempotencyTTL:
		if _, err := tx.Exec(ctx, `DELETE FROM idempotency_keys WHERE scope = $1 AND key = $2`, scope, key); err != nil {
			return 0, "", nil, false, fmt.Errorf("idempotency: expire: %w", err)
		}
	case !bytes.Equal(storedHash, requestHash):
		return 0, "", nil, false, domain.Errorf(domain.Unprocessable, "idempotency_key_reused",
			"this Idempotency-Key was used with a different request")
	default:
		opened, err := i.sealer.Open(ctx, string(body))
		if errors.Is(err, sealing.ErrSealed) {
			// The request ran and its answer was final, but the answer can
			// never be read again (its sealing key is gone, or the record
			// was altered). Running it again could move money twice, and a
			// 500 would be retried for the key's whole life: say so instead.
			return 0, "", nil, false, domain.Errorf(domain.Conflict, "idempotency_response_unreadable",
				"the request with this Idempotency-Key was processed, but its recorded response cannot be read any more: read the resource instead")
		}
		if err != nil {
			return 0, "", nil, false, fmt.Errorf("idempotency: open the recorded response: %w", err)
		}
		return status, contentType, []byte(opened), true, nil
	}

	status, contentType, body, final := run(withOuterTx(ctx, tx))
	if status >= 500 || !final {
		return status, contentType, body, false, nil // rolled back, key and all: a retry runs it again
	}
	sealed, err := i.sealer.Seal(ctx, string(body))
	if err != nil {
		return 0, "", nil, false, fmt.Errorf("idempotency: seal the response: %w", err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO idempotency_keys (scope, key, request_hash, status, content_type, body)
		VALUES ($1, $2, $3, $4, $5, $6)`, scope, key, requestHash, status, contentType, []byte(sealed)); err != nil {
		return 0, "", nil, false, fmt.Errorf("idempotency: record: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, "", nil, false, fmt.Errorf("idempotency: commit: %w", err)
	}
	if i.committed != nil {
		i.committed()
	}
	return status, contentType, body, false, nil
}

// Purge deletes records older than IdempotencyTTL.
func (i *Idempotency) Purge(ctx context.Context) (int64, error) {
	tag, err := i.pool.Exec(ctx, `DELETE FROM idempotency_keys WHERE created_at < $1`, time.Now().Add(-IdempotencyTTL))
	if err != nil {
		return 0, fmt.Errorf("purge idempotency keys: %w", err)
	}
	return tag.RowsAffected(), nil
}
