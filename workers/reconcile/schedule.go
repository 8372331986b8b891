package reconcile

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/workers/poll"
)

// Migrations is the schedule's schema (the reconciliation_runs table);
// ledgerd applies it as the "reconciliation" component.
//
//go:embed migrations/*.sql
var Migrations embed.FS

// Schedule reconciles every rail with a source once a day: at At past
// midnight UTC (LEDGER_RECONCILE_AT), the day before. Each rail's window
// is claimed by one process through its reconciliation_runs row, so any
// number of ledgerd instances run it once; a run that failed gives its
// claim back and is tried again at the next poll, and one whose process
// died is claimed again once staleAfter has passed.
type Schedule struct {
	At         time.Duration // since midnight UTC
	Rails      []string      // the rails to reconcile, each with a source
	Reconciler *Reconciler
	Pool       *pgxpool.Pool
	Now        func() time.Time
	Poll       time.Duration // how often to look for a window due
	Log        *slog.Logger
}

// scheduleActor is who a scheduled run's breaks are recorded by.
var scheduleActor = domain.Metadata{Actor: "system:reconciliation"}

// staleAfter is how long a claimed run may go unfinished before another
// process takes it over: far beyond what a day of one rail takes.
const staleAfter = time.Hour

// Run polls for windows due until ctx ends. A run that fails is logged
// and tried again at the next poll.
func (s *Schedule) Run(ctx context.Context) {
	poll.Every(ctx, s.Poll, func() {
		if _, err := s.Due(ctx, s.Now()); err != nil && ctx.Err() == nil {
			s.Log.Error("reconciliation: scheduled run", "err", err)
		}
	})
}

// Due runs the windows due at now that no process has claimed: once now
// has passed the day's time, each rail's previous day. It returns the
// reports of the runs it made.
func (s *Schedule) Due(ctx context.Context, now time.Time) ([]domain.ReconciliationReport, error) {
	midnight := now.UTC().Truncate(24 * time.Hour)
	if now.UTC().Before(midnight.Add(s.At)) {
		return nil, nil
	}
	from, to := midnight.AddDate(0, 0, -1), midnight
	var reports []domain.ReconciliationReport
	var errs []error
	for _, rail := range s.Rails {
		claimed, err := s.claim(ctx, rail, from, to)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !claimed {
			continue
		}
		rep, err := s.Reconciler.Run(ctx, rail, from, to, scheduleActor)
		if err != nil {
			errs = append(errs, fmt.Errorf("reconcile %s: %w", rail, err), s.release(ctx, rail, from))
			continue
		}
		if err := s.finish(ctx, rep); err != nil {
			errs = append(errs, err)
		}
		s.Log.Info("reconciliation: ran", "rail", rail, "from", from, "matched", rep.Matched, "breaks", len(rep.Breaks),
			"new", rep.NewBreaks)
		reports = append(reports, rep)
	}
	return reports, errors.Join(errs...)
}

// claim takes rail's window for this process: a new row, or one whose
// run died unfinished long ago. A row claimed at the same moment by
// another process makes this insert wait for its commit and then claim
// nothing.
func (s *Schedule) claim(ctx context.Context, rail string, from, to time.Time) (bool, error) {
	err := s.Pool.QueryRow(ctx, `INSERT INTO reconciliation_runs (rail, window_from, window_to, started_at) VALUES ($1, $2, $3, now())
		ON CONFLICT (rail, window_from) DO UPDATE SET started_at = now()
		WHERE reconciliation_runs.finished_at IS NULL AND reconciliation_runs.started_at < now() - $4::float8 * interval '1 second'
		RETURNING true`, rail, from, to, staleAfter.Seconds()).Scan(new(bool))
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("claim the %s reconciliation of %s: %w", rail, from.Format(time.DateOnly), err)
	}
	return true, nil
}

// finish records a run's report on its row.
func (s *Schedule) finish(ctx context.Context, rep domain.ReconciliationReport) error {
	raw, err := json.Marshal(rep)
	if err != nil {
		return fmt.Errorf("encode the %s reconciliation report: %w", rep.Rail, err)
	}
	if _, err := s.Pool.Exec(ctx, `UPDATE reconciliation_runs SET finished_at = now(), report = $3 WHERE rail = $1 AND window_from = $2`,
		rep.Rail, rep.From, raw); err != nil {
		return fmt.Errorf("record the %s reconciliation of %s: %w", rep.Rail, rep.From.Format(time.DateOnly), err)
	}
	return nil
}

// release gives a failed run's claim back, for the next poll to try again.
func (s *Schedule) release(ctx context.Context, rail string, from time.Time) error {
	if _, err := s.Pool.Exec(ctx, `DELETE FROM reconciliation_runs WHERE rail = $1 AND window_from = $2 AND finished_at IS NULL`,
		rail, from); err != nil {
		return fmt.Errorf("release the %s reconciliation of %s: %w", rail, from.Format(time.DateOnly), err)
	}
	return nil
}
