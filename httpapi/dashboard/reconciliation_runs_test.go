package dashboard

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/domain"
)

// fakeRuns holds reconciliation runs, newest first, and the limits asked.
type fakeRuns struct {
	mu     sync.Mutex
	runs   []domain.ReconciliationRun
	limits []int
}

func (f *fakeRuns) LatestRuns(_ context.Context, limit int) ([]domain.ReconciliationRun, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.limits = append(f.limits, limit)
	return f.runs[:min(limit, len(f.runs))], nil
}

// reconciliationRuns are a run of each state: a bank day whose closing
// balance disagrees with the ledger's, asked for by an operator; a
// scheduled one that agrees; one running; one failed (its error would be
// markup if not escaped); one waiting for a ledgerd.
func reconciliationRuns() []domain.ReconciliationRun {
	day := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	at := func(h int) *time.Time { t := day.Add(48*time.Hour + time.Duration(h)*time.Hour); return &t }
	dec := decimal.RequireFromString
	return []domain.ReconciliationRun{
		{Rail: "BANK_TRANSFER", From: day, To: day.AddDate(0, 0, 1), By: "operator:ann", Since: *at(5), Started: at(5), Finished: at(6),
			Report: &domain.ReconciliationReport{Rail: "BANK_TRANSFER", ProviderRecords: 41, LedgerRecords: 40, Matched: 39,
				BreaksByKind: map[string]int{domain.BreakProviderOnly: 2, domain.BreakAmountDiffers: 0, domain.BreakBalanceDiffers: 1},
				NewBreaks:    2,
				Breaks: []domain.ReportedBreak{
					{ID: uuid.New(), Kind: domain.BreakProviderOnly, Ref: "entry-paid-by-hand", New: true, Status: domain.BreakOpen},
					{ID: uuid.New(), Kind: domain.BreakProviderOnly, Ref: "entry-seen-before", Status: domain.BreakOpen},
					{ID: uuid.New(), Kind: domain.BreakBalanceDiffers, Ref: "balance:ZA01", New: true, Status: domain.BreakOpen}},
				Balances: []domain.BalanceComparison{{Account: "ZA01", Currency: "ZAR", ProviderOpening: dec("1000"), LedgerOpening: dec("1000"),
					ProviderClosing: dec("1234.56"), LedgerClosing: dec("1230.56")}}}},
		{Rail: "BANK_TRANSFER", From: day.AddDate(0, 0, -1), To: day, Scheduled: true, By: "system:reconciliation", Since: *at(2),
			Started: at(2), Finished: at(3), Report: &domain.ReconciliationReport{Rail: "BANK_TRANSFER", ProviderRecords: 7,
				LedgerRecords: 7, Matched: 7, BreaksByKind: map[string]int{}, Breaks: []domain.ReportedBreak{},
				Balances: []domain.BalanceComparison{{Account: "ZA77", Currency: "ZAR", ProviderOpening: dec("5"), LedgerOpening: dec("5"),
					ProviderClosing: dec("8"), LedgerClosing: dec("8"), Agrees: true}}}},
		{Rail: "MOMO", From: day, To: day.AddDate(0, 0, 1), Scheduled: true, By: "system:reconciliation", Since: *at(1), Started: at(1)},
		{Rail: "USDT", From: day, To: day.AddDate(0, 0, 1), By: "operator:bo", Since: *at(0), Started: at(0), Finished: at(0),
			Error: `usdt statement: <script>alert(1)</script>`},
		{Rail: "LIGHTNING", From: day, To: day.AddDate(0, 0, 1), By: "operator:cy", Since: *at(-1)},
	}
}

// TestReconciliationRunsPage: the operator's dashboard user sees the
// latest runs, newest first, with who ran them, what each matched, its
// breaks by kind (the new ones marked), the balances compared (a
// disagreement marked), and where an unfinished or failed run stands,
// escaped; a tenant's user gets 404 and nothing is read for them.
func TestReconciliationRunsPage(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fakeCredentials{})
	h.runs.runs = reconciliationRuns()

	h.signIn()
	if rec := h.get("/dashboard/reconciliation/runs"); rec.Code != http.StatusNotFound {
		t.Errorf("a tenant's user: got %d, want 404", rec.Code)
	}
	if len(h.runs.limits) != 0 {
		t.Errorf("the runs were read for a tenant's user")
	}

	h.signInOperator()
	rec := h.get("/dashboard/reconciliation/runs")
	page := body(rec)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET runs: got %d (%s)", rec.Code, page)
	}
	if len(h.runs.limits) != 1 || h.runs.limits[0] != runsShown {
		t.Errorf("limits asked: got %v, want [%d]", h.runs.limits, runsShown)
	}
	runs := strings.Split(page, `<tr class="run">`)[1:]
	if len(runs) != 5 {
		t.Fatalf("got %d runs listed, want 5:\n%s", len(runs), page)
	}
	for i, want := range [][]string{
		{"BANK_TRANSFER", "operator:ann", "2026-11-27 00:00 UTC</time> to <time", "2026-11-28 00:00 UTC", "2026-11-29 06:00 UTC", "41 / 40", ">39<",
			"provider_only 2", "1 new", "balance_differs 1", "3 found", "entry-paid-by-hand", "entry-seen-before",
			"ZA01", "1,000.00 ZAR", "1,234.56 ZAR", "1,230.56 ZAR", `<tr class="differs">`, "differs</span>"},
		{"the schedule", "7 / 7", "none", "ZA77", "agrees</span>"},
		{"MOMO", "the schedule", "running", "since", "2026-11-29 01:00 UTC"},
		{"USDT", "operator:bo", "failed", "usdt statement: &lt;script&gt;alert(1)&lt;/script&gt;"},
		{"LIGHTNING", "operator:cy", "waiting", "2026-11-28 23:00 UTC"},
	} {
		for _, w := range want {
			if !strings.Contains(runs[i], w) {
				t.Errorf("run %d lacks %q:\n%s", i, w, runs[i])
			}
		}
	}
	if strings.Contains(runs[0], "amount_differs") {
		t.Error("a kind with no break is listed")
	}
	if strings.Contains(runs[1], "differs") || strings.Contains(runs[1], "new</span>") {
		t.Errorf("the run that agrees is marked:\n%s", runs[1])
	}
	if strings.Contains(page, "<script>alert(1)") {
		t.Error("a run's error is not escaped")
	}
	if !strings.Contains(page, `aria-current="page">Reconciliation`) {
		t.Error("the runs page does not mark Reconciliation as the current section")
	}
}
