package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// replayAudit is one timed `ledgerctl audit verify` over a size's history,
// after its rebuilds: the real command, as an auditor runs it, so its
// memory is its own process's peak (getrusage's maxrss), not ledgerbench's.
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
	cmd.Env = ledgerEnv("DATABASE_URL=" + databaseURL)
	start := time.Now()
	out, runErr := cmd.Output()
	a := replayAudit{Seconds: time.Since(start).Seconds()}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		a.PeakRSSMB = float64(ru.Maxrss) * 1024 / 1e6 // Linux reports kilobytes
	}
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
