package main

import (
	"math"
	"slices"
	"time"
)

// latency summarises a sample of operation durations. Percentiles use the
// nearest-rank method on the full sample, not a histogram, so p99 is a
// duration some operation really took.
type latency struct {
	N             int
	P50, P99, Max time.Duration
}

// summarise sorts d in place and returns its percentiles.
func summarise(d []time.Duration) latency {
	if len(d) == 0 {
		return latency{}
	}
	slices.Sort(d)
	return latency{N: len(d), P50: percentile(d, 0.50), P99: percentile(d, 0.99), Max: d[len(d)-1]}
}

// percentile returns the nearest-rank q-quantile (0 < q <= 1) of sorted.
func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(q * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

// bucket is one cumulative bucket of a Prometheus histogram.
type bucket struct {
	UpperBound float64 // seconds
	Count      uint64  // observations <= UpperBound
}

// histogramQuantile estimates the q-quantile of a cumulative histogram the
// way PromQL's histogram_quantile does: linear interpolation inside the
// bucket that holds the rank. It returns NaN for an empty histogram and the
// highest finite bound when the rank falls in the +Inf bucket.
func histogramQuantile(q float64, buckets []bucket, total uint64) float64 {
	if total == 0 || len(buckets) == 0 {
		return math.NaN()
	}
	rank := q * float64(total)
	lower, below := 0.0, uint64(0)
	for _, b := range buckets {
		if float64(b.Count) >= rank {
			inBucket := b.Count - below
			if inBucket == 0 {
				return b.UpperBound
			}
			return lower + (b.UpperBound-lower)*(rank-float64(below))/float64(inBucket)
		}
		lower, below = b.UpperBound, b.Count
	}
	return lower
}
