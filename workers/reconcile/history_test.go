package reconcile

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore"
	"github.com/ledger/ledger/eventstore/storetest"
	"github.com/ledger/ledger/eventstore/testenv"
	"github.com/ledger/ledger/projections"
	"github.com/ledger/ledger/workers/rails/statement"
)

// migrated is a database of t's own with the schemas reconciliation
// reads: the event store's, the read models' and its own.
func migrated(t *testing.T, ctx context.Context) *pgxpool.Pool {
	t.Helper()
	pool := storetest.Migrated(t, 2)
	if err := eventstore.Migrate(ctx, pool, eventstore.MigrationSet{Component: "projections", FS: projections.Migrations},
		eventstore.MigrationSet{Component: "reconciliation", FS: Migrations}); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return pool
}

// statedBank is a bank statement with no movements whose account closes
// at 5 ZAR: an empty ledger holds 0, so the balances disagree.
type statedBank struct{}

func (statedBank) Records(context.Context, time.Time, time.Time) ([]statement.Record, error) {
	return nil, nil
}

func (statedBank) Balances(_ context.Context, from, to time.Time) ([]statement.Balance, error) {
	return []statement.Balance{{Account: "ZA01", Currency: "ZAR", Opening: dec("0"), Closing: dec("5"), From: from, To: to}}, nil
}

// foundBreaks records breaks in memory, each new the first time.
type foundBreaks struct {
	mu   sync.Mutex
	seen map[string]bool
}

func (b *foundBreaks) FindBreak(_ context.Context, f domain.FindBreak, _ domain.Metadata) (domain.Break, bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	id := domain.BreakID(f.Rail, f.Kind, f.Ref)
	isNew := !b.seen[id.String()]
	b.seen[id.String()] = true
	return domain.Break{ID: id, Kind: f.Kind, Rail: f.Rail, Ref: f.Ref, Status: domain.BreakOpen}, isNew, nil
}

// TestLatestRuns: the runs of both kinds, made by the schedule and the
// requests' queue, are read back newest first with their reports (the
// balances compared, the breaks by kind, which were new), who ran them,
// and where the unfinished and failed ones stand; limit keeps the newest.
func TestLatestRuns(t *testing.T) {
	t.Parallel()
	ctx := testenv.Context(t, 30*time.Second)
	pool := migrated(t, ctx)
	r := &Reconciler{Sources: map[string]statement.Source{"BANK_TRANSFER": statedBank{}}, Ledger: NewLedger(pool),
		Breaks: &foundBreaks{seen: map[string]bool{}}, Now: time.Now}
	schedule := &Schedule{At: time.Hour, Rails: []string{"BANK_TRANSFER"}, Reconciler: r, Pool: pool, Log: slog.New(slog.DiscardHandler)}
	requests := &Requests{Reconciler: r, Pool: pool, Log: schedule.Log}

	if _, err := schedule.Due(ctx, day.Add(2*time.Hour)); err != nil {
		t.Fatalf("scheduled run: %v", err)
	}
	if claimed, err := schedule.claim(ctx, "MOMO", day.AddDate(0, 0, -1), day); err != nil || !claimed {
		t.Fatalf("claim a scheduled run: %v, %v", claimed, err)
	}
	ask := func(rail string, from time.Time) {
		t.Helper()
		if _, err := Ask(ctx, pool, rail, from, from.Add(24*time.Hour), "operator:ann"); err != nil {
			t.Fatal(err)
		}
	}
	ask("BANK_TRANSFER", day.AddDate(0, 0, -3))
	ask("USDT", day.AddDate(0, 0, -3)) // no source: it fails
	for range 2 {
		if ran, err := requests.next(ctx); err != nil || !ran {
			t.Fatalf("requested run: %v, %v", ran, err)
		}
	}
	ask("BANK_TRANSFER", day.AddDate(0, 0, -5)) // no ledgerd takes it

	runs, err := NewHistory(pool).LatestRuns(ctx, 30)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		rail, by, status string
		scheduled        bool
	}{
		{"BANK_TRANSFER", "operator:ann", domain.RunWaiting, false},
		{"USDT", "operator:ann", domain.RunFailed, false},
		{"BANK_TRANSFER", "operator:ann", domain.RunFinished, false},
		{"MOMO", "system:reconciliation", domain.RunRunning, true},
		{"BANK_TRANSFER", "system:reconciliation", domain.RunFinished, true},
	}
	if len(runs) != len(want) {
		t.Fatalf("got %d runs, want %d: %+v", len(runs), len(want), runs)
	}
	for i, w := range want {
		got := runs[i]
		if got.Rail != w.rail || got.By != w.by || got.Status() != w.status || got.Scheduled != w.scheduled {
			t.Errorf("run %d: got %s by %s, %s, scheduled %v; want %s by %s, %s, scheduled %v", i, got.Rail, got.By, got.Status(),
				got.Scheduled, w.rail, w.by, w.status, w.scheduled)
		}
		if i > 0 && got.Since.After(runs[i-1].Since) {
			t.Errorf("run %d began at %v, after the run before it in the list (%v)", i, got.Since, runs[i-1].Since)
		}
		if (got.Report != nil) != (w.status == domain.RunFinished) {
			t.Errorf("run %d (%s): has a report: %v", i, w.status, got.Report != nil)
		}
	}
	if runs[1].Error == "" {
		t.Error("the failed run has no error")
	}
	if !runs[4].From.Equal(day.AddDate(0, 0, -1)) || !runs[4].To.Equal(day) || !runs[2].From.Equal(day.AddDate(0, 0, -3)) {
		t.Errorf("windows: got %v to %v and %v, want the schedule's day before %v and the requested day", runs[4].From, runs[4].To,
			runs[2].From, day)
	}
	for _, i := range []int{2, 4} {
		rep := runs[i].Report
		if rep.Rail != "BANK_TRANSFER" || rep.BreaksByKind[domain.BreakBalanceDiffers] != 1 || len(rep.Balances) != 1 {
			t.Fatalf("run %d's report: got %+v, want one balance compared and its break", i, rep)
		}
		b := rep.Balances[0]
		if b.Agrees || !b.ProviderClosing.Equal(dec("5")) || !b.LedgerClosing.Equal(dec("0")) {
			t.Errorf("run %d's balance: got %+v, want the provider's 5 against the ledger's 0, disagreeing", i, b)
		}
	}
	if runs[4].Report.NewBreaks != 1 || runs[2].Report.NewBreaks != 1 {
		t.Errorf("new breaks: got %d scheduled and %d requested, want 1 each (windows differ)", runs[4].Report.NewBreaks,
			runs[2].Report.NewBreaks)
	}

	latest, err := NewHistory(pool).LatestRuns(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(latest) != 2 || latest[0].Rail != runs[0].Rail || latest[1].Rail != "USDT" {
		t.Errorf("limit 2: got %+v, want the two newest runs", latest)
	}
}
