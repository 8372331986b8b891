package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/ledger/ledger/cmd/internal/benchkit"
)

// replayAudit is one timed `ledgerctl audit verify` over a size's history,
// after its rebuilds: the real command, as an auditor runs it, so its
// memory is its own process's peak: VmHWM of /proc/<pid>/status, sampled
// while it runs. Not getrusage's maxrss: Linux folds the forking parent's
// high-water mark into the child's at exec, so it would report
// ledgerbench's own peak whenever that is higher.
type replayAudit struct {
	Seconds         float64 `json:"seconds"`
	EventsChecked   int64   `json:"eventsChecked"`
	EventsPerSecond float64 `json:"eventsPerSecond"`
	PeakRSSMB       float64 `json:"peakRssMB"`
	Passed          bool    `json:"passed"`
	Differences     int64   `json:"differences"`
	Output          string  `json:"output,omitempty"` // the first lines, when it did not pass
}

// timeAuditVerify runs ledgerctl audit verify --json on databaseURL.
func timeAuditVerify(ctx context.Context, ledgerctl, databaseURL string) (replayAudit, error) {
	cmd := exec.CommandContext(ctx, ledgerctl, "audit", "verify", "--json")
	cmd.Env = benchkit.Env("DATABASE_URL=" + databaseURL)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return replayAudit{}, fmt.Errorf("ledgerctl audit verify: %w", err)
	}
	peak := make(chan uint64)
	exited := make(chan struct{})
	go func() {
		var hwm uint64
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			if m, err := readProcMemory(cmd.Process.Pid); err == nil {
				hwm = max(hwm, m.HWM)
			}
			select {
			case <-exited:
				peak <- hwm
				return
			case <-t.C:
			}
		}
	}()
	runErr := cmd.Wait()
	close(exited)
	a := replayAudit{Seconds: time.Since(start).Seconds(), PeakRSSMB: megabytes(<-peak)}
	out := stdout.Bytes()
	var rep struct {
		OK            bool  `json:"ok"`
		EventsChecked int64 `json:"eventsChecked"`
		Differences   int64 `json:"differences"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		if runErr != nil {
			return a, fmt.Errorf("ledgerctl audit verify: %w", runErr)
		}
		return a, fmt.Errorf("ledgerctl audit verify --json: %w", err)
	}
	a.Passed, a.EventsChecked, a.Differences = rep.OK && runErr == nil, rep.EventsChecked, rep.Differences
	if a.Seconds > 0 {
		a.EventsPerSecond = float64(rep.EventsChecked) / a.Seconds
	}
	if !a.Passed {
		lines := strings.SplitN(string(out), "\n", 6)
		a.Output = strings.Join(lines[:min(len(lines), 5)], "\n")
	}
	return a, nil
}

// auditSummary is the report's line on audit verify.
func auditSummary(sizes []replaySize) string {
	var parts []string
	for _, s := range sizes {
		if a := s.Audit; a != nil {
			verdict := "passed"
			if !a.Passed {
				verdict = fmt.Sprintf("FAILED with %d differences", a.Differences)
			}
			parts = append(parts, fmt.Sprintf("%d events checked in %.1f s (%.0f events/s), peak RSS %.0f MB, %s",
				a.EventsChecked, a.Seconds, a.EventsPerSecond, a.PeakRSSMB, verdict))
		}
	}
	if len(parts) == 0 {
		return "not run (-audit=false, or no rebuild to compare the read models with)"
	}
	return "ledgerctl audit verify after the rebuilds: " + strings.Join(parts, "; ")
}
