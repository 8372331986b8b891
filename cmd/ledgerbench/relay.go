package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore"
)

// relayWatch runs the real eventstore.Relay and an ordered consumer on its
// stream, and measures relay lag as a subscriber sees it: arrival time minus
// the event's CloudEvent "time" (its RecordedAt, taken when Append started
// and truncated to the millisecond, so a lag can read up to 1 ms high). That
// covers the append's own commit, sequencing, publishing and delivery.
// For the events the appenders report as committed (committed), it also
// measures arrival minus the moment Append returned: the relay's own share
// (sequencing, publishing, delivery), at most a round trip short of it.
//
// The relay's metrics go to a private registry: its published counter says
// whether it kept up, and its lag histogram (append to JetStream ack) is
// reported beside the subscriber's figures as a cross-check.
type relayWatch struct {
	relay  *eventstore.Relay
	reg    *prometheus.Registry
	cc     jetstream.ConsumeContext
	cancel context.CancelFunc
	done   chan error

	received atomic.Int64
	mu       sync.Mutex
	lags     []time.Duration
	badMsgs  int
	// returned holds when Append returned, by event id, until the event
	// arrives; fromCommit the lags measured from then.
	returned   map[string]time.Time
	fromCommit []time.Duration
}

// startRelay creates the stream, subscribes to it from the start, and runs
// the relay until close.
func startRelay(ctx context.Context, pool *pgxpool.Pool, js jetstream.JetStream, cfg eventstore.RelayConfig, log *slog.Logger) (*relayWatch, error) {
	w := &relayWatch{reg: prometheus.NewRegistry(), done: make(chan error, 1), returned: map[string]time.Time{}}
	w.relay = eventstore.NewRelay(pool, js, cfg, log, w.reg)
	if _, err := w.relay.EnsureStream(ctx); err != nil {
		return nil, fmt.Errorf("start relay: %w", err)
	}
	cons, err := js.OrderedConsumer(ctx, cfg.Stream, jetstream.OrderedConsumerConfig{})
	if err != nil {
		return nil, fmt.Errorf("start relay: ordered consumer: %w", err)
	}
	if w.cc, err = cons.Consume(w.receive); err != nil {
		return nil, fmt.Errorf("start relay: consume: %w", err)
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	w.cancel = cancel
	go func() { w.done <- w.relay.Run(runCtx) }()
	return w, nil
}

// receive records the lag of one published CloudEvent.
func (w *relayWatch) receive(m jetstream.Msg) {
	now := time.Now()
	at, err := eventTime(m.Data())
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		w.badMsgs++
		return
	}
	w.lags = append(w.lags, now.Sub(at))
	if id := m.Headers().Get(jetstream.MsgIDHeader); id != "" {
		if returned, ok := w.returned[id]; ok {
			delete(w.returned, id)
			w.fromCommit = append(w.fromCommit, now.Sub(returned))
		}
	}
	w.received.Add(1)
}

// committed records that recs' Append has returned. An event that arrived
// before it is told (a subscriber faster than the appender's own wake-up)
// is left out rather than counted with a negative lag.
func (w *relayWatch) committed(recs []domain.Record) {
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, r := range recs {
		w.returned[r.ID.String()] = now
	}
}

// eventTime reads a CloudEvent's time, skipping the rest unread: the
// watcher runs beside the appenders it measures, on the same two cores,
// and decoding whole events cost it more than the relay's publishing.
func eventTime(body []byte) (time.Time, error) {
	var event struct {
		Time *string `json:"time"`
	}
	if err := json.Unmarshal(body, &event); err != nil {
		return time.Time{}, err
	}
	if event.Time == nil {
		return time.Time{}, errors.New("event has no time")
	}
	return time.Parse(domain.TimeFormat, *event.Time)
}

// take returns the lags recorded since the last take, from the start of
// Append and from its return, and forgets them (and the returns of events
// still in flight).
func (w *relayWatch) take() (lags, fromCommit []time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	lags, fromCommit = w.lags, w.fromCommit
	w.lags, w.fromCommit, w.returned = nil, nil, map[string]time.Time{}
	return lags, fromCommit
}

// badMessages is how many received messages had no readable CloudEvent time.
func (w *relayWatch) badMessages() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.badMsgs
}

// relayMetrics is a snapshot of the relay's own counters.
type relayMetrics struct {
	Published uint64
	// Every histogram by metric name: ledger_relay_lag_seconds (append to
	// JetStream acknowledgement) and the parts of the lag
	// (eventstore/relay_rounds.go).
	Histograms map[string]histogram
}

// histogram is a snapshot of one Prometheus histogram.
type histogram struct {
	Count   uint64
	Sum     float64
	Buckets []bucket
}

func histogramOf(h *dto.Histogram) histogram {
	snap := histogram{Count: h.GetSampleCount(), Sum: h.GetSampleSum()}
	for _, b := range h.GetBucket() {
		snap.Buckets = append(snap.Buckets, bucket{UpperBound: b.GetUpperBound(), Count: b.GetCumulativeCount()})
	}
	return snap
}

// since returns the observations between an earlier snapshot and h.
func (h histogram) since(earlier histogram) histogram {
	d := histogram{Count: h.Count - earlier.Count, Sum: h.Sum - earlier.Sum}
	for i, b := range h.Buckets {
		if i < len(earlier.Buckets) {
			b.Count -= earlier.Buckets[i].Count
		}
		d.Buckets = append(d.Buckets, b)
	}
	return d
}

// quantile estimates the q-quantile (histogramQuantile); NaN when empty.
func (h histogram) quantile(q float64) float64 { return histogramQuantile(q, h.Buckets, h.Count) }

// metrics reads the relay's published counter and lag histogram.
func (w *relayWatch) metrics() (relayMetrics, error) {
	fams, err := w.reg.Gather()
	if err != nil {
		return relayMetrics{}, fmt.Errorf("gather relay metrics: %w", err)
	}
	m := relayMetrics{Histograms: map[string]histogram{}}
	for _, f := range fams {
		if len(f.GetMetric()) == 0 {
			continue
		}
		switch {
		case f.GetName() == "ledger_relay_published_total":
			m.Published = uint64(f.GetMetric()[0].GetCounter().GetValue())
		case f.GetType() == dto.MetricType_HISTOGRAM:
			m.Histograms[f.GetName()] = histogramOf(f.GetMetric()[0].GetHistogram())
		}
	}
	return m, nil
}

// since returns the observations between an earlier snapshot and m.
func (m relayMetrics) since(earlier relayMetrics) relayMetrics {
	d := relayMetrics{Published: m.Published - earlier.Published, Histograms: map[string]histogram{}}
	for name, h := range m.Histograms {
		d.Histograms[name] = h.since(earlier.Histograms[name])
	}
	return d
}

// waitFor waits up to limit until the relay has published, and the consumer
// received, at least appended events. It returns how long that took and
// whether it happened; a relay that cannot catch up within limit did not
// keep up.
func (w *relayWatch) waitFor(ctx context.Context, appended int64, limit time.Duration) (time.Duration, bool, error) {
	start := time.Now()
	for {
		m, err := w.metrics()
		if err != nil {
			return 0, false, err
		}
		if int64(m.Published) >= appended && w.received.Load() >= appended {
			return time.Since(start), true, nil
		}
		if time.Since(start) >= limit {
			return time.Since(start), false, nil
		}
		select {
		case <-ctx.Done():
			return time.Since(start), false, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// close stops the consumer and the relay.
func (w *relayWatch) close() {
	w.cc.Stop()
	w.cancel()
	<-w.done
}
