package eventstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore/sealing"
)

// IdempotencyTTL is how long a key's first response is replayed.
const IdempotencyTTL = 24 * time.Hour

// Response is a request's answer as Idempotency records and replays it.
type Response struct {
	Status      int
	ContentType string
	Body        []byte
	// Final is false for an answer that asks to be retried (a 503, a lost
	// race): it is not the request's outcome, and is not recorded.
	Final bool
	// Secret marks a body that holds a bearer token or another secret: it
	// is stored sealed (sealing.Sealer), readable by no one who reads the
	// table or a backup of it. Other bodies are stored as sent.
	Secret bool
}

// Idempotency runs requests that carry an Idempotency-Key (contract §1).
//
// A key is looked up first: a recorded answer is replayed, or refused when
// the key came with another request. Otherwise the request runs, and what
// it appends is held (request_appends.go), then committed with the key's
// record in one transaction, through the group commit like any append: a
// keyed write costs what a plain one does, and a crash at any point leaves
// both the effect and the record, or neither, so a retry replays or runs
// again safely.
//
// Two requests with one key: in one process the second is told the first
// is in flight (409). In two processes both may run, but only one record
// can be inserted for the key; the other's commit is refused whole, its
// appends with it, and it replays the winner's answer. Whatever it did
// outside the event store (a document's bytes stored, an invoice asked of
// the Lightning node) is left unreferenced, as when any request fails.
type Idempotency struct {
	store    *Store
	sealer   *sealing.Sealer
	mu       sync.Mutex
	inFlight map[string]struct{} // scope and key of the requests running in this process
}

// NewIdempotency returns the idempotency store committing through store,
// sealing the secret responses it records with sealer.
func NewIdempotency(store *Store, sealer *sealing.Sealer) *Idempotency {
	return &Idempotency{store: store, sealer: sealer, inFlight: map[string]struct{}{}}
}

// errKeyTaken: another request recorded the key first (isKeyTaken).
var errKeyTaken = errors.New("eventstore: idempotency key recorded by another request")

// isKeyTaken reports the refusal of a key's record because one exists.
func isKeyTaken(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505" && pgErr.ConstraintName == "idempotency_keys_pkey"
}

// Do runs run once per (scope, key) within IdempotencyTTL and returns its
// response, or the recorded response of the first run (replayed true). A
// response with status >= 500, or not Final, is not recorded and what run
// appended is dropped, so the request can be retried with the same key.
func (i *Idempotency) Do(ctx context.Context, scope, key string, requestHash []byte,
	run func(ctx context.Context) Response) (resp Response, replayed bool, err error) {
	// The separator is a newline, which neither a scope nor a header value
	// can hold.
	id := scope + "\n" + key
	if !i.claim(id) {
		return Response{}, false, domain.Errorf(domain.Conflict, "idempotency_key_in_flight",
			"a request with this Idempotency-Key is still being processed")
	}
	defer i.release(id)
	for attempt := 0; ; attempt++ {
		resp, found, err := i.recorded(ctx, scope, key, requestHash)
		if err != nil || found {
			return resp, found, err
		}
		appends := &requestAppends{}
		resp = run(withRequestAppends(ctx, appends))
		if resp.Status >= 500 || !resp.Final {
			return resp, false, nil // its appends are dropped: a retry runs it again
		}
		record, err := i.record(ctx, scope, key, requestHash, resp)
		if err != nil {
			return Response{}, false, err
		}
		err = i.store.commitRequest(ctx, appends, record)
		switch {
		case err == nil:
			return resp, false, nil
		case errors.Is(err, errKeyTaken) && attempt < 2:
			continue // the other request's answer is recorded: replay it
		case errors.Is(err, ErrVersionConflict) && attempt == 0:
			continue // decide again on fresh state, as Execute does
		case errors.Is(err, ErrVersionConflict):
			return Response{}, false, errConcurrentUpdate(err)
		default:
			return Response{}, false, fmt.Errorf("idempotency: commit: %w", err)
		}
	}
}

func (i *Idempotency) claim(id string) bool {
	i.mu.Lock()
	defer i.mu.Unlock()
	if _, ok := i.inFlight[id]; ok {
		return false
	}
	i.inFlight[id] = struct{}{}
	return true
}

func (i *Idempotency) release(id string) {
	i.mu.Lock()
	delete(i.inFlight, id)
	i.mu.Unlock()
}

// recorded returns the response recorded for the key, if there is one the
// request may replay: one recorded for another request is refused (422),
// and one past IdempotencyTTL is deleted, so the key runs afresh.
func (i *Idempotency) recorded(ctx context.Context, scope, key string, requestHash []byte) (Response, bool, error) {
	var resp Response
	var storedHash []byte
	var createdAt time.Time
	err := i.store.pool.QueryRow(ctx, `SELECT request_hash, status, content_type, body, created_at FROM idempotency_keys
		WHERE scope = $1 AND key = $2`, scope, key).Scan(&storedHash, &resp.Status, &resp.ContentType, &resp.Body, &createdAt)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return Response{}, false, nil
	case err != nil:
		return Response{}, false, fmt.Errorf("idempotency: read: %w", err)
	case time.Since(createdAt) > IdempotencyTTL:
		_, err := i.store.pool.Exec(ctx, `DELETE FROM idempotency_keys WHERE scope = $1 AND key = $2 AND created_at = $3`,
			scope, key, createdAt)
		if err != nil {
			return Response{}, false, fmt.Errorf("idempotency: expire: %w", err)
		}
		return Response{}, false, nil
	case !bytes.Equal(storedHash, requestHash):
		return Response{}, false, domain.Errorf(domain.Unprocessable, "idempotency_key_reused",
			"this Idempotency-Key was used with a different request")
	}
	opened, err := i.sealer.Open(ctx, string(resp.Body))
	if errors.Is(err, sealing.ErrSealed) {
		// The request ran and its answer was final, but the answer can
		// never be read again (its sealing key is gone, or the record was
		// altered). Running it again could move money twice, and a 500
		// would be retried for the key's whole life: say so instead.
		return Response{}, false, domain.Errorf(domain.Conflict, "idempotency_response_unreadable",
			"the request with this Idempotency-Key was processed, but its recorded response cannot be read any more: read the resource instead")
	}
	if err != nil {
		return Response{}, false, fmt.Errorf("idempotency: open the recorded response: %w", err)
	}
	resp.Body, resp.Final = []byte(opened), true
	return resp, true, nil
}

// record is the statement that records resp for the key, sealed if it is
// Secret. A plain INSERT: a record already there (another request's)
// refuses it, and with it the whole commit (isKeyTaken).
func (i *Idempotency) record(ctx context.Context, scope, key string, requestHash []byte, resp Response) (*pgx.QueuedQuery, error) {
	body := append([]byte{}, resp.Body...) // never nil: an empty answer is not NULL
	if resp.Secret {
		sealed, err := i.sealer.Seal(ctx, string(resp.Body))
		if err != nil {
			return nil, fmt.Errorf("idempotency: seal the response: %w", err)
		}
		body = []byte(sealed)
	}
	return &pgx.QueuedQuery{SQL: `INSERT INTO idempotency_keys (scope, key, request_hash, status, content_type, body)
		VALUES ($1, $2, $3, $4, $5, $6)`, Arguments: []any{scope, key, requestHash, resp.Status, resp.ContentType, body}}, nil
}

// Purge deletes records older than IdempotencyTTL.
func (i *Idempotency) Purge(ctx context.Context) (int64, error) {
	tag, err := i.store.pool.Exec(ctx, `DELETE FROM idempotency_keys WHERE created_at < $1`, time.Now().Add(-IdempotencyTTL))
	if err != nil {
		return 0, fmt.Errorf("purge idempotency keys: %w", err)
	}
	return tag.RowsAffected(), nil
}
