package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ledger/ledger/cmd/internal/benchkit"
)

// measureThroughput measures, before the cluster scenario's load, how
// many payments a second the cluster takes through HAProxy with one, two
// and all of its ledgerd processes: workers send POST /payments back to
// back for d at each size, the others stopped (HAProxy skips a stopped
// instance: its connection is refused). It notes paymentsPerSecondN.
func measureThroughput(ctx context.Context, r *chaosRun, partners []benchkit.Partner, workers int, d time.Duration) error {
	bg := context.WithoutCancel(ctx)
	nodes := len(r.cluster.nodes)
	for i := 1; i < nodes; i++ {
		if err := r.cluster.stopGracefully(i); err != nil {
			return fmt.Errorf("SIGTERM %s: %w", r.cluster.nodes[i].name, err)
		}
	}
	for size := 1; size <= nodes; size++ {
		if size > 1 {
			if err := r.cluster.restart(bg, size-1); err != nil {
				return err
			}
			// HAProxy takes it back after two good health checks.
			sleepCtx(bg, 1500*time.Millisecond)
		}
		n, err := paymentsFor(ctx, r.client, partners, workers, d)
		if err != nil {
			return fmt.Errorf("%d ledgerd: %w", size, err)
		}
		r.note(fmt.Sprintf("paymentsPerSecond%d", size), int(float64(n)/d.Seconds()))
	}
	return nil
}

// paymentsFor has workers create payments back to back for d and returns
// how many were created.
func paymentsFor(ctx context.Context, c *chaosClient, partners []benchkit.Partner, workers int, d time.Duration) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var created atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := partners[w%len(partners)]
			for ctx.Err() == nil {
				body, _ := json.Marshal(benchkit.PaymentRequest{MerchantID: p.MerchantID, Amount: 100 + rand.IntN(4901), Reference: "Throughput"})
				a, err := c.do(ctx, http.MethodPost, "/payments", p.Token, body)
				switch {
				case ctx.Err() != nil:
				case err != nil:
					errs <- err
					return
				case a.Status != http.StatusCreated:
					errs <- errStatus("POST /payments", a)
					return
				default:
					created.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return created.Load(), <-errs
}
