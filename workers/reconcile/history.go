package reconcile

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledger/ledger/domain"
)

// History reads the reconciliations run, scheduled and asked for, with
// their reports, for the operator's dashboard.
type History struct {
	pool *pgxpool.Pool
}

// NewHistory reads the runs of pool's database.
func NewHistory(pool *pgxpool.Pool) *History { return &History{pool: pool} }

// latestRunsQuery lists both kinds of run, the newest (by when the
// schedule claimed it or the operator asked) first. A scheduled run is
// started when claimed; a failed one gives its claim back (Schedule.release),
// so none is stored failed.
const latestRunsQuery = `
	SELECT rail, window_from, window_to, true, $2::text, started_at AS since, started_at, finished_at, '', report
		FROM reconciliation_runs
	UNION ALL
	SELECT rail, window_from, window_to, false, actor, requested_at, claimed_at, finished_at, error, report
		FROM reconciliation_requests
	ORDER BY since DESC, rail, window_from DESC
	LIMIT $1`

// LatestRuns returns the limit latest runs, newest first; a run that has
// not finished has no report.
func (h *History) LatestRuns(ctx context.Context, limit int) ([]domain.ReconciliationRun, error) {
	rows, err := h.pool.Query(ctx, latestRunsQuery, limit, scheduleActor.Actor)
	if err != nil {
		return nil, fmt.Errorf("list reconciliation runs: %w", err)
	}
	runs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (domain.ReconciliationRun, error) {
		var r domain.ReconciliationRun
		err := row.Scan(&r.Rail, &r.From, &r.To, &r.Scheduled, &r.By, &r.Since, &r.Started, &r.Finished, &r.Error, &r.Report)
		return r, err
	})
	if err != nil {
		return nil, fmt.Errorf("read reconciliation runs: %w", err)
	}
	return runs, nil
}
