package eventstore

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// roundMetrics break the relay's lag into its parts. An event committed
// while the relay works waits for the next round to read it (at most the
// interval between two busy rounds' starts), then for that round's
// sequencing transaction, then for its round's messages to be encoded and
// handed to NATS; JetStream's storing and delivering it is the rest. Only
// rounds that sequenced events count: idle polls would drown them.
type roundMetrics struct {
	interval prometheus.Histogram
	sequence prometheus.Histogram
	publish  prometheus.Histogram
	events   prometheus.Histogram
}

// roundBuckets run from 0.5 ms to about 1.1 s in steps of 1.5: fine enough
// for a p99 read off them to say which part of a 100 ms lag budget went where.
var roundBuckets = prometheus.ExponentialBuckets(0.0005, 1.5, 20)

func newRoundMetrics() roundMetrics {
	return roundMetrics{
		interval: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "ledger_relay_round_interval_seconds",
			Help:    "Time between the starts of two consecutive relay rounds that both sequenced events: the longest a committed event waits to be read.",
			Buckets: roundBuckets}),
		sequence: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "ledger_relay_sequence_seconds",
			Help:    "Duration of a sequencing transaction that positioned events: read, hash, write positions and hashes, commit.",
			Buckets: roundBuckets}),
		publish: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "ledger_relay_publish_seconds",
			Help:    "Time to encode a round's events and hand them to the NATS connection, acknowledgements not awaited (when catching up, reading them from the table too).",
			Buckets: roundBuckets}),
		events: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "ledger_relay_round_events",
			Help:    "Events positioned by a sequencing round that positioned any.",
			Buckets: prometheus.ExponentialBuckets(1, 2, 12)}),
	}
}

func (m roundMetrics) register(reg prometheus.Registerer) {
	reg.MustRegister(m.interval, m.sequence, m.publish, m.events)
}

// sequenced records a round that began at start and sequenced n events,
// lastBusy being the start of the round before it if that one sequenced
// events. It returns what the next round passes as lastBusy.
func (m roundMetrics) sequenced(start, lastBusy time.Time, n int) time.Time {
	if n == 0 {
		return time.Time{}
	}
	m.sequence.Observe(time.Since(start).Seconds())
	m.events.Observe(float64(n))
	if !lastBusy.IsZero() {
		m.interval.Observe(start.Sub(lastBusy).Seconds())
	}
	return start
}
