package main

import (
	"fmt"
	"io"
	"math"
	"text/tabwriter"
	"time"
)

// report is everything one run measured, written as JSON so runs on
// different machines and commits can be compared without re-running them.
// Durations are milliseconds, rates per second.
type report struct {
	Mode      string    `json:"mode"`
	StartedAt time.Time `json:"startedAt"`
	Machine   machine   `json:"machine"`
	Params    params    `json:"params"`
	Levels    []level   `json:"levels"`
	Relay     *relayRun `json:"relay,omitempty"`
	Targets   []target  `json:"targets"`
}

type params struct {
	DatabaseServer  string  `json:"databaseServer"`
	Database        string  `json:"database"`
	Kept            bool    `json:"kept"`
	NATSURL         string  `json:"natsUrl"`
	Stream          string  `json:"stream,omitempty"`
	SubjectPrefix   string  `json:"subjectPrefix,omitempty"`
	Concurrency     []int   `json:"concurrency"`
	DurationSeconds float64 `json:"durationSeconds"`
	RelayWaitSecs   float64 `json:"relayWaitSeconds"`
	PoolMaxConns    int32   `json:"poolMaxConns"`
	EventType       string  `json:"eventType"`
	RawPayloadBytes int     `json:"rawPayloadBytes"`
}

// level is one concurrency level: the event store, the baseline, and the
// relay while the event store ran.
type level struct {
	Concurrency    int         `json:"concurrency"`
	Append         throughput  `json:"append"`
	Raw            throughput  `json:"rawInsert"`
	AppendRawRatio float64     `json:"appendRawRatio"`
	Relay          *levelRelay `json:"relay,omitempty"`
}

type throughput struct {
	Ops       int      `json:"ops"`
	Seconds   float64  `json:"seconds"`
	PerSecond float64  `json:"perSecond"`
	P50Ms     float64  `json:"p50Ms"`
	P99Ms     float64  `json:"p99Ms"`
	MaxMs     float64  `json:"maxMs"`
	CPUBusy   *float64 `json:"cpuBusy,omitempty"` // share of all CPUs busy, whoever used them
}

func newThroughput(p phase) throughput {
	l := summarise(p.Latency)
	return throughput{Ops: p.Ops, Seconds: p.Elapsed.Seconds(), PerSecond: p.PerSecond(),
		P50Ms: ms(l.P50), P99Ms: ms(l.P99), MaxMs: ms(l.Max), CPUBusy: p.CPUBusy}
}

// levelRelay is the relay's lag for the events of one level: LagP* as the
// subscriber saw it (exact sample, from the start of the event's Append),
// FromCommitP* the same arrivals from the moment their Append returned
// (committed: the relay's own share, without the append's), AckLagP* from
// the relay's own histogram (append to JetStream ack, interpolated inside
// exponential buckets).
// DrainMs is how long after the level's last append the relay needed to
// publish everything.
type levelRelay struct {
	Received        int         `json:"received"`
	Published       uint64      `json:"published"`
	LagP50Ms        float64     `json:"lagP50Ms"`
	LagP99Ms        float64     `json:"lagP99Ms"`
	LagMaxMs        float64     `json:"lagMaxMs"`
	FromCommitP50Ms float64     `json:"fromCommitP50Ms"`
	FromCommitP99Ms float64     `json:"fromCommitP99Ms"`
	AckLagP50Ms     *float64    `json:"ackLagP50Ms,omitempty"`
	AckLagP99Ms     *float64    `json:"ackLagP99Ms,omitempty"`
	DrainMs         float64     `json:"drainMs"`
	CaughtUp        bool        `json:"caughtUp"`
	Rounds          relayRounds `json:"rounds"`
}

// relayRounds is where the relay's share of the lag went in one level,
// from its round histograms (eventstore/relay_rounds.go), each as p50 and
// p99 in ms, interpolated inside buckets 1.5 times apart: a committed event
// waits for the next round to read it (at most IntervalMs), then for that
// round's sequencing transaction (SequenceMs), then for its round's
// messages to be handed to NATS (PublishMs); JetStream's storing and
// delivering it is the rest. Busy counts the rounds that sequenced events.
type relayRounds struct {
	Busy           uint64      `json:"busy"`
	EventsPerRound float64     `json:"eventsPerRound"`
	IntervalMs     [2]*float64 `json:"intervalMs"`
	SequenceMs     [2]*float64 `json:"sequenceMs"`
	PublishMs      [2]*float64 `json:"publishMs"`
}

// relayRun is the whole run's relay outcome: KeptUp means it published, and
// the subscriber received, every appended event within the bounded wait.
type relayRun struct {
	Appended    int64   `json:"appended"`
	Published   uint64  `json:"published"`
	Received    int64   `json:"received"`
	BadMessages int     `json:"badMessages"`
	KeptUp      bool    `json:"keptUp"`
	LagP50Ms    float64 `json:"lagP50Ms"`
	LagP99Ms    float64 `json:"lagP99Ms"`
}

// target is one of the benchmarks' acceptance targets.
type target struct {
	Name string  `json:"name"`
	Want string  `json:"want"`
	Got  float64 `json:"got"`
	Met  bool    `json:"met"`
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// msOrNil turns seconds into milliseconds, and NaN (no data) into nil,
// which JSON can carry.
func msOrNil(sec float64) *float64 {
	if math.IsNaN(sec) {
		return nil
	}
	v := math.Round(sec*1e6) / 1e3
	return &v
}

// printTable writes r for a person reading a terminal.
func printTable(w io.Writer, r report) {
	printHeader(w, r.Mode, r.Machine, r.Params.DurationSeconds)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\tappend\t\t\t\t\traw INSERT\t\t\t\t\t\t\trelay lag (ms)\t\t\t\t\t")
	fmt.Fprintln(tw, "conc\tev/s\tp50 ms\tp99 ms\tcpu\t\tins/s\tp50 ms\tp99 ms\tcpu\t\tappend/raw\t\tp50\tp99\tcommit p99\tack p99\tdrain\t")
	for _, l := range r.Levels {
		fmt.Fprintf(tw, "%d\t%.0f\t%.2f\t%.2f\t%s\t\t%.0f\t%.2f\t%.2f\t%s\t\t%.0f%%\t\t",
			l.Concurrency, l.Append.PerSecond, l.Append.P50Ms, l.Append.P99Ms, pct(l.Append.CPUBusy),
			l.Raw.PerSecond, l.Raw.P50Ms, l.Raw.P99Ms, pct(l.Raw.CPUBusy), 100*l.AppendRawRatio)
		if rl := l.Relay; rl != nil {
			fmt.Fprintf(tw, "%.1f\t%.1f\t%.1f\t%s\t%.0f\t\n", rl.LagP50Ms, rl.LagP99Ms, rl.FromCommitP99Ms, optMs(rl.AckLagP99Ms), rl.DrainMs)
		} else {
			fmt.Fprintln(tw, "-\t-\t-\t-\t-\t")
		}
	}
	tw.Flush()
	if len(r.Levels) > 0 && r.Levels[0].Relay != nil {
		fmt.Fprintln(w, "\nrelay rounds that sequenced events (p50 / p99 ms, from its histograms)")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "conc\trounds\tevents/round\tinterval\tsequencing\tpublishing\t")
		for _, l := range r.Levels {
			if rr := l.Relay; rr != nil {
				fmt.Fprintf(tw, "%d\t%d\t%.0f\t%s\t%s\t%s\t\n", l.Concurrency, rr.Rounds.Busy, rr.Rounds.EventsPerRound,
					optPair(rr.Rounds.IntervalMs), optPair(rr.Rounds.SequenceMs), optPair(rr.Rounds.PublishMs))
			}
		}
		tw.Flush()
	}
	if rr := r.Relay; rr != nil {
		fmt.Fprintf(w, "\nrelay: appended %d, published %d, received %d (bad %d), kept up: %v; lag p50 %.1f ms, p99 %.1f ms over the run\n",
			rr.Appended, rr.Published, rr.Received, rr.BadMessages, rr.KeptUp, rr.LagP50Ms, rr.LagP99Ms)
	}
	fmt.Fprintln(w)
	printTargets(w, r.Targets)
}

// printHeader writes what a mode's table was measured on.
func printHeader(w io.Writer, mode string, m machine, durationSeconds float64) {
	fmt.Fprintf(w, "ledgerbench %s: %d CPU %s/%s %s, Postgres %s (synchronous_commit=%s), NATS %s\n",
		mode, m.NumCPU, m.GOOS, m.GOARCH, m.GoVersion, m.PostgresVersion, m.PostgresSettings["synchronous_commit"], m.NATSVersion)
	fmt.Fprintf(w, "%gs per phase, load average before the run: %s; %s\n\n", durationSeconds, m.LoadAverage, m.references())
}

// printTargets writes one line per target with its verdict.
func printTargets(w io.Writer, ts []target) {
	for _, t := range ts {
		verdict := "met"
		if !t.Met {
			verdict = "MISSED"
		}
		fmt.Fprintf(w, "target: %s %s, got %.3g: %s\n", t.Name, t.Want, t.Got, verdict)
	}
}

// pct formats a CPU share, "-" when unknown.
func pct(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100**v)
}

func optMs(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.1f", *v)
}

// optPair formats a p50 and p99 as "p50 / p99".
func optPair(v [2]*float64) string { return optMs(v[0]) + " / " + optMs(v[1]) }
