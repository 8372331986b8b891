package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledger/ledger/cmd/internal/benchkit"
	"github.com/ledger/ledger/projections/rebuild"
)

// The replay mode: for each history size, seed that
// many events into a database of its own, then time `projections rebuild`
// (every read model, rebuild.Run, the code ledgerctl runs) and
// report its events per second and this process's peak memory, so runs at
// 100k and 1M events show whether memory stays flat in N.
// After the rebuilds it runs `ledgerctl audit verify` (the built binary:
// the command lives in ledgerctl's main package) over the same history and
// reports its events per second and its own peak memory.

// replayConfig is the replay mode's flags.
type replayConfig struct {
	databaseURL string
	sizes       []int64
	runs        int
	connections int
	out         string
	keep        bool
	cpuProfile  string
	profile     io.Writer // open cpuProfile, nil without
	audit       bool
	ledgerctl   string // binary; built when empty and audit is on
}

func parseReplayFlags(args []string, stderr io.Writer) (replayConfig, error) {
	var c replayConfig
	fs := flag.NewFlagSet("ledgerbench replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.databaseURL, "database-url", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable",
		"Postgres server to benchmark; a database ledgerbench_<random> is created on it per size")
	sizes := fs.String("events", "1000000", "comma-separated history sizes (events seeded), e.g. 100000,1000000")
	fs.IntVar(&c.runs, "runs", 2, "rebuilds per size (the first into empty read models, the next ones replacing full ones; 0: seed only, with -keep)")
	fs.IntVar(&c.connections, "connections", 0, "apply connections of the rebuild (0: its default)")
	fs.StringVar(&c.out, "out", "bench-replay.json", "JSON report path")
	fs.BoolVar(&c.keep, "keep", false, "keep the databases for inspection")
	fs.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile of the rebuilds (not the seeding) to this file")
	fs.BoolVar(&c.audit, "audit", true, "after the rebuilds of each size, time ledgerctl audit verify over the same history")
	fs.StringVar(&c.ledgerctl, "ledgerctl", "", "ledgerctl binary for -audit (default: go build ./cmd/ledgerctl)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	for _, f := range strings.Split(*sizes, ",") {
		n, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
		if err != nil || n <= 0 {
			return c, fmt.Errorf("-events: %q is not a positive count", f)
		}
		c.sizes = append(c.sizes, n)
	}
	if c.runs < 0 {
		return c, errors.New("-runs must not be negative")
	}
	return c, nil
}

// replayReport is the replay mode's JSON report. Rates are per second,
// memory in MB (10^6 bytes).
type replayReport struct {
	Mode        string       `json:"mode"`
	StartedAt   time.Time    `json:"startedAt"`
	Machine     machine      `json:"machine"`
	Params      replayParams `json:"params"`
	Sizes       []replaySize `json:"sizes"`
	AuditVerify string       `json:"auditVerify"`
	Targets     []target     `json:"targets"`
	Notes       []string     `json:"notes"`
}

type replayParams struct {
	DatabaseServer string  `json:"databaseServer"`
	Sizes          []int64 `json:"sizes"`
	Runs           int     `json:"runs"`
	Connections    int     `json:"connections"`
}

type replaySize struct {
	Events   int64        `json:"events"`
	Database string       `json:"database"`
	Seed     seedStats    `json:"seed"`
	Rebuilds []replayRun  `json:"rebuilds"`
	Rows     rowsPerTable `json:"rows"` // after the last rebuild
	Audit    *replayAudit `json:"auditVerify,omitempty"`
}

type rowsPerTable map[string]int64

// replayRun is one timed rebuild.
type replayRun struct {
	Seconds         float64      `json:"seconds"`
	EventsPerSecond float64      `json:"eventsPerSecond"`
	Events          int64        `json:"events"`
	Statements      int64        `json:"statements"`    // projector statements (catch-up)
	RowsCopied      int64        `json:"rowsCopied"`    // rows the fold wrote with COPY
	ReplaySeconds   float64      `json:"replaySeconds"` // the bulk replay
	FinishSeconds   float64      `json:"finishSeconds"` // logging, indexes, foreign keys, analyze
	LockHeldMs      float64      `json:"lockHeldMs"`
	ReplayRate      float64      `json:"replayEventsPerSecond"` // events of the bulk round over its time
	Memory          replayMemory `json:"memory"`
	ReplacedFull    bool         `json:"replacedFullReadModels"`
	CPU             replayCPU    `json:"cpu"`
}

// replayCPU is the CPU one rebuild used, which, unlike its wall time, does
// not depend on what else the machine ran: this process's, and that of the
// Postgres backends serving the benchmark's database (sampled from /proc
// every 50 ms, so a backend living less than that is missed; the WAL
// writer and checkpointer are not counted). CPUBoundRate is the rate the
// rebuild's own CPU need allows on this machine's cores, were they idle.
type replayCPU struct {
	GoSeconds       float64  `json:"goSeconds"`
	PostgresSeconds float64  `json:"postgresSeconds"`
	PerEventUs      float64  `json:"perEventUs"`
	CPUBoundRate    float64  `json:"cpuBoundEventsPerSecond"`
	MachineBusy     *float64 `json:"machineBusy,omitempty"` // share of all CPUs busy during the rebuild, whoever used them
	Backends        int      `json:"backends"`
}

// replayMemory is this process's memory during one rebuild: the peak
// resident set (VmHWM, reset before the run), the Go heap's peak in use,
// and what the Go runtime got from the OS.
type replayMemory struct {
	PeakRSSMB     float64 `json:"peakRssMB"`
	PeakHeapMB    float64 `json:"peakHeapInUseMB"`
	RuntimeSysMB  float64 `json:"runtimeSysMB"`
	RSSFromVmHWM  bool    `json:"rssFromVmHWM"` // false: sampled VmRSS (VmHWM could not be reset)
	HeapSamples   int     `json:"heapSamples"`
	RSSBaselineMB float64 `json:"rssBeforeMB"`
}

// runReplay is the replay mode: it measures, prints the table and writes
// the JSON report.
func runReplay(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseReplayFlags(args, stderr)
	if err != nil {
		return err
	}
	rep, err := measureReplay(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	printReplay(stdout, *rep)
	return benchkit.WriteJSON(cfg.out, rep)
}

// measureReplay seeds and rebuilds each history size of cfg.
func measureReplay(ctx context.Context, cfg replayConfig, stderr io.Writer) (*replayReport, error) {
	rep := replayReport{Mode: "replay", StartedAt: time.Now().UTC(),
		Params: replayParams{DatabaseServer: redactURL(cfg.databaseURL), Sizes: cfg.sizes, Runs: cfg.runs,
			Connections: cfg.connections},
		Notes: []string{
			"rebuild = rebuild.Run(\"all\"), what ledgerctl projections rebuild runs: shadow tables, bulk replay (each stream projected by the one fold, its rows COPYed), indexes and foreign keys, catch-up, locked swap",
			"events are seeded sequenced (positions and hash chains) with COPY; the read models start empty, so the first rebuild fills them and later ones replace full ones",
			"memory is this process's (Postgres's is not counted); peak RSS is VmHWM after writing 5 to /proc/self/clear_refs",
		}}
	cleanup := context.WithoutCancel(ctx)
	if cfg.cpuProfile != "" {
		f, err := os.Create(cfg.cpuProfile)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		cfg.profile = f
	}
	if cfg.audit && cfg.runs > 0 && cfg.ledgerctl == "" {
		dir, err := os.MkdirTemp("", "ledgerbench-replay-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		bins, err := benchkit.BuildCommands(ctx, dir, stderr, "ledgerctl")
		if err != nil {
			return nil, err
		}
		cfg.ledgerctl = bins[0]
	}
	for i, n := range cfg.sizes {
		size, err := replayOne(ctx, cleanup, cfg, n, stderr, i == 0, &rep)
		if err != nil {
			return nil, err
		}
		rep.Sizes = append(rep.Sizes, size)
	}
	rep.AuditVerify = auditSummary(rep.Sizes)
	rep.Targets = replayTargets(rep.Sizes)
	return &rep, nil
}

// replayOne seeds n events into a new database and times the rebuilds.
func replayOne(ctx, cleanup context.Context, cfg replayConfig, n int64, stderr io.Writer, first bool, rep *replayReport) (size replaySize, err error) {
	size = replaySize{Events: n, Database: "ledgerbench_" + randomHex(6)}
	if err := createDatabase(ctx, cfg.databaseURL, size.Database); err != nil {
		return size, err
	}
	if !cfg.keep {
		defer func() { err = errors.Join(err, dropDatabase(cleanup, cfg.databaseURL, size.Database)) }()
	}
	pool, err := openBenchPool(ctx, cfg.databaseURL, size.Database, 8)
	if err != nil {
		return size, err
	}
	defer pool.Close()
	if first {
		if rep.Machine, err = describeReplayMachine(ctx, pool); err != nil {
			return size, err
		}
	}
	fmt.Fprintf(stderr, "replay: seeding %d events into %s\n", n, size.Database)
	if size.Seed, err = seedEvents(ctx, pool, n); err != nil {
		return size, err
	}
	fmt.Fprintf(stderr, "replay: seeded %d events (%d payments, %d tenants) in %.1fs, %.0f/s\n",
		size.Seed.Events, size.Seed.Payments, size.Seed.Tenants, size.Seed.Seconds, size.Seed.PerSecond)
	// The rebuilds get connections of their own, as ledgerctl's process
	// has: on the seeding's connections (one of which COPYed the whole
	// history) the same rebuilds ran slower than on a fresh pool or in
	// ledgerctl on the same database (docs/performance.md, "Replay"), and
	// a benchmark measures the rebuild as an operator runs it.
	pool.Close()
	if pool, err = benchkit.OpenPool(ctx, cfg.databaseURL, size.Database, 8); err != nil {
		return size, err
	}
	defer pool.Close()
	for run := range cfg.runs {
		// Each rebuild starts from a settled database, as the first does
		// after the seeding's checkpoint: left to the checkpointer and the
		// kernel, the previous rebuild's writes (its tables and WAL) were
		// flushed during the next one, whose own WAL flushes then waited
		// behind them.
		if run > 0 {
			if _, err := pool.Exec(ctx, `CHECKPOINT`); err != nil {
				return size, fmt.Errorf("replay: checkpoint between rebuilds: %w", err)
			}
		}
		r, rows, err := timeRebuild(ctx, pool, cfg, stderr)
		if err != nil {
			return size, err
		}
		r.ReplacedFull = run > 0
		size.Rebuilds = append(size.Rebuilds, r)
		size.Rows = rows
		fmt.Fprintf(stderr, "replay: rebuild %d of %d events: %.1fs, %.0f events/s, peak RSS %.0f MB\n",
			run+1, r.Events, r.Seconds, r.EventsPerSecond, r.Memory.PeakRSSMB)
	}
	if got := size.Rows["payments"]; cfg.runs > 0 && got != size.Seed.Payments {
		return size, fmt.Errorf("replay: rebuilt payments has %d rows, %d payments were seeded", got, size.Seed.Payments)
	}
	if cfg.audit && cfg.runs > 0 {
		dbURL, err := benchkit.DatabaseURLFor(cfg.databaseURL, size.Database)
		if err != nil {
			return size, err
		}
		fmt.Fprintf(stderr, "replay: ledgerctl audit verify over %d events\n", n)
		a, err := timeAuditVerify(ctx, cfg.ledgerctl, dbURL)
		if err != nil {
			return size, err
		}
		size.Audit = &a
		fmt.Fprintf(stderr, "replay: audit verify: %.1fs, %.0f events/s, peak RSS %.0f MB, passed %v\n",
			a.Seconds, a.EventsPerSecond, a.PeakRSSMB, a.Passed)
	}
	return size, nil
}

// timeRebuild runs one rebuild of every read model and measures it.
func timeRebuild(ctx context.Context, pool *pgxpool.Pool, cfg replayConfig, stderr io.Writer) (replayRun, rowsPerTable, error) {
	runtime.GC()
	cpu := watchCPU(ctx, pool)
	if cfg.profile != nil {
		if err := pprof.StartCPUProfile(cfg.profile); err == nil {
			defer pprof.StopCPUProfile()
		}
	}
	mem := watchMemory()
	restoreGC := rebuild.WithGC() // as ledgerctl projections rebuild runs
	stats, err := rebuild.RunWith(ctx, pool, "all", rebuild.Options{
		Connections: cfg.connections,
		Progress: func(p rebuild.Progress) {
			fmt.Fprintf(stderr, "  %-8s %9d events  %6.1fs\n", p.Phase, p.Events, p.Elapsed.Seconds())
		}})
	restoreGC()
	m := mem.stop()
	c := cpu.stop()
	if err != nil {
		return replayRun{}, nil, err
	}
	r := replayRun{Seconds: stats.Total.Seconds(), EventsPerSecond: stats.EventsPerSecond(), Events: stats.Events,
		Statements: stats.Statements, RowsCopied: stats.Rows, ReplaySeconds: stats.Replay.Seconds(), FinishSeconds: stats.Finish.Seconds(),
		LockHeldMs: float64(stats.LockHeld.Microseconds()) / 1000, Memory: m, CPU: c}
	if stats.Events > 0 {
		total := c.GoSeconds + c.PostgresSeconds
		r.CPU.PerEventUs = total / float64(stats.Events) * 1e6
		if total > 0 {
			r.CPU.CPUBoundRate = float64(stats.Events) / (total / float64(runtime.NumCPU()))
		}
	}
	if bulk := stats.Events - stats.CatchUp - stats.Locked; stats.Replay > 0 {
		r.ReplayRate = float64(bulk) / stats.Replay.Seconds()
	}
	return r, stats.Tables, nil
}

// memoryWatch samples the Go heap while a rebuild runs.
type memoryWatch struct {
	done     chan struct{}
	wg       sync.WaitGroup
	mu       sync.Mutex
	peakHeap uint64
	sys      uint64
	samples  int
	hwmReset bool
	baseline uint64
	peakRSS  uint64 // sampled VmRSS, the fallback when VmHWM cannot be reset
}

func watchMemory() *memoryWatch {
	w := &memoryWatch{done: make(chan struct{})}
	// Writing 5 to clear_refs resets VmHWM to the current RSS (Linux 4.0+),
	// so VmHWM afterwards is the rebuild's own peak, not the seeding's.
	w.hwmReset = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
	if m, err := readProcMemory(os.Getpid()); err == nil {
		w.baseline = m.RSS
	}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			w.sample()
			select {
			case <-w.done:
				return
			case <-t.C:
			}
		}
	}()
	return w
}

func (w *memoryWatch) sample() {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m, _ := readProcMemory(os.Getpid())
	w.mu.Lock()
	defer w.mu.Unlock()
	w.peakHeap = max(w.peakHeap, ms.HeapInuse)
	w.sys = max(w.sys, ms.Sys)
	w.peakRSS = max(w.peakRSS, m.RSS)
	w.samples++
}

func (w *memoryWatch) stop() replayMemory {
	close(w.done)
	w.wg.Wait()
	w.sample()
	m := replayMemory{PeakHeapMB: megabytes(w.peakHeap), RuntimeSysMB: megabytes(w.sys), HeapSamples: w.samples,
		RSSBaselineMB: megabytes(w.baseline), PeakRSSMB: megabytes(w.peakRSS)}
	if pm, err := readProcMemory(os.Getpid()); err == nil && w.hwmReset {
		m.PeakRSSMB, m.RSSFromVmHWM = megabytes(pm.HWM), true
	}
	return m
}

// cpuWatch measures the CPU of this process and of the database's backends.
type cpuWatch struct {
	done    chan struct{}
	wg      sync.WaitGroup
	machine cpuTimes
	self    float64
	first   map[int]float64 // backend pid -> its CPU seconds when first seen
	last    map[int]float64 // backend pid -> its CPU seconds when last seen
}

func watchCPU(ctx context.Context, pool *pgxpool.Pool) *cpuWatch {
	w := &cpuWatch{done: make(chan struct{}), machine: readCPUTimes(), self: procCPUSeconds(os.Getpid()),
		first: map[int]float64{}, last: map[int]float64{}}
	w.sample(ctx, pool, true)
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-w.done:
				w.sample(context.WithoutCancel(ctx), pool, false)
				return
			case <-t.C:
				w.sample(ctx, pool, false)
			}
		}
	}()
	return w
}

// sample reads the CPU of every backend connected to the pool's database.
// A backend first seen after the start counts from zero: it was born
// during the rebuild.
func (w *cpuWatch) sample(ctx context.Context, pool *pgxpool.Pool, start bool) {
	rows, err := pool.Query(ctx, `SELECT pid FROM pg_stat_activity WHERE datname = current_database()`)
	if err != nil {
		return
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return
	}
	for _, pid := range pids {
		v := procCPUSeconds(int(pid))
		if v < 0 {
			continue
		}
		if _, ok := w.first[int(pid)]; !ok {
			w.first[int(pid)] = 0
			if start {
				w.first[int(pid)] = v
			}
		}
		w.last[int(pid)] = v
	}
}

func (w *cpuWatch) stop() replayCPU {
	close(w.done)
	w.wg.Wait()
	c := replayCPU{GoSeconds: procCPUSeconds(os.Getpid()) - w.self, MachineBusy: readCPUTimes().busySince(w.machine)}
	for pid, v := range w.last {
		if d := v - w.first[pid]; d > 0 {
			c.PostgresSeconds += d
			c.Backends++
		}
	}
	return c
}

// procCPUSeconds is a process's user and system CPU time from
// /proc/<pid>/stat, or -1 where it cannot be read.
func procCPUSeconds(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return -1
	}
	s := string(b)
	end := strings.LastIndexByte(s, ')')
	if end < 0 {
		return -1
	}
	f := strings.Fields(s[end+1:])
	if len(f) < 13 { // after the name: state, then utime and stime are fields 12 and 13
		return -1
	}
	utime, err1 := strconv.ParseFloat(f[11], 64)
	stime, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		return -1
	}
	return (utime + stime) / clockTicks
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's times: 100 on
// every Linux ledgerbench runs on.
const clockTicks = 100

// describeReplayMachine is describeMachine without NATS, which this mode
// does not use.
func describeReplayMachine(ctx context.Context, pool *pgxpool.Pool) (machine, error) {
	return describeProcessMachine(ctx, pool, append(slices.Clip(reportedSettings), "max_wal_size", "work_mem", "maintenance_work_mem"))
}

// redactURL drops a password from a database URL for the report.
func redactURL(u string) string {
	if at := strings.LastIndex(u, "@"); at > 0 {
		if scheme := strings.Index(u, "://"); scheme > 0 && scheme < at {
			creds := u[scheme+3 : at]
			if user, _, ok := strings.Cut(creds, ":"); ok {
				return u[:scheme+3] + user + ":xxx" + u[at:]
			}
		}
	}
	return u
}

// replayTargets are the replay mode's acceptance targets: rebuild at
// 100,000 events/s or more (the best run of the largest size), and memory
// flat in N (the largest size's peak RSS within 1.5 times the smallest's,
// when two sizes ran).
func replayTargets(sizes []replaySize) []target {
	if len(sizes) == 0 {
		return nil
	}
	largest, smallest := sizes[0], sizes[0]
	for _, s := range sizes {
		if s.Events > largest.Events {
			largest = s
		}
		if s.Events < smallest.Events {
			smallest = s
		}
	}
	best := func(s replaySize) (rate, rss float64) {
		for _, r := range s.Rebuilds {
			rate, rss = max(rate, r.EventsPerSecond), max(rss, r.Memory.PeakRSSMB)
		}
		return rate, rss
	}
	rate, largestRSS := best(largest)
	ts := []target{{Name: fmt.Sprintf("rebuild events/s at %d events", largest.Events), Want: ">= 100000", Got: rate, Met: rate >= 100_000}}
	if largest.Events > smallest.Events {
		_, smallestRSS := best(smallest)
		ratio := largestRSS / smallestRSS
		ts = append(ts, target{Name: fmt.Sprintf("peak RSS at %d / at %d events", largest.Events, smallest.Events),
			Want: "<= 1.5 (flat in N)", Got: ratio, Met: ratio <= 1.5})
		if largest.Audit != nil && smallest.Audit != nil && smallest.Audit.PeakRSSMB > 0 {
			ratio := largest.Audit.PeakRSSMB / smallest.Audit.PeakRSSMB
			ts = append(ts, target{Name: fmt.Sprintf("audit verify peak RSS at %d / at %d events", largest.Events, smallest.Events),
				Want: "<= 1.5 (flat in N)", Got: ratio, Met: ratio <= 1.5})
		}
	}
	for _, s := range sizes {
		if s.Audit != nil {
			passed := 0.0
			if s.Audit.Passed {
				passed = 1
			}
			ts = append(ts, target{Name: fmt.Sprintf("audit verify passes at %d events", s.Events), Want: "1", Got: passed, Met: s.Audit.Passed})
		}
	}
	return ts
}

// printReplay writes the report as a table.
func printReplay(w io.Writer, r replayReport) {
	m := r.Machine
	fmt.Fprintf(w, "ledgerbench replay: %d CPU %s/%s %s, Postgres %s (synchronous_commit=%s, shared_buffers=%s)\n",
		m.NumCPU, m.GOOS, m.GOARCH, m.GoVersion, m.PostgresVersion, m.PostgresSettings["synchronous_commit"], m.PostgresSettings["shared_buffers"])
	fmt.Fprintf(w, "load average before the run: %s; %s\n\n", m.LoadAverage, m.references())
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "events\tseed ev/s\trun\trebuild s\tev/s\treplay ev/s\tfinish s\tlock ms\tpeak RSS MB\tpeak heap MB\tGo sys MB\tCPU µs/ev (Go+PG)\tCPU-bound ev/s\tmachine busy\t")
	for _, s := range r.Sizes {
		for i, run := range s.Rebuilds {
			seed := ""
			if i == 0 {
				seed = fmt.Sprintf("%.0f", s.Seed.PerSecond)
			}
			fmt.Fprintf(tw, "%d\t%s\t%d\t%.1f\t%.0f\t%.0f\t%.1f\t%.1f\t%.0f\t%.0f\t%.0f\t%.1f (%.1f+%.1f)\t%.0f\t%s\t\n", s.Events, seed, i+1, run.Seconds,
				run.EventsPerSecond, run.ReplayRate, run.FinishSeconds, run.LockHeldMs,
				run.Memory.PeakRSSMB, run.Memory.PeakHeapMB, run.Memory.RuntimeSysMB, run.CPU.PerEventUs,
				run.CPU.GoSeconds/float64(max(run.Events, 1))*1e6, run.CPU.PostgresSeconds/float64(max(run.Events, 1))*1e6,
				run.CPU.CPUBoundRate, pct(run.CPU.MachineBusy))
		}
	}
	tw.Flush()
	fmt.Fprintf(w, "\naudit verify: %s\n\n", r.AuditVerify)
	printTargets(w, r.Targets)
}
