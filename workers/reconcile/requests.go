package reconcile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/workers/poll"
)

// Requests runs the reconciliations operators ask for (ledgerctl
// reconcile) in ledgerd, which holds the providers' clients and serves
// their callbacks. Every ledgerd serves them; each request is claimed by
// one, and by another if the one that claimed it died (staleAfter).
type Requests struct {
	Reconciler *Reconciler
	Pool       *pgxpool.Pool
	Poll       time.Duration
	Log        *slog.Logger
}

// Serve runs the requests queued, oldest first, until ctx ends.
func (q *Requests) Serve(ctx context.Context) {
	poll.Every(ctx, q.Poll, func() {
		for {
			ran, err := q.next(ctx)
			if err != nil && ctx.Err() == nil {
				q.Log.Error("reconciliation: requested run", "err", err)
			}
			if !ran || err != nil {
				return
			}
		}
	})
}

// next claims the oldest request waiting and runs it; false when none waits.
func (q *Requests) next(ctx context.Context) (bool, error) {
	var (
		id       uuid.UUID
		rail     string
		from, to time.Time
		actor    string
	)
	err := q.Pool.QueryRow(ctx, `UPDATE reconciliation_requests SET claimed_at = now() WHERE id = (
			SELECT id FROM reconciliation_requests WHERE finished_at IS NULL
				AND (claimed_at IS NULL OR claimed_at < now() - $1::float8 * interval '1 second')
			ORDER BY requested_at LIMIT 1 FOR UPDATE SKIP LOCKED)
		RETURNING id, rail, window_from, window_to, actor`, staleAfter.Seconds()).Scan(&id, &rail, &from, &to, &actor)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("claim a reconciliation request: %w", err)
	}
	rep, runErr := q.Reconciler.Run(ctx, rail, from, to, domain.Metadata{Actor: actor})
	var raw []byte
	message := ""
	if runErr != nil {
		message = runErr.Error()
	} else if raw, err = json.Marshal(rep); err != nil {
		return true, fmt.Errorf("encode the report of request %s: %w", id, err)
	}
	if _, err := q.Pool.Exec(ctx, `UPDATE reconciliation_requests SET finished_at = now(), report = $2, error = $3 WHERE id = $1`,
		id, raw, message); err != nil {
		return true, fmt.Errorf("record request %s: %w", id, err)
	}
	return true, nil
}

// Ask queues a reconciliation of rail over [from, to) for a ledgerd to
// run, on behalf of actor, and returns its id.
func Ask(ctx context.Context, pool *pgxpool.Pool, rail string, from, to time.Time, actor string) (uuid.UUID, error) {
	id := uuid.Must(uuid.NewV7())
	if _, err := pool.Exec(ctx, `INSERT INTO reconciliation_requests (id, rail, window_from, window_to, actor) VALUES ($1, $2, $3, $4, $5)`,
		id, rail, from.UTC(), to.UTC(), actor); err != nil {
		return id, fmt.Errorf("queue the reconciliation: %w", err)
	}
	return id, nil
}

// ErrNotTaken is Await's answer when no ledgerd took the request in time.
var ErrNotTaken = errors.New("no ledgerd took the reconciliation request: is one running on this database?")

// Await waits, polling every poll, for request id's report until ctx
// ends. A request no ledgerd took by then is withdrawn (ErrNotTaken); one
// that is running finishes and records its breaks all the same.
func Await(ctx context.Context, pool *pgxpool.Pool, id uuid.UUID,
	poll time.Duration) (domain.ReconciliationReport, error) {
	for {
		var (
			claimed  bool
			finished bool
			raw      []byte
			message  string
		)
		err := pool.QueryRow(ctx, `SELECT claimed_at IS NOT NULL, finished_at IS NOT NULL, report, error
			FROM reconciliation_requests WHERE id = $1`, id).Scan(&claimed, &finished, &raw, &message)
		switch {
		case err != nil && ctx.Err() != nil:
			return domain.ReconciliationReport{}, withdraw(pool, id, claimed)
		case err != nil:
			return domain.ReconciliationReport{}, fmt.Errorf("read reconciliation request %s: %w", id, err)
		case finished && message != "":
			return domain.ReconciliationReport{}, errors.New(message)
		case finished:
			var rep domain.ReconciliationReport
			if err := json.Unmarshal(raw, &rep); err != nil {
				return rep, fmt.Errorf("decode the report of request %s: %w", id, err)
			}
			return rep, nil
		}
		select {
		case <-ctx.Done():
			return domain.ReconciliationReport{}, withdraw(pool, id, claimed)
		case <-time.After(poll):
		}
	}
}

// withdraw removes a request no ledgerd has claimed; a claimed one runs on.
func withdraw(pool *pgxpool.Pool, id uuid.UUID, claimed bool) error {
	if claimed {
		return fmt.Errorf("reconciliation request %s still running: its breaks are recorded when it ends (ledgerctl reconcile breaks)", id)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	tag, err := pool.Exec(ctx, `DELETE FROM reconciliation_requests WHERE id = $1 AND claimed_at IS NULL`, id)
	if err != nil {
		return fmt.Errorf("withdraw reconciliation request %s: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("reconciliation request %s was taken at the last moment: its breaks are recorded when it ends", id)
	}
	return ErrNotTaken
}
