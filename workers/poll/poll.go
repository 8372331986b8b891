// Package poll runs a step at once and then again after each interval,
// the loop of every worker that looks for work in a table (deadlines,
// open invoices, stalled payments, reconciliation windows).
package poll

import (
	"context"
	"time"
)

// Every calls step at once and then every interval after it returns,
// until ctx ends. The interval runs from the end of a step, so a slow step
// is never run twice at once nor back to back.
func Every(ctx context.Context, interval time.Duration, step func()) {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		step()
		t.Reset(interval)
	}
}
