package workers

import (
	"context"
	"time"
)

// poll runs fn at once and then every interval until ctx ends. A failed
// run is logged under what and tried again at the next tick: the polled
// tables (deadlines, open invoices, stalled payments) still hold the work.
func (w *Workers) poll(ctx context.Context, interval time.Duration, what string, fn func(context.Context) error) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if err := fn(ctx); err != nil && ctx.Err() == nil {
			w.log.Warn(what, "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
