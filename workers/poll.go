package workers

import (
	"context"
	"time"

	"github.com/ledger/ledger/workers/poll"
)

// poll runs fn at once and then an interval after each run until ctx
// ends (poll.Every). A failed run is logged under what and tried again at
// the next round: the polled tables (deadlines, open invoices, stalled
// payments) still hold the work.
func (w *Workers) poll(ctx context.Context, interval time.Duration, what string, fn func(context.Context) error) error {
	poll.Every(ctx, interval, func() {
		if err := fn(ctx); err != nil && ctx.Err() == nil {
			w.log.Warn(what, "err", err)
		}
	})
	return nil
}
