package main

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// phase is what a closed-loop run measured: how many operations completed,
// in how long, and how long each took.
type phase struct {
	Ops     int
	Elapsed time.Duration
	Latency []time.Duration
	CPUBusy *float64 // share of the machine's CPUs busy during the phase, nil if unknown
}

// PerSecond is the phase's throughput in operations per second.
func (p phase) PerSecond() float64 {
	if p.Elapsed <= 0 {
		return 0
	}
	return float64(p.Ops) / p.Elapsed.Seconds()
}

// runClosedLoop runs op back to back on n workers for d. A worker starts an
// operation only before the deadline but always lets it finish (op gets ctx,
// not a deadline), so Ops and Elapsed describe the same work and no
// operation is cut short by the benchmark itself. The first error stops
// every worker: a benchmark of a failing write path measures nothing.
func runClosedLoop(ctx context.Context, n int, d time.Duration, op func(ctx context.Context, worker int) error) (phase, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	lat := make([][]time.Duration, n)
	var wg sync.WaitGroup
	cpu0 := readCPUTimes()
	start := time.Now()
	deadline := start.Add(d)
	for w := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			samples := make([]time.Duration, 0, 4096)
			for ctx.Err() == nil {
				t0 := time.Now()
				if !t0.Before(deadline) {
					break
				}
				if err := op(ctx, w); err != nil {
					cancel(fmt.Errorf("worker %d: %w", w, err))
					break
				}
				samples = append(samples, time.Since(t0))
			}
			lat[w] = samples
		}()
	}
	wg.Wait()
	p := phase{Elapsed: time.Since(start), CPUBusy: readCPUTimes().busySince(cpu0)}
	if err := context.Cause(ctx); err != nil {
		return p, err
	}
	for _, s := range lat {
		p.Ops += len(s)
		p.Latency = append(p.Latency, s...)
	}
	return p, nil
}
