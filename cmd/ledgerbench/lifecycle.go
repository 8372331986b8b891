package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledger/ledger/cmd/internal/benchkit"
)

// paymentsConcurrency is the concurrency of the lifecycle mode's closed-loop
// POST /payments phase: the payments mode's targets' level.
const paymentsConcurrency = 64

// lifecycleConfig is the lifecycle mode's flags.
type lifecycleConfig struct {
	server           ledgerdSpec
	rate             float64 // payments started per second
	concurrency      int     // payments in flight (create + deposit) at most
	duration         time.Duration
	drain            time.Duration
	partners         int
	keyed            bool // an Idempotency-Key on every POST
	relayWait        time.Duration
	paymentsRate     float64 // given POST /payments rate; 0: measure it
	paymentsDuration time.Duration
	payoutSample     int
	profileCounts    bool // run ledgerd's Postgres sessions through a pgCounter
	out              string
}

func parseLifecycleFlags(args []string, stderr io.Writer) (lifecycleConfig, error) {
	var c lifecycleConfig
	fs := flag.NewFlagSet("ledgerbench lifecycle", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `usage: ledgerbench lifecycle [flags]

Starts a real ledgerd (LEDGER_SANDBOX_PAYOUT_DELAY=0s) on a database
ledgerbench_<random> and a JetStream stream LEDGERBENCH_<RANDOM> of its own,
sets up -partners tenants with a South African bank merchant each, and a
webhook receiver on 127.0.0.1 that answers 200 and verifies every delivery's
signature. Then, open loop, it starts -rate payments per second for
-duration, at most -concurrency in flight: POST /payments (Lightning-funded,
with webhookUrl and webhookSecret), then POST /sandbox/payments/{id}/deposit,
each with a fresh Idempotency-Key unless -idempotency-key=false. A payment's
latency runs from the deposit's 202 to the arrival of its payment.success
webhook; after the load it waits up to -drain for every one. It reports
completed payments per second, latency p50/p99/max, lost payments (no
success webhook), duplicated success webhooks and bad signatures (any fails
the run), ledgerd's RSS, checks -payout-sample random payments have exactly
one sandbox payout each, and compares the completion rate with POST
/payments alone, closed loop at concurrency 64 (measured for
-payments-duration on the same server, unless -payments-rate gives it).
Everything it created is removed at the end unless -keep.

flags:
`)
		fs.PrintDefaults()
	}
	ledgerdFlags(fs, &c.server)
	fs.Float64Var(&c.rate, "rate", 300, "payments started per second (open loop: on schedule, whatever the server's pace)")
	fs.IntVar(&c.concurrency, "concurrency", 64, "payments in flight (POST /payments, then the deposit) at most; a payment due when all are busy starts late")
	fs.DurationVar(&c.duration, "duration", 10*time.Second, "how long payments are started")
	fs.DurationVar(&c.drain, "drain", 60*time.Second, "longest wait after the load for every deposited payment's payment.success webhook")
	fs.IntVar(&c.partners, "partners", 8, "simulated partners (tenants, each with a token and a merchant); payment i pays as partner i % partners")
	fs.BoolVar(&c.keyed, "idempotency-key", true, "send a fresh Idempotency-Key on every POST, as a careful partner does; false for the plain figure")
	fs.DurationVar(&c.relayWait, "relay-wait", 30*time.Second, "longest wait for ledgerd's relay to publish every event before a timed phase")
	fs.Float64Var(&c.paymentsRate, "payments-rate", 0,
		"POST /payments rate (requests/s) of ledgerbench payments at concurrency 64 to compare with; 0: measure it in this run")
	fs.DurationVar(&c.paymentsDuration, "payments-duration", 5*time.Second, "length of the closed-loop POST /payments phase (without -payments-rate)")
	fs.IntVar(&c.payoutSample, "payout-sample", 20, "random deposited payments checked for exactly one sandbox payout (GET /sandbox/payouts)")
	fs.BoolVar(&c.profileCounts, "profile-counts", false,
		"count what a settled payment costs: ledgerd's Postgres sessions go through a proxy that counts statements, round trips and transactions, "+
			"with xact_commit, ledgerd's and its backends' CPU time and the messages published, net of the idle server's (watched for 5 s before the load)")
	fs.StringVar(&c.out, "out", "bench-lifecycle.json", "JSON report path")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	switch {
	case c.rate <= 0 || c.duration <= 0 || c.drain <= 0:
		return c, errors.New("-rate, -duration and -drain must be positive")
	case c.concurrency < 1 || c.partners < 1 || c.server.DBMaxConns < 1:
		return c, errors.New("-concurrency, -partners and -db-max-conns must be positive")
	case c.paymentsRate < 0 || c.payoutSample < 0:
		return c, errors.New("-payments-rate and -payout-sample must not be negative")
	case c.paymentsRate == 0 && c.paymentsDuration <= 0:
		return c, errors.New("-payments-duration must be positive")
	case c.rate*c.duration.Seconds() < 1:
		return c, errors.New("-rate × -duration must be at least one payment")
	}
	c.server.Env = append(c.server.Env, "LEDGER_SANDBOX_PAYOUT_DELAY=0s")
	return c, nil
}

// lifecycleBench holds what the lifecycle mode's phases share.
type lifecycleBench struct {
	cfg      lifecycleConfig
	pool     *pgxpool.Pool // the benchmark database: CHECKPOINT and the relay check
	server   *benchkit.Ledgerd
	client   *http.Client
	load     *paymentLoad // with webhookUrl and webhookSecret
	receiver *webhookReceiver
	stderr   io.Writer
}

// lifecyclePayment is one payment of the load.
type lifecyclePayment struct {
	ID        string    // empty: POST /payments did not answer 201
	Partner   int       // index in load.partners
	DepositAt time.Time // when the deposit answered 202; zero: it did not

	CreateTook, DepositTook time.Duration // POST /payments, POST .../deposit
}

// runLifecycle is the lifecycle mode: it measures, prints the table and
// writes the JSON report, also when the run failed after the load started.
func runLifecycle(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseLifecycleFlags(args, stderr)
	if err != nil {
		return err
	}
	rep, err := measureLifecycle(ctx, cfg, stderr)
	if rep == nil {
		return err
	}
	printLifecycleTable(stdout, *rep)
	if rep.Profile != nil {
		printProfile(stdout, *rep.Profile)
	}
	if werr := benchkit.WriteJSON(cfg.out, rep); werr != nil {
		return errors.Join(err, werr)
	}
	fmt.Fprintf(stdout, "\nreport written to %s\n", cfg.out)
	return err
}

// measureLifecycle takes payments from creation to their payment.success
// webhook through a real ledgerd, at a fixed rate. The report is nil when
// the run stopped before the load; a failure from the load on (a failed
// request, the payout check, the POST /payments phase, cleanup) comes
// with the figures, not instead of them.
func measureLifecycle(ctx context.Context, cfg lifecycleConfig, stderr io.Writer) (_ *lifecycleReport, err error) {
	if cfg.profileCounts {
		if cfg.server.Proxy, err = startPGCounter(cfg.server.DatabaseURL); err != nil {
			return nil, err
		}
		defer cfg.server.Proxy.Close()
	}
	lg, err := startBenchLedgerd(ctx, cfg.server, stderr)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, lg.close()) }()
	// Two connections: CHECKPOINT and the relay check, never at once.
	pool, err := benchkit.OpenPool(ctx, cfg.server.DatabaseURL, lg.DBName, 2)
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	mach, err := describeMachine(ctx, pool, lg.NC)
	if err != nil {
		return nil, err
	}
	client := benchkit.NewHTTPClient(max(cfg.concurrency, paymentsConcurrency))
	defer client.CloseIdleConnections()
	partners, err := lg.setupPartners(ctx, client, cfg.partners)
	if err != nil {
		return nil, err
	}
	secret := benchkit.WebhookSecret()
	receiver, err := startWebhookReceiver(secret)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, receiver.close()) }()
	b := &lifecycleBench{cfg: cfg, pool: pool, server: lg.Server, client: client, receiver: receiver, stderr: stderr,
		load: &paymentLoad{client: client, baseURL: lg.Server.BaseURL, partners: partners,
			webhookURL: receiver.URL, webhookSecret: secret, keyed: cfg.keyed}}

	rep := lifecycleReport{Mode: "lifecycle", StartedAt: time.Now().UTC(), Machine: mach, Params: lifecycleParams{
		DatabaseServer: pool.Config().ConnConfig.Host + ":" + strconv.Itoa(int(pool.Config().ConnConfig.Port)),
		Database:       lg.DBName, Kept: cfg.server.Keep, NATSURL: cfg.server.NATSURL, Stream: lg.Stream,
		SubjectPrefix: lg.Prefix, Rate: cfg.rate, Concurrency: cfg.concurrency, DurationSeconds: cfg.duration.Seconds(),
		DrainSeconds: cfg.drain.Seconds(), Partners: cfg.partners, IdempotencyKey: cfg.keyed, LedgerdDBMaxConns: cfg.server.DBMaxConns,
		SandboxPayoutDelay: "0s", WebhookURL: receiver.URL, PayoutSample: cfg.payoutSample,
	}}
	if err := b.warmUp(ctx); err != nil {
		return nil, err
	}
	b.quiet(ctx)
	var prof *profiler
	var idle0, idle1, timed0 profileReading
	if cfg.profileCounts {
		if prof, err = newProfiler(cfg.server.Proxy, pool, lg.NC, lg.Stream, lg.Server.PID()); err != nil {
			return nil, err
		}
		idle0, idle1 = prof.idle(ctx)
		timed0 = idle1
	}
	before, beforeErr := scrapeWorkerCounts(ctx, client, lg.Server.BaseURL)
	res, recs, loadErr := b.lifecycle(ctx)
	rep.Lifecycle = res
	if prof != nil {
		pc := profile(idle0, idle1, timed0, prof.settle(ctx, cfg.drain), res.Completed)
		rep.Profile = &pc
	}
	after, afterErr := scrapeWorkerCounts(ctx, client, lg.Server.BaseURL)
	if err := errors.Join(beforeErr, afterErr); err != nil {
		rep.WorkersError = err.Error()
	} else {
		counts := after.since(before)
		rep.Workers = &counts
	}
	if ctx.Err() != nil {
		return nil, errors.Join(loadErr, ctx.Err())
	}
	// Failures from here on are reported with the figures, not instead of them.
	failed := loadErr
	if loadErr != nil {
		failed = fmt.Errorf("the load stopped at its first failed request: %w", loadErr)
	}
	if rep.PayoutCheck, err = b.checkPayouts(ctx, recs); err != nil {
		rep.PayoutCheck.Error, failed = err.Error(), errors.Join(failed, err)
	}
	if n := rep.Lifecycle.Webhooks.BadSignatures; n > 0 {
		// A partner's receiver would have refused these; the run fails as its
		// integration would.
		failed = errors.Join(failed, fmt.Errorf("%d webhook deliveries failed signature verification", n))
	}
	if rep.Payments, err = b.paymentsRate(ctx); err != nil {
		rep.Payments.Error, failed = err.Error(), errors.Join(failed, err)
	}
	rep.Server = serverMemory{PID: b.server.PID()}
	if m, err := readProcMemory(b.server.PID()); err == nil {
		rss, hwm := megabytes(m.RSS), megabytes(m.HWM)
		rep.Server.RSSEndMB, rep.Server.VmHWMMB = &rss, &hwm
	}
	rep.Targets = lifecycleTargets(rep)
	return &rep, failed
}

// warmUp takes one payment per partner through its whole life before
// anything is timed: every partner's path works, ledgerd's stream and its
// lifecycle consumers exist, and the webhook path is warm. A payment that
// does not succeed within -drain stops the run, with its status.
func (b *lifecycleBench) warmUp(ctx context.Context) error {
	ids := make([]string, len(b.load.partners))
	for i := range b.load.partners {
		var rec lifecyclePayment
		if err := b.pay(ctx, i, &rec); err != nil {
			return fmt.Errorf("warm-up payment of partner %d: %w", i, err)
		}
		ids[i] = rec.ID
	}
	ok, err := b.receiver.waitSucceeded(ctx, ids, b.cfg.drain)
	if err != nil || ok {
		return err
	}
	arrived := b.receiver.arrivals()
	for i, id := range ids {
		if _, done := arrived[id]; !done {
			return fmt.Errorf("warm-up payment %s of partner %d: no %s webhook within -drain %v (%s; ledgerd's log is above)",
				id, i, benchkit.SuccessType, b.cfg.drain, b.describePayment(ctx, i, id))
		}
	}
	return nil
}

// quiet waits for ledgerd's relay to publish everything so far and
// checkpoints Postgres, so a timed phase starts from a settled server.
func (b *lifecycleBench) quiet(ctx context.Context) {
	if _, ok, err := waitRelay(ctx, b.pool, b.cfg.relayWait); err != nil {
		fmt.Fprintf(b.stderr, "ledgerbench: relay check: %v (continuing)\n", err)
	} else if !ok {
		fmt.Fprintf(b.stderr, "ledgerbench: relay still behind after %v; the phase starts anyway\n", b.cfg.relayWait)
	}
	checkpoint(ctx, b.pool, b.stderr)
}

// pay creates payment i for partner i % partners and deposits what it
// asks for, filling rec as it goes.
func (b *lifecycleBench) pay(ctx context.Context, i int, rec *lifecyclePayment) error {
	rec.Partner = i % len(b.load.partners)
	p := b.load.partners[rec.Partner]
	t0 := time.Now()
	body, err := b.load.create(ctx, p)
	if err != nil {
		return err
	}
	t1 := time.Now()
	rec.CreateTook = t1.Sub(t0)
	var created struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(body, &created); err != nil || created.ID == "" {
		return fmt.Errorf("POST /payments answer %q: no id", body)
	}
	rec.ID = created.ID
	if _, err := b.load.post(ctx, "/sandbox/payments/"+url.PathEscape(created.ID)+"/deposit",
		p.Token, nil, http.StatusAccepted); err != nil {
		return err
	}
	rec.DepositAt = time.Now()
	rec.DepositTook = rec.DepositAt.Sub(t1)
	return nil
}

// lifecycle is the timed phase: the open-loop load, then the wait for the
// stragglers' success webhooks. The first failed request stops the load
// (returned as the error); what was deposited until then is still waited
// for and reported.
func (b *lifecycleBench) lifecycle(ctx context.Context) (lifecycleResult, []lifecyclePayment, error) {
	rss := sampleRSS(b.server.PID(), 100*time.Millisecond)
	cpu0, server0, self0 := readCPUTimes(), readProcCPU(b.server.PID()), readProcCPU(os.Getpid())
	recs, issue, loadErr := b.drive(ctx)
	loadEnd := time.Now()
	var deposited []string
	for _, r := range recs {
		if !r.DepositAt.IsZero() {
			deposited = append(deposited, r.ID)
		}
	}
	if _, err := b.receiver.waitSucceeded(ctx, deposited, b.cfg.drain); err != nil {
		loadErr = errors.Join(loadErr, err)
	}
	peak, sampled := rss.finish()

	res := lifecycleResult{Rate: b.cfg.rate, Concurrency: b.cfg.concurrency, Issue: issue}
	cpu1, server1, self1 := readCPUTimes(), readProcCPU(b.server.PID()), readProcCPU(os.Getpid())
	res.CPUBusy, res.ServerCPU, res.BenchCPU = cpu1.busySince(cpu0), procShare(server0, server1, cpu0, cpu1),
		procShare(self0, self1, cpu0, cpu1)
	if loadErr != nil {
		res.FirstError = loadErr.Error()
	}
	s := summariseLifecycle(recs, b.receiver.arrivals())
	res.Created, res.Deposited, res.Completed, res.Lost = s.Created, s.Deposited, s.Completed, len(s.Lost)
	if s.Completed > 0 {
		res.CompletionSeconds = s.LastSuccess.Sub(s.FirstDeposit).Seconds()
		if res.CompletionSeconds > 0 {
			res.CompletedPerSecond = float64(s.Completed) / res.CompletionSeconds
		}
		res.DrainSeconds = max(0, s.LastSuccess.Sub(loadEnd).Seconds())
	}
	l := summarise(s.Latencies)
	res.P50Ms, res.P99Ms, res.MaxMs = ms(l.P50), ms(l.P99), ms(l.Max)
	res.Create, res.Deposit = requestLatency(s.Creates), requestLatency(s.Deposits)
	res.EarlyWebhooks = s.Early
	for _, i := range s.Lost[:min(len(s.Lost), 5)] {
		res.LostSample = append(res.LostSample, lostPayment{ID: recs[i].ID,
			State: b.describePayment(ctx, recs[i].Partner, recs[i].ID)})
	}
	res.Webhooks = b.receiver.snapshot()
	if sampled {
		mb := megabytes(peak)
		res.ServerRSSPeakMB = &mb
	}
	return res, recs, loadErr
}

// drive starts payments on schedule: payment i is due at i/rate seconds
// after the start, for -duration, each on its own goroutine, at most
// -concurrency at once. A payment due while all are busy starts as soon as
// one finishes (late, counted), so the schedule never drifts: the rate
// offered is the rate asked for unless the server cannot keep up.
func (b *lifecycleBench) drive(ctx context.Context) ([]lifecyclePayment, issueStats, error) {
	total := int(b.cfg.rate * b.cfg.duration.Seconds())
	interval := time.Duration(float64(time.Second) / b.cfg.rate)
	recs := make([]lifecyclePayment, total)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	slots := make(chan struct{}, b.cfg.concurrency)
	var wg sync.WaitGroup
	var st issueStats
	timer := time.NewTimer(0)
	defer timer.Stop()
	start := time.Now()
	started := 0
issue:
	for ; started < total; started++ {
		due := start.Add(time.Duration(float64(started) * float64(time.Second) / b.cfg.rate))
		if wait := time.Until(due); wait > 0 {
			timer.Reset(wait)
			select {
			case <-ctx.Done():
				break issue
			case <-timer.C:
			}
		}
		select {
		case <-ctx.Done():
			break issue
		case slots <- struct{}{}:
		}
		lag := time.Since(due)
		st.MaxLagMs = max(st.MaxLagMs, ms(lag))
		if lag > interval {
			st.Late++
		}
		wg.Add(1)
		go func(i int) {
			defer func() { <-slots; wg.Done() }()
			if err := b.pay(ctx, i, &recs[i]); err != nil {
				cancel(fmt.Errorf("payment %d: %w", i, err))
			}
		}(started)
	}
	elapsed := max(time.Since(start), b.cfg.duration)
	wg.Wait()
	st.Started = started
	st.Seconds = elapsed.Seconds()
	st.PerSecond = float64(started) / elapsed.Seconds()
	return recs[:started], st, context.Cause(ctx)
}

// lifecycleSummary is what the records and the webhook arrivals say.
type lifecycleSummary struct {
	Created, Deposited, Completed int
	Lost                          []int // indexes of deposited payments without a success webhook
	Early                         int   // success webhooks before the deposit's answer (latency counted 0)
	Latencies                     []time.Duration
	Creates, Deposits             []time.Duration // how long POST /payments and the deposit took
	FirstDeposit, LastSuccess     time.Time
}

// summariseLifecycle joins the load's records with the success webhooks'
// arrival times (payment id → time).
func summariseLifecycle(recs []lifecyclePayment, arrivals map[string]time.Time) lifecycleSummary {
	var s lifecycleSummary
	for i, r := range recs {
		if r.ID == "" {
			continue
		}
		s.Created++
		s.Creates = append(s.Creates, r.CreateTook)
		if r.DepositAt.IsZero() {
			continue
		}
		s.Deposited++
		s.Deposits = append(s.Deposits, r.DepositTook)
		if s.FirstDeposit.IsZero() || r.DepositAt.Before(s.FirstDeposit) {
			s.FirstDeposit = r.DepositAt
		}
		at, ok := arrivals[r.ID]
		if !ok {
			s.Lost = append(s.Lost, i)
			continue
		}
		s.Completed++
		if at.After(s.LastSuccess) {
			s.LastSuccess = at
		}
		d := at.Sub(r.DepositAt)
		if d < 0 {
			// The webhook can beat the deposit's answer to this process.
			s.Early++
			d = 0
		}
		s.Latencies = append(s.Latencies, d)
	}
	return s
}

// describePayment says where a payment stands, from GET /payments/{id}:
// its status and its webhook deliveries, for a payment that did not finish.
func (b *lifecycleBench) describePayment(ctx context.Context, partner int, id string) string {
	token := b.load.partners[partner].Token
	var p struct {
		Status string `json:"status"`
	}
	if err := b.get(ctx, "/payments/"+url.PathEscape(id), token, &p); err != nil {
		return err.Error()
	}
	var hooks json.RawMessage
	if err := b.get(ctx, "/payments/"+url.PathEscape(id)+"/webhooks", token, &hooks); err != nil {
		return "status " + p.Status + "; webhooks: " + err.Error()
	}
	return "status " + p.Status + "; webhooks: " + string(hooks)
}

// get GETs path of ledgerd as token and decodes the 200 answer into out.
func (b *lifecycleBench) get(ctx context.Context, path, token string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.load.baseURL+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := b.client.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("GET %s: read answer: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s answered %s: %s", path, resp.Status, body)
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("GET %s: decode answer %q: %w", path, body, err)
	}
	return nil
}

// checkPayouts asks the sandbox payout rail, for -payout-sample random
// deposited payments, what it paid out: each must have exactly one item.
func (b *lifecycleBench) checkPayouts(ctx context.Context, recs []lifecyclePayment) (payoutCheck, error) {
	var deposited []lifecyclePayment
	for _, r := range recs {
		if !r.DepositAt.IsZero() {
			deposited = append(deposited, r)
		}
	}
	var c payoutCheck
	for _, i := range mrand.Perm(len(deposited))[:min(b.cfg.payoutSample, len(deposited))] {
		r := deposited[i]
		var answer struct {
			Items []struct {
				ID     string `json:"id"`
				Status string `json:"status"`
			} `json:"items"`
			Calls int64 `json:"calls"`
		}
		path := "/sandbox/payouts?paymentId=" + url.QueryEscape(r.ID)
		if err := b.get(ctx, path, b.load.partners[r.Partner].Token, &answer); err != nil {
			return c, fmt.Errorf("payout check: %w", err)
		}
		c.Checked++
		if len(answer.Items) == 1 {
			c.ExactlyOne++
		} else {
			c.Wrong = append(c.Wrong, payoutMismatch{PaymentID: r.ID, Items: len(answer.Items), Calls: answer.Calls})
		}
	}
	return c, nil
}

// paymentsRate is the POST /payments rate to compare the lifecycle's with:
// -payments-rate if given, else a closed-loop phase at concurrency 64 on
// this server, the payments mode's load without webhooks (keyed as the
// lifecycle's is).
func (b *lifecycleBench) paymentsRate(ctx context.Context) (lifecyclePayments, error) {
	if b.cfg.paymentsRate > 0 {
		return lifecyclePayments{Given: true, Concurrency: paymentsConcurrency, PerSecond: b.cfg.paymentsRate}, nil
	}
	b.quiet(ctx)
	load := &paymentLoad{client: b.client, baseURL: b.load.baseURL, partners: b.load.partners, keyed: b.load.keyed}
	fmt.Fprintf(b.stderr, "ledgerbench: POST /payments closed loop at concurrency %d for %v\n", paymentsConcurrency, b.cfg.paymentsDuration)
	p, err := runClosedLoop(ctx, paymentsConcurrency, b.cfg.paymentsDuration, load.op)
	if err != nil {
		return lifecyclePayments{}, fmt.Errorf("POST /payments phase: %w", err)
	}
	t := newThroughput(p)
	return lifecyclePayments{Concurrency: paymentsConcurrency, PerSecond: t.PerSecond, Measured: &t}, nil
}
