package dashboard

import (
	"net/http"

	"github.com/ledger/ledger/domain"
)

// runsShown is how many reconciliation runs the runs page lists: a month
// of one rail's daily runs, fewer with several rails.
const runsShown = 30

// runView is a run with its breaks counted by kind.
type runView struct {
	domain.ReconciliationRun
	Kinds []kindCount
}

// kindCount is how many breaks of a kind a run found, and how many of
// them it was the first to find.
type kindCount struct {
	Kind       string
	Count, New int
}

// runsPage is GET /dashboard/reconciliation/runs: the latest
// reconciliation runs, scheduled and asked for, newest first, with what
// each found (the records matched, the breaks by kind, the balances
// compared) or where it stands. Like the breaks, only the operator's
// dashboard users see it.
func (d *Dashboard) runsPage(w http.ResponseWriter, r *http.Request) error {
	if v := viewerFrom(r.Context()); !v.Operator() {
		return errNotFound
	}
	runs, err := d.Runs.LatestRuns(r.Context(), runsShown)
	if err != nil {
		return err
	}
	views := make([]runView, 0, len(runs))
	for _, run := range runs {
		views = append(views, runView{ReconciliationRun: run, Kinds: breakCounts(run.Report)})
	}
	d.render(w, r, http.StatusOK, "reconciliation-runs", "Reconciliation runs", views)
	return nil
}

// breakCounts are a report's breaks of each kind found, in the order
// reports show them; none for a run with no report.
func breakCounts(rep *domain.ReconciliationReport) []kindCount {
	if rep == nil {
		return nil
	}
	firstFound := map[string]int{}
	for _, b := range rep.Breaks {
		if b.New {
			firstFound[b.Kind]++
		}
	}
	var counts []kindCount
	for _, kind := range domain.BreakKinds {
		if n := rep.BreaksByKind[kind]; n > 0 {
			counts = append(counts, kindCount{Kind: kind, Count: n, New: firstFound[kind]})
		}
	}
	return counts
}
