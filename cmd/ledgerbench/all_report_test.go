package main

import (
	"io"
	"strings"
	"testing"
	"time"
)

// sampleAllReport is a run whose append, payments and replay measured
// (their targets judged by the modes' own functions) and whose lifecycle
// failed before it had figures.
func sampleAllReport() allReport {
	rss := func(v float64) *float64 { return &v }
	app := report{Mode: "append", Params: params{DurationSeconds: 10, RawPayloadBytes: 412},
		Levels: []level{
			{Concurrency: 1, Append: throughput{PerSecond: 524, P50Ms: 1.5, P99Ms: 7.8}, Raw: throughput{PerSecond: 4314, P99Ms: 0.9},
				AppendRawRatio: 524.0 / 4314, Relay: &levelRelay{LagP99Ms: 17, FromCommitP99Ms: 11.5}},
			{Concurrency: 64, Append: throughput{PerSecond: 5134, P50Ms: 11, P99Ms: 41.6}, Raw: throughput{PerSecond: 17173, P99Ms: 9.2},
				AppendRawRatio: 5134.0 / 17173, Relay: &levelRelay{LagP99Ms: 331, Rounds: relayRounds{Busy: 1520, EventsPerRound: 67.6,
					IntervalMs: [2]*float64{rss(20.3), rss(56.2)}, SequenceMs: [2]*float64{rss(14.4), rss(39.4)}, PublishMs: [2]*float64{rss(3), nil}}}},
		},
		Relay: &relayRun{Appended: 100820, Published: 100820, Received: 100820, KeptUp: true}}
	app.Targets = targets(app)
	pay := paymentsReport{Mode: "payments", Params: paymentsParams{DurationSeconds: 10, Partners: 8, LedgerdDBMaxConns: 32, RawPayloadBytes: 1210},
		Levels: []paymentsLevel{{Concurrency: 64, Payments: throughput{PerSecond: 905, P50Ms: 60, P99Ms: 162},
			Raw: throughput{PerSecond: 4857, P99Ms: 76}, PaymentsRawRatio: 905.0 / 4857, ServerRSSPeakMB: rss(55)}},
		Server: serverMemory{RSSEndMB: rss(48), VmHWMMB: rss(57)}}
	pay.Targets = paymentsTargets(pay)
	rebuild := func(rate, peak float64) replayRun {
		return replayRun{EventsPerSecond: rate, Seconds: 29.4, Memory: replayMemory{PeakRSSMB: peak, PeakHeapMB: 40}}
	}
	rep := replayReport{Mode: "replay", AuditVerify: "not measured",
		Sizes: []replaySize{{Events: 100000, Rebuilds: []replayRun{rebuild(22823, 126)}},
			{Events: 1000000, Rebuilds: []replayRun{rebuild(34047, 151), rebuild(31546, 149)}}}}
	rep.Targets = replayTargets(rep.Sizes)
	return allReport{
		StartedAt: time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC), Seconds: 492,
		Command: "go run ./cmd/ledgerbench all -duration 10s",
		Host: host{machine: machine{NumCPU: 2, GOOS: "linux", GOARCH: "amd64", GoVersion: "go1.26.8",
			PostgresVersion: "16.4", NATSVersion: "2.10.22", LoadAverage: "6.74 4.89 2.40", CPUReferenceUs: 23.44, SyscallReferenceNs: 96.2,
			PostgresSettings: map[string]string{"synchronous_commit": "on", "fsync": "on"}},
			CPUModel: "AMD EPYC", MemoryMB: 25276.5, Kernel: "6.18.44", Commit: "afd5f18-dirty"},
		Append:    modeResult[report]{Report: &app, Seconds: 75},
		Payments:  modeResult[paymentsReport]{Report: &pay, Seconds: 95},
		Lifecycle: modeResult[lifecycleReport]{Seconds: 12, Error: "warm-up payment of partner 0: 500 Internal Server Error"},
		Replay:    modeResult[replayReport]{Report: &rep, Seconds: 310},
	}
}

func TestRenderMarkdown(t *testing.T) {
	t.Parallel()
	md := renderMarkdown(sampleAllReport())
	for _, want := range []string{
		"do not edit by hand",
		"took 8m12s: 1 of 4 modes failed; 3 of 8 targets met.",
		"```sh\ngo run ./cmd/ledgerbench all -duration 10s\n```",
		"| CPU | 2 × AMD EPYC |",
		"| Memory | 25.3 GB |",
		"| OS, kernel | linux/amd64, 6.18.44 |",
		"| Load average before the run (1, 5, 15 min) | 6.74 4.89 2.40 |",
		"| CPU reference: a payment's JSON encoded and decoded on one core (compare runs of different days by it) | 23.4 µs |",
		"| System call reference: one getppid (a rebuild makes over a million system calls) | 96 ns |",
		"| Postgres | 16.4 (synchronous_commit=on, fsync=on) |",
		"| NATS server | 2.10.22 |",
		"| Commit | `afd5f18-dirty` |",
		// Append: ratio beside both absolute rates, per level.
		"| 1 | 12% | 524 | 4,314 | 1.50 | 7.80 | 0.90 | 17.0 | 11.5 | - |",
		"| 64 | 30% | 5,134 | 17,173 | 11.00 | 41.60 | 9.20 | 331.0 | 0.0 | - |",
		"Relay: 100820 appended, 100820 published, 100820 received (0 bad); kept up: yes.",
		// Relay rounds: per level, a pair of percentiles each, "-" where none.
		"| concurrency | rounds | events a round | interval | sequencing | publishing |",
		"| 1 | 0 | 0 | - / - | - / - | - / - |",
		"| 64 | 1,520 | 68 | 20.3 / 56.2 | 14.4 / 39.4 | 3.0 / - |",
		"| append/raw at concurrency 64 | >= 0.5 | 0.299 | **MISSED** |",
		"| relay kept up (published == appended) | 1 | 1 | met |",
		// Payments.
		"| 64 | 19% | 905 | 4,857 | 60.00 | 162.00 | 76.00 | 55 | - |",
		"| ledgerd RSS peak MB at concurrency 64 | < 300 | 55 | met |",
		// Lifecycle failed: said so, no figures.
		"**Failed** after 12s: `warm-up payment of partner 0: 500 Internal Server Error`",
		// Replay: every run of every N, with its peak RSS.
		"| 100,000 | 1 | 22,823 | 29.4 | 126 | 40 |",
		"| 1,000,000 | 2 | 31,546 | 29.4 | 149 | 40 |",
		"| rebuild events/s at 1000000 events | >= 100000 | 34,047 | **MISSED** |",
		"| peak RSS at 1000000 / at 100000 events | <= 1.5 (flat in N) | 1.2 | met |",
		// Memory gathers every mode's.
		"| ledgerd, payments at concurrency 64: peak RSS | 55 |",
		"| ledgerd, payments run: VmHWM | 57 |",
		"| ledgerbench, rebuild of 1,000,000 events: peak RSS | 151 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q; got:\n%s", want, md)
		}
	}
	if strings.Contains(md, "completed / creation") {
		t.Errorf("the failed lifecycle has a figures table:\n%s", md)
	}
	order := []string{"## Machine", "## Versions", "## Append", "## Payments", "## Lifecycle", "## Replay", "## Memory"}
	last := -1
	for _, h := range order {
		i := strings.Index(md, h)
		if i <= last {
			t.Fatalf("section %q at %d, want after %d (order %v)", h, i, last, order)
		}
		last = i
	}
}

func TestRenderMarkdownLifecycle(t *testing.T) {
	t.Parallel()
	r := sampleAllReport()
	lc := lifecycleReport{Params: lifecycleParams{DurationSeconds: 10, SandboxPayoutDelay: "0s"},
		Lifecycle: lifecycleResult{Rate: 200, Concurrency: 64, Issue: issueStats{PerSecond: 199.6}, Deposited: 2000, Completed: 2000,
			CompletedPerSecond: 79, P50Ms: 6900, P99Ms: 13800, MaxMs: 14100},
		PayoutCheck: payoutCheck{Checked: 20, ExactlyOne: 20},
		Payments:    lifecyclePayments{Concurrency: 64, PerSecond: 658}}
	lc.Targets = lifecycleTargets(lc)
	r.Lifecycle = modeResult[lifecycleReport]{Report: &lc, Seconds: 60}
	md := renderMarkdown(r)
	for _, want := range []string{
		"| 79 | 658 | 12% | 200 | 2000 of 2000 | 6900.0 | 13800.0 | 14100.0 | 0 | 0 | - | - |",
		"| deposit→success webhook p99 ms at 200 payments/s | < 250 | 13,800 | **MISSED** |",
		"| lost payments (no success webhook) | = 0 | 0 | met |",
		"Payouts: 20 of 20 sampled payments paid out exactly once.",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q; got:\n%s", want, md)
		}
	}
}

func TestParseAllFlags(t *testing.T) {
	t.Parallel()
	c, err := parseAllFlags([]string{"-quick", "-duration", "5s", "-events", "1000"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	// Given settings win over -quick's; -quick's reach the modes it sets.
	if c.append.duration != 5*time.Second || c.payments.duration != 5*time.Second || c.lifecycle.duration != 5*time.Second {
		t.Errorf("durations %v %v %v, want 5s each", c.append.duration, c.payments.duration, c.lifecycle.duration)
	}
	if len(c.replay.sizes) != 1 || c.replay.sizes[0] != 1000 || c.replay.runs != 1 {
		t.Errorf("replay sizes %v runs %d, want [1000] and 1", c.replay.sizes, c.replay.runs)
	}
	if c.lifecycle.paymentsDuration != 2*time.Second {
		t.Errorf("lifecycle -payments-duration %v, want -quick's 2s", c.lifecycle.paymentsDuration)
	}

	// Without settings, every mode keeps its own defaults, but for all's
	// one partner.
	d, err := parseAllFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if d.payments.partners != 1 || d.lifecycle.partners != 1 {
		t.Errorf("partners: payments %d, lifecycle %d, want 1 each", d.payments.partners, d.lifecycle.partners)
	}
	if d.append.duration != 10*time.Second || d.lifecycle.rate != 300 || d.replay.runs != 2 ||
		len(d.replay.sizes) != 1 || d.replay.sizes[0] != 1_000_000 || d.out != "docs/benchmarks.md" {
		t.Errorf("defaults: append %v, rate %g, replay %v × %d, out %s", d.append.duration, d.lifecycle.rate,
			d.replay.sizes, d.replay.runs, d.out)
	}

	if _, err := parseAllFlags([]string{"-duration", "-1s"}, io.Discard); err == nil {
		t.Error("a negative -duration was accepted")
	}
}

func TestCommandLine(t *testing.T) {
	t.Parallel()
	got := commandLine([]string{"-quick", "-database-url", "postgres://u@h/db?sslmode=disable", "-out", "my report.md"})
	want := `go run ./cmd/ledgerbench all -quick -database-url 'postgres://u@h/db?sslmode=disable' -out 'my report.md'`
	if got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
