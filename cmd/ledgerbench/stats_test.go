package main

import (
	"math"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	t.Parallel()
	var d []time.Duration
	for i := 100; i >= 1; i-- { // unsorted on purpose: summarise sorts
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	got := summarise(d)
	want := latency{N: 100, P50: 50 * time.Millisecond, P99: 99 * time.Millisecond, Max: 100 * time.Millisecond}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if got := summarise(nil); got != (latency{}) {
		t.Errorf("empty sample: got %+v, want zero", got)
	}
	if got := percentile([]time.Duration{7}, 0.99); got != 7 {
		t.Errorf("one sample: got %v, want 7", got)
	}
}

func TestHistogramQuantile(t *testing.T) {
	t.Parallel()
	buckets := []bucket{{0.001, 0}, {0.002, 50}, {0.004, 100}}
	tests := []struct {
		q, want float64
	}{
		{0.25, 0.0015}, // half way through the (1 ms, 2 ms] bucket
		{0.50, 0.002},
		{0.75, 0.003},
	}
	for _, tt := range tests {
		if got := histogramQuantile(tt.q, buckets, 100); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("q=%v: got %v, want %v", tt.q, got, tt.want)
		}
	}
	if got := histogramQuantile(0.5, buckets, 0); !math.IsNaN(got) {
		t.Errorf("empty histogram: got %v, want NaN", got)
	}
	if got := histogramQuantile(0.99, buckets, 200); got != 0.004 { // rank in +Inf
		t.Errorf("rank beyond the last bound: got %v, want 0.004", got)
	}
}
