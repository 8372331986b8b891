package main

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"
)

// paymentsReport is what one payments run measured, beside report (the
// append mode's): the same machine, throughput and target records, with
// levels of POST /payments instead of appends and ledgerd's memory.
// Durations are milliseconds, rates per second, memory MB (10^6 bytes).
type paymentsReport struct {
	Mode      string          `json:"mode"`
	StartedAt time.Time       `json:"startedAt"`
	Machine   machine         `json:"machine"`
	Params    paymentsParams  `json:"params"`
	Levels    []paymentsLevel `json:"levels"`
	Server    serverMemory    `json:"server"`
	Targets   []target        `json:"targets"`
}

type paymentsParams struct {
	DatabaseServer    string  `json:"databaseServer"`
	Database          string  `json:"database"`
	Kept              bool    `json:"kept"`
	NATSURL           string  `json:"natsUrl"`
	Stream            string  `json:"stream"`
	SubjectPrefix     string  `json:"subjectPrefix"`
	Concurrency       []int   `json:"concurrency"`
	DurationSeconds   float64 `json:"durationSeconds"`
	RelayWaitSecs     float64 `json:"relayWaitSeconds"`
	Partners          int     `json:"partners"`
	IdempotencyKey    bool    `json:"idempotencyKey"` // the payments phase's POSTs carry one
	CompareKeys       bool    `json:"compareKeys"`
	LedgerdDBMaxConns int     `json:"ledgerdDbMaxConns"`
	PoolMaxConns      int32   `json:"poolMaxConns"` // the raw INSERT baseline's
	RawPayloadBytes   int     `json:"rawPayloadBytes"`
	ResponseBytes     int     `json:"responseBytes"` // one POST /payments 201 body
}

// paymentsLevel is one concurrency level: POST /payments through ledgerd,
// the raw INSERT baseline, ledgerd's peak RSS over both phases (nil where
// /proc is not available), and how long its relay took to publish the
// payments phase's events before the baseline started.
type paymentsLevel struct {
	Concurrency      int        `json:"concurrency"`
	Payments         throughput `json:"payments"`
	Raw              throughput `json:"rawInsert"`
	PaymentsRawRatio float64    `json:"paymentsRawRatio"`
	ServerRSSPeakMB  *float64   `json:"serverRssPeakMb,omitempty"`
	RelayDrainMs     float64    `json:"relayDrainMs"`
	RelayCaughtUp    bool       `json:"relayCaughtUp"`
	// Keys is the same load with and without an Idempotency-Key, back to
	// back (-compare-keys); nil without.
	Keys *keyComparison `json:"keys,omitempty"`
}

// keyComparison is one level's payments phase keyed and plain, measured
// in one run.
type keyComparison struct {
	Keyed throughput `json:"keyed"`
	Plain throughput `json:"plain"`
	// KeyedPlainRatio is keyed ÷ plain requests per second; 0 when the
	// plain phase completed nothing.
	KeyedPlainRatio float64 `json:"keyedPlainRatio"`
}

func newKeyComparison(keyed, plain throughput) *keyComparison {
	k := &keyComparison{Keyed: keyed, Plain: plain}
	if plain.PerSecond > 0 {
		k.KeyedPlainRatio = keyed.PerSecond / plain.PerSecond
	}
	return k
}

// serverMemory is ledgerd's memory at the end of the run: RSS then, and
// VmHWM, its peak RSS over its whole life (setup included).
type serverMemory struct {
	PID      int      `json:"pid"`
	RSSEndMB *float64 `json:"rssEndMb,omitempty"`
	VmHWMMB  *float64 `json:"vmHwmMb,omitempty"`
}

// printPaymentsTable writes r for a person reading a terminal.
func printPaymentsTable(w io.Writer, r paymentsReport) {
	printHeader(w, r.Mode, r.Machine, r.Params.DurationSeconds)
	fmt.Fprintf(w, "%d partners, %s, ledgerd pool %d connections, raw row %d bytes (a stored payment.created event)\n\n",
		r.Params.Partners, keysNote(r.Params.IdempotencyKey), r.Params.LedgerdDBMaxConns, r.Params.RawPayloadBytes)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\tpayments\t\t\t\t\t\t\traw\t\t\t\t")
	fmt.Fprintln(tw, "conc\treq/s\tp50 ms\tp99 ms\tmax ms\trss MB\tcpu\t\tins/s\tp99 ms\tcpu\t\tpayments/raw\t")
	for _, l := range r.Levels {
		fmt.Fprintf(tw, "%d\t%.0f\t%.2f\t%.2f\t%.2f\t%s\t%s\t\t%.0f\t%.2f\t%s\t\t%.0f%%\t\n",
			l.Concurrency, l.Payments.PerSecond, l.Payments.P50Ms, l.Payments.P99Ms, l.Payments.MaxMs, optMB(l.ServerRSSPeakMB),
			pct(l.Payments.CPUBusy), l.Raw.PerSecond, l.Raw.P99Ms, pct(l.Raw.CPUBusy), 100*l.PaymentsRawRatio)
	}
	tw.Flush()
	printKeyComparison(w, r.Levels)
	if s := r.Server; s.VmHWMMB != nil {
		fmt.Fprintf(w, "\nledgerd (pid %d) at the end: RSS %s MB, VmHWM (peak over its life) %s MB\n", s.PID, optMB(s.RSSEndMB), optMB(s.VmHWMMB))
	}
	fmt.Fprintln(w)
	printTargets(w, r.Targets)
}

// keysNote says whether the POSTs carried an Idempotency-Key.
func keysNote(keyed bool) string {
	if keyed {
		return "an Idempotency-Key on every POST"
	}
	return "no Idempotency-Key"
}

// printKeyComparison writes the levels' keyed and plain phases, if any.
func printKeyComparison(w io.Writer, levels []paymentsLevel) {
	if !slices.ContainsFunc(levels, func(l paymentsLevel) bool { return l.Keys != nil }) {
		return
	}
	fmt.Fprintln(w, "\nthe same load with and without an Idempotency-Key, back to back:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "conc\tkeyed req/s\tp99 ms\tplain req/s\tp99 ms\tkeyed/plain\t")
	for _, l := range levels {
		if k := l.Keys; k != nil {
			fmt.Fprintf(tw, "%d\t%.0f\t%.2f\t%.0f\t%.2f\t%.0f%%\t\n", l.Concurrency, k.Keyed.PerSecond, k.Keyed.P99Ms,
				k.Plain.PerSecond, k.Plain.P99Ms, 100*k.KeyedPlainRatio)
		}
	}
	tw.Flush()
}

// optMB formats megabytes, "-" when unknown.
func optMB(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.0f", *v)
}
