package main

import (
	"context"
	"log/slog"
	"sort"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/projections"
	"github.com/ledger/ledger/workers/rails/camt"
	"github.com/ledger/ledger/workers/rails/ethereum"
	"github.com/ledger/ledger/workers/rails/lightning"
	"github.com/ledger/ledger/workers/rails/mpesa"
	"github.com/ledger/ledger/workers/rails/payout"
	"github.com/ledger/ledger/workers/rails/paystack"
	"github.com/ledger/ledger/workers/rails/statement"
	"github.com/ledger/ledger/workers/reconcile"
)

// reconcilePoll is how often a scheduled instance looks for a window due:
// the run starts within a minute of LEDGER_RECONCILE_AT.
const reconcilePoll = time.Minute

// requestPoll is how often an instance looks for the reconciliations
// operators asked for (ledgerctl reconcile waits about that long extra).
const requestPoll = time.Second

// reconcileRails are the ledger's rail names a statement source may serve.
var reconcileRails = []string{domain.FundingLightning, domain.FundingBankTransfer, domain.FundingMomo, domain.FundingUSDT, domain.PayoutBank}

// statementSources are the statement source of each rail reconciliation
// reads, by the ledger's rail name: in sandbox mode the sandbox rail's
// books serve every rail; in production each provider configured serves
// its own rail, built from the clients the rails use, one line each
// (docs/reconciliation.md lists them).
func (r *rails) statementSources(cfg config, pool *pgxpool.Pool) map[string]statement.Source {
	sources := map[string]statement.Source{}
	if cfg.Mode == "sandbox" {
		books := payout.NewSandbox(pool, 0)
		for _, rail := range reconcileRails {
			sources[rail] = books
		}
		return sources
	}
	if r.paystack != nil {
		sources[domain.PayoutBank] = paystack.NewStatement(r.paystack)
	}
	if r.mpesa != nil && cfg.MPesa.StatementsDir != "" {
		sources[domain.FundingMomo] = mpesa.NewReports(cfg.MPesa.StatementsDir, pool, r.mpesa, r.mpesaCfg)
	}
	if cfg.CamtStatementsDir != "" {
		sources[domain.FundingBankTransfer] = camt.NewStatements(cfg.CamtStatementsDir)
	}
	if r.lnd != nil {
		sources[domain.FundingLightning] = lightning.NewStatement(r.lnd, payout.NewLightningPayoutKeys(pool))
	}
	if r.eth != nil {
		sources[domain.FundingUSDT] = ethereum.NewStatement(pool, r.eth, cfg.USDT.Contract, uint64(cfg.USDT.Confirmations))
	}
	return sources
}

// newReconciliation is the reconciliation ledgerd runs: the requests
// operators queue (ledgerctl reconcile), which every instance serves, and
// the daily schedule of every rail with a source (LEDGER_RECONCILE_AT;
// nil when it is not set).
func newReconciliation(cfg config, sources map[string]statement.Source, pool *pgxpool.Pool, breaks reconcile.Breaks,
	log *slog.Logger) (*reconcile.Requests, *reconcile.Schedule) {
	r := &reconcile.Reconciler{Sources: sources, Ledger: reconcile.NewLedger(pool), Breaks: breaks, Now: time.Now}
	requests := &reconcile.Requests{Reconciler: r, Pool: pool, Poll: requestPoll, Log: log}
	if !cfg.Reconcile {
		return requests, nil
	}
	rails := make([]string, 0, len(sources))
	for rail := range sources {
		rails = append(rails, rail)
	}
	sort.Strings(rails)
	return requests, &reconcile.Schedule{At: cfg.ReconcileAt, Rails: rails, Pool: pool, Now: time.Now, Poll: reconcilePoll, Log: log,
		Reconciler: r}
}

// breakMetrics reports the open reconciliation breaks per rail, and the
// age of the oldest, read from the breaks' read model at each scrape.
type breakMetrics struct {
	reader      *projections.Reader
	now         func() time.Time
	open, age   *prometheus.Desc
	scrapeError *prometheus.Desc
}

func newBreakMetrics(reader *projections.Reader) *breakMetrics {
	return &breakMetrics{reader: reader, now: time.Now,
		open: prometheus.NewDesc("ledger_reconciliation_open_breaks", "Reconciliation breaks no operator has resolved yet, per rail.",
			[]string{"rail"}, nil),
		age: prometheus.NewDesc("ledger_reconciliation_oldest_open_break_seconds",
			"How long ago the oldest open reconciliation break of a rail was found.", []string{"rail"}, nil),
		scrapeError: prometheus.NewDesc("ledger_reconciliation_breaks_scrape_error",
			"1 when the open breaks could not be read at this scrape.", nil, nil)}
}

func (m *breakMetrics) Describe(ch chan<- *prometheus.Desc) {
	ch <- m.open
	ch <- m.age
	ch <- m.scrapeError
}

// Collect reads the open breaks; a scrape waits for it at most a few
// seconds, and a failed read says so rather than reporting none.
func (m *breakMetrics) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	open, err := m.reader.OpenBreaksByRail(ctx)
	failed := 0.0
	if err != nil {
		failed = 1
	}
	ch <- prometheus.MustNewConstMetric(m.scrapeError, prometheus.GaugeValue, failed)
	for _, o := range open {
		ch <- prometheus.MustNewConstMetric(m.open, prometheus.GaugeValue, float64(o.Count), o.Rail)
		ch <- prometheus.MustNewConstMetric(m.age, prometheus.GaugeValue, m.now().Sub(o.Oldest).Seconds(), o.Rail)
	}
}
