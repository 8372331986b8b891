package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// lifecycleReport is what one lifecycle run measured, beside the other
// modes' reports: the same machine, target and memory records.
// Durations are milliseconds unless named seconds, rates per second,
// memory MB (10^6 bytes).
type lifecycleReport struct {
	Mode        string            `json:"mode"`
	StartedAt   time.Time         `json:"startedAt"`
	Machine     machine           `json:"machine"`
	Params      lifecycleParams   `json:"params"`
	Lifecycle   lifecycleResult   `json:"lifecycle"`
	PayoutCheck payoutCheck       `json:"payoutCheck"`
	Payments    lifecyclePayments `json:"payments"`
	Server      serverMemory      `json:"server"`
	// Workers is what ledgerd's workers did over the timed phase, load and
	// drain (scraped from /metrics before and after); WorkersError says
	// why it is missing.
	Workers      *workerCounts `json:"workers,omitempty"`
	WorkersError string        `json:"workersError,omitempty"`
	// Profile is what a settled payment cost (-profile-counts).
	Profile *profileCounts `json:"profile,omitempty"`
	Targets []target       `json:"targets"`
}

type lifecycleParams struct {
	DatabaseServer     string  `json:"databaseServer"`
	Database           string  `json:"database"`
	Kept               bool    `json:"kept"`
	NATSURL            string  `json:"natsUrl"`
	Stream             string  `json:"stream"`
	SubjectPrefix      string  `json:"subjectPrefix"`
	Rate               float64 `json:"rate"`
	Concurrency        int     `json:"concurrency"`
	DurationSeconds    float64 `json:"durationSeconds"`
	DrainSeconds       float64 `json:"drainSeconds"`
	Partners           int     `json:"partners"`
	IdempotencyKey     bool    `json:"idempotencyKey"` // every POST carries one
	LedgerdDBMaxConns  int     `json:"ledgerdDbMaxConns"`
	SandboxPayoutDelay string  `json:"sandboxPayoutDelay"`
	WebhookURL         string  `json:"webhookUrl"`
	PayoutSample       int     `json:"payoutSample"`
}

// lifecycleResult is the timed phase. A payment is created when POST
// /payments answered 201, deposited when its deposit answered 202,
// completed when its payment.success webhook arrived, lost when deposited
// but not completed by the end of the drain. Latency is deposit's 202 to
// success webhook; CompletedPerSecond is completed payments over the time
// from the first deposit to the last success webhook.
type lifecycleResult struct {
	Rate               float64       `json:"rate"`
	Concurrency        int           `json:"concurrency"`
	Issue              issueStats    `json:"issue"`
	Created            int           `json:"created"`
	Deposited          int           `json:"deposited"`
	Completed          int           `json:"completed"`
	Lost               int           `json:"lost"`
	CompletionSeconds  float64       `json:"completionSeconds"`
	CompletedPerSecond float64       `json:"completedPerSecond"`
	DrainSeconds       float64       `json:"drainSeconds"` // end of the load to the last success webhook
	P50Ms              float64       `json:"p50Ms"`
	P99Ms              float64       `json:"p99Ms"`
	MaxMs              float64       `json:"maxMs"`
	EarlyWebhooks      int           `json:"earlyWebhooks,omitempty"` // arrived before the deposit's answer: latency 0
	Webhooks           webhookStats  `json:"webhooks"`
	LostSample         []lostPayment `json:"lostSample,omitempty"`
	FirstError         string        `json:"firstError,omitempty"` // what stopped the load early
	ServerRSSPeakMB    *float64      `json:"serverRssPeakMb,omitempty"`
	CPUBusy            *float64      `json:"cpuBusy,omitempty"`   // share of all CPUs busy over load and drain, whoever used them
	ServerCPU          *float64      `json:"serverCpu,omitempty"` // ledgerd's share of all CPUs over load and drain
	BenchCPU           *float64      `json:"benchCpu,omitempty"`  // ledgerbench's own (client and webhook receiver)
	Create             latencyMs     `json:"create"`              // POST /payments
	Deposit            latencyMs     `json:"deposit"`             // POST /sandbox/payments/{id}/deposit
}

// latencyMs is a request's latency in milliseconds.
type latencyMs struct {
	P50Ms float64 `json:"p50Ms"`
	P99Ms float64 `json:"p99Ms"`
	MaxMs float64 `json:"maxMs"`
}

// requestLatency summarises d (sorting it).
func requestLatency(d []time.Duration) latencyMs {
	l := summarise(d)
	return latencyMs{P50Ms: ms(l.P50), P99Ms: ms(l.P99), MaxMs: ms(l.Max)}
}

// issueStats is how the open-loop schedule went: payments started, at what
// rate, and how many started more than one interval after they were due
// (all -concurrency slots busy).
type issueStats struct {
	Started   int     `json:"started"`
	Seconds   float64 `json:"seconds"`
	PerSecond float64 `json:"perSecond"`
	Late      int     `json:"late"`
	MaxLagMs  float64 `json:"maxLagMs"`
}

// lostPayment is a deposited payment without a success webhook, as
// ledgerd saw it at the end.
type lostPayment struct {
	ID    string `json:"id"`
	State string `json:"state"`
}

// payoutCheck is GET /sandbox/payouts for a random sample of deposited payments.
type payoutCheck struct {
	Checked    int              `json:"checked"`
	ExactlyOne int              `json:"exactlyOne"`
	Wrong      []payoutMismatch `json:"wrong,omitempty"`
	Error      string           `json:"error,omitempty"` // the request that stopped the check
}

type payoutMismatch struct {
	PaymentID string `json:"paymentId"`
	Items     int    `json:"items"`
	Calls     int64  `json:"calls"`
}

// lifecyclePayments is the POST /payments rate the lifecycle's is compared
// with: measured in this run (closed loop), or given by -payments-rate.
type lifecyclePayments struct {
	Given       bool        `json:"given"`
	Concurrency int         `json:"concurrency"`
	PerSecond   float64     `json:"perSecond"`
	Measured    *throughput `json:"measured,omitempty"`
	Error       string      `json:"error,omitempty"` // the request that stopped the phase
}

// lifecycleTargets are the lifecycle mode's acceptance targets: success
// webhook p99 under 250 ms at 300 payments/s with zero payout delay, none
// lost or duplicated, every delivery's signature valid (as a partner's
// receiver checks it), and each sampled payment paid out exactly once.
func lifecycleTargets(r lifecycleReport) []target {
	l := r.Lifecycle
	ts := []target{
		{Name: fmt.Sprintf("deposit→success webhook p99 ms at %g payments/s", l.Rate), Want: "< 250", Got: l.P99Ms,
			Met: l.P99Ms < 250 && l.Completed > 0},
		{Name: "lost payments (no success webhook)", Want: "= 0", Got: float64(l.Lost), Met: l.Lost == 0 && l.Deposited > 0},
		{Name: "duplicated success webhooks (same webhook-id)", Want: "= 0", Got: float64(l.Webhooks.DuplicateSuccess),
			Met: l.Webhooks.DuplicateSuccess == 0},
		{Name: "webhooks with a bad signature", Want: "= 0", Got: float64(l.Webhooks.BadSignatures),
			Met: l.Webhooks.BadSignatures == 0},
	}
	c := r.PayoutCheck
	ts = append(ts, target{Name: fmt.Sprintf("sampled payments with exactly one payout (of %d)", c.Checked),
		Want: fmt.Sprintf("= %d", c.Checked), Got: float64(c.ExactlyOne), Met: c.ExactlyOne == c.Checked && c.Checked > 0})
	return ts
}

// printLifecycleTable writes r for a person reading a terminal.
func printLifecycleTable(w io.Writer, r lifecycleReport) {
	printHeader(w, r.Mode, r.Machine, r.Params.DurationSeconds)
	fmt.Fprintf(w, "%d partners, %s, ledgerd pool %d connections, sandbox payout delay %s, webhooks to %s\n\n",
		r.Params.Partners, keysNote(r.Params.IdempotencyKey), r.Params.LedgerdDBMaxConns, r.Params.SandboxPayoutDelay, r.Params.WebhookURL)
	l := r.Lifecycle
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "rate/s\tstarted/s\tconc\tcreated\tdeposited\tcompleted\tcompleted/s\tp50 ms\tp99 ms\tmax ms\tlost\tdup\trss MB\tcpu\t")
	fmt.Fprintf(tw, "%g\t%.0f\t%d\t%d\t%d\t%d\t%.0f\t%.1f\t%.1f\t%.1f\t%d\t%d\t%s\t%s\t\n",
		l.Rate, l.Issue.PerSecond, l.Concurrency, l.Created, l.Deposited, l.Completed, l.CompletedPerSecond,
		l.P50Ms, l.P99Ms, l.MaxMs, l.Lost, l.Webhooks.DuplicateSuccess, optMB(l.ServerRSSPeakMB), pct(l.CPUBusy))
	tw.Flush()
	fmt.Fprintf(w, "\nlatency: deposit's 202 to the payment.success webhook; completed/s over %.2f s from the first deposit to the last success webhook (%.2f s after the load)\n",
		l.CompletionSeconds, l.DrainSeconds)
	fmt.Fprintf(w, "schedule: %d payments started over %.2f s, %d late by more than an interval (all %d slots busy), max lag %.1f ms\n",
		l.Issue.Started, l.Issue.Seconds, l.Issue.Late, l.Concurrency, l.Issue.MaxLagMs)
	fmt.Fprintf(w, "requests: POST /payments p50 %.1f ms, p99 %.1f ms; deposit p50 %.1f ms, p99 %.1f ms\ncpu over load and drain: ledgerd %s, ledgerbench %s of all CPUs; all busy %s (Postgres, NATS and anything else on the machine included)\n",
		l.Create.P50Ms, l.Create.P99Ms, l.Deposit.P50Ms, l.Deposit.P99Ms, pct(l.ServerCPU), pct(l.BenchCPU), pct(l.CPUBusy))
	h := l.Webhooks
	fmt.Fprintf(w, "webhooks: %d received (%s); duplicates %d (success %d), second success events %d, bad signatures %d, malformed %d\n",
		h.Received, byType(h.ByType), h.DuplicateAll, h.DuplicateSuccess, h.ExtraSuccess, h.BadSignatures, h.Malformed)
	if l.EarlyWebhooks > 0 {
		fmt.Fprintf(w, "%d success webhooks arrived before their deposit's answer (latency counted 0)\n", l.EarlyWebhooks)
	}
	for _, p := range l.LostSample {
		fmt.Fprintf(w, "lost: %s: %s\n", p.ID, p.State)
	}
	if l.FirstError != "" {
		fmt.Fprintf(w, "load stopped early: %s\n", l.FirstError)
	}
	printWorkerCounts(w, r.Workers, r.WorkersError)
	c := r.PayoutCheck
	fmt.Fprintf(w, "payouts: %d random deposited payments checked (GET /sandbox/payouts), %d with exactly one payout item\n", c.Checked, c.ExactlyOne)
	for _, m := range c.Wrong {
		fmt.Fprintf(w, "payout mismatch: %s has %d payout items (%d rail calls)\n", m.PaymentID, m.Items, m.Calls)
	}
	if c.Error != "" {
		fmt.Fprintf(w, "payout check stopped: %s\n", c.Error)
	}
	if e := r.Payments.Error; e != "" {
		fmt.Fprintf(w, "POST /payments phase failed: %s\n", e)
	}
	if p := r.Payments; p.Given {
		fmt.Fprintf(w, "POST /payments at concurrency %d: %.0f req/s (given by -payments-rate)\n", p.Concurrency, p.PerSecond)
	} else if m := p.Measured; m != nil {
		fmt.Fprintf(w, "POST /payments closed loop at concurrency %d, same server: %.0f req/s, p50 %.1f ms, p99 %.1f ms over %.1f s\n",
			p.Concurrency, p.PerSecond, m.P50Ms, m.P99Ms, m.Seconds)
	}
	if l.Rate != 300 {
		fmt.Fprintf(w, "note: the latency target is at -rate 300\n")
	}
	if s := r.Server; s.VmHWMMB != nil {
		fmt.Fprintf(w, "ledgerd (pid %d) at the end: RSS %s MB, VmHWM (peak over its life) %s MB\n", s.PID, optMB(s.RSSEndMB), optMB(s.VmHWMMB))
	}
	fmt.Fprintln(w)
	printTargets(w, r.Targets)
}

// byType lists webhook counts by type, in type order.
func byType(m map[string]int) string {
	types := make([]string, 0, len(m))
	for t := range m {
		types = append(types, t)
	}
	slices.Sort(types)
	parts := make([]string, len(types))
	for i, t := range types {
		parts[i] = fmt.Sprintf("%s %d", t, m[t])
	}
	return strings.Join(parts, ", ")
}

// printWorkerCounts says who took the lifecycle's steps during the run.
func printWorkerCounts(w io.Writer, c *workerCounts, scrapeErr string) {
	if c == nil {
		fmt.Fprintf(w, "workers: ledgerd's /metrics could not be read: %s\n", scrapeErr)
		return
	}
	fmt.Fprintf(w, "workers: %s\n", c.summary())
}
