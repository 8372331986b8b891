package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledger/ledger/cmd/internal/benchkit"
)

// chaosScenario is one fault scenario: how many ledgerd processes, what
// breaks during the load, and what it checks beyond the common checks.
type chaosScenario struct {
	name  string
	about string
	nodes int
	// replicated runs Postgres under Patroni, a NATS cluster and HAProxy
	// (the cluster scenario) instead of one Postgres and one NATS.
	replicated bool
	// webhookPath picks the receiver behaviour of the n-th payment.
	webhookPath func(n int64) string
	// disrupt breaks things while the load runs, and returns when the
	// cluster is whole again (or ctx ended). It reports the windows in
	// which a webhook answered 2xx may legitimately be sent again.
	disrupt func(ctx context.Context, r *chaosRun) ([]window, error)
	// extra are the scenario's own checks.
	extra func(r *chaosRun, res *chaosResult)
	// rails runs ledgerd in production mode against fakes of its
	// providers (chaos_rails.go) instead of the sandbox's rails.
	rails bool
}

// chaosRun is one scenario in progress.
type chaosRun struct {
	cfg      chaosConfig
	cluster  *chaosCluster
	client   *chaosClient
	load     *chaosLoad
	receiver *chaosReceiver
	fakes    *railsFakes // the rails scenario's providers, else nil
	pool     *pgxpool.Pool
	log      io.Writer

	mu    sync.Mutex
	notes map[string]int // scenario-specific figures, e.g. writes acknowledged during an outage
}

func (r *chaosRun) note(k string, v int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.notes[k] = v
}

func okPath(int64) string { return receiverOK }

var chaosScenarios = []chaosScenario{
	{name: "kill", about: "kill -9 of a random ledgerd every 1-3 s under mixed load, restarted after 0.5-1.5 s (2 processes)",
		nodes: 2, webhookPath: okPath, disrupt: killRandomly},
	{name: "nats", about: "the NATS server stopped for -nats-outage during the load, then started again (2 processes)",
		nodes: 2, webhookPath: okPath, disrupt: stopNATS, extra: checkNATSOutage},
	{name: "postgres", about: "Postgres stopped (fast shutdown) for -pg-outage during the load, then started again; ledgerd is not restarted (2 processes)",
		nodes: 2, webhookPath: okPath, disrupt: restartPostgres, extra: checkPostgresOutage},
	{name: "instances", about: "3 processes behind the load: one killed for good a third in, another restarted (SIGTERM, start) two thirds in",
		nodes: 3, webhookPath: okPath, disrupt: killOneRestartAnother},
	{name: "receiver", about: "webhook receivers that hang past the timeout, answer 500, close the connection, or take 6 s (2 processes)",
		nodes: 2, webhookPath: hostileReceivers, disrupt: nothing, extra: checkReceivers},
	{name: "cluster", about: "3 processes behind HAProxy on Postgres under Patroni (primary, synchronous standby) and 3 NATS servers: " +
		"the primary killed, the stream's NATS leader killed, a ledgerd killed, each restarted, then a rolling restart (not in all)",
		nodes: 3, replicated: true, webhookPath: okPath, disrupt: failOver},
	{name: "rails", about: "production mode against fakes of LND, Paystack and M-Pesa: provider 500s, webhooks and callbacks twice, " +
		"late, out of order; every ledgerd killed while a transfer, then a B2C, is unanswered (2 processes)",
		nodes: 2, webhookPath: okPath, disrupt: railFaults, extra: checkRails, rails: true},
}

// runScenario sets up a cluster, runs the load with the scenario's
// disruption, lets it settle and checks it.
func runScenario(ctx context.Context, cfg chaosConfig, sc chaosScenario, dir string, log io.Writer) (res chaosResult) {
	res = chaosResult{Scenario: sc.name, About: sc.about, Dir: dir}
	start := time.Now()
	defer func() { res.Seconds = time.Since(start).Seconds() }()
	fail := func(err error) chaosResult {
		res.Error = err.Error()
		return res
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fail(err)
	}
	fmt.Fprintf(log, "ledgerchaos: %s: starting Postgres, NATS and %d ledgerd processes under %s\n", sc.name, sc.nodes, dir)
	settings := chaosSettings{Nodes: sc.nodes, WebhookRetry: "200ms,500ms,1s,1s,2s,2s,2s"}
	if sc.replicated {
		settings.NATSServer = cfg.natsServer
	}
	var fakes *railsFakes
	if sc.rails {
		var err error
		if fakes, err = startRailsFakes(dir); err != nil {
			return fail(err)
		}
		defer fakes.close()
		settings.Env = fakes.env
	}
	cluster, err := startChaosCluster(ctx, dir, cfg.ledgerd, cfg.ledgerctl, settings)
	defer func() {
		if err := cluster.close(ctx); err != nil {
			res.add("every ledgerd drains and exits 0 on SIGTERM", 1, 0)
			res.Error = strings.TrimSpace(res.Error + "\n" + err.Error())
		}
	}()
	if err != nil {
		return fail(err)
	}
	pool, err := benchkit.OpenPool(ctx, cluster.dbURL, "ledger", 4)
	if err != nil {
		return fail(err)
	}
	defer pool.Close()
	httpClient := benchkit.NewHTTPClient(cfg.workers)
	defer httpClient.CloseIdleConnections()
	base, err := cluster.anyUp()
	if err != nil {
		return fail(err)
	}
	partners, err := benchkit.SetupPartners(ctx, httpClient, cfg.ledgerctl, benchkit.Env("DATABASE_URL="+cluster.dbURL), base, cfg.partners)
	if err != nil {
		return fail(err)
	}
	secret := benchkit.WebhookSecret()
	var receiverCert *tls.Certificate
	if fakes != nil {
		receiverCert = fakes.receiverCert
	}
	receiver, err := startChaosReceiver(secret, receiverCert)
	if err != nil {
		return fail(err)
	}
	defer receiver.close()
	client := &chaosClient{http: httpClient, urls: cluster.baseURLs(), patience: 2 * time.Minute}
	r := &chaosRun{cfg: cfg, cluster: cluster, client: client, receiver: receiver, log: log, notes: map[string]int{},
		fakes: fakes, pool: pool,
		load: newChaosLoad(client, partners, secret, func(n int64) string { return receiver.URL(sc.webhookPath(n)) })}
	if fakes != nil {
		fakes.front.setBackends(cluster.baseURLs())
		if r.load.rails, err = setupRailsPartners(ctx, client, r.load); err != nil {
			return fail(fmt.Errorf("rails setup: %w", err))
		}
		r.load.fakes = fakes
		fakes.play()
	}

	if sc.replicated && cfg.throughput > 0 {
		if err := measureThroughput(ctx, r, partners, cfg.workers, cfg.throughput); err != nil {
			return fail(fmt.Errorf("throughput: %w", err))
		}
		res.Notes = r.notes
	}
	// The load runs for -duration, and on until the disruption is over and
	// the whole cluster has served load for a few seconds more.
	loadCtx, stopLoad := context.WithCancel(ctx)
	loaded := make(chan struct{})
	go func() { r.load.run(loadCtx, cfg.workers, cfg.rate); close(loaded) }()
	minEnd := time.Now().Add(cfg.duration)
	windows, disruptErr := sc.disrupt(loadCtx, r)
	select {
	case <-time.After(max(time.Until(minEnd), 5*time.Second)):
	case <-ctx.Done():
	}
	stopLoad()
	<-loaded
	res.Notes = r.notes
	if disruptErr != nil {
		return fail(fmt.Errorf("disruption: %w", disruptErr))
	}
	// A delivery answered 2xx but not yet recorded when its process was
	// killed is sent again once its lease runs out: any 2xx within a lease
	// before a kill may repeat. On a busy machine the record can lag its
	// answer by seconds, so the window is the whole lease.
	for _, k := range cluster.killTimes() {
		windows = append(windows, window{from: k.Add(-deliveryLease), to: k.Add(time.Second)})
	}
	fmt.Fprintf(log, "ledgerchaos: %s: load stopped after %.0f s; waiting for the cluster to settle\n", sc.name, time.Since(start).Seconds())

	acked, unanswered := r.load.snapshot()
	if fakes != nil {
		fakes.markPrompted(&acked)
	}
	var deposited []string
	for _, p := range acked.Payments {
		if p.Deposited {
			deposited = append(deposited, p.ID)
		}
	}
	var f chaosFindings
	if f.Settled, err = settle(ctx, pool, deposited, cfg.settle); err != nil {
		return fail(fmt.Errorf("settle: %w", err))
	}
	if err := verifyAcknowledged(ctx, client, r.load, acked, &f); err != nil {
		return fail(fmt.Errorf("look up acknowledged writes: %w", err))
	}
	if err := verifyStore(ctx, pool, cluster.natsURL, deposited, &f); err != nil {
		return fail(fmt.Errorf("check the store and the stream: %w", err))
	}
	if fakes != nil {
		if err := railsPayouts(ctx, r, &f); err != nil {
			return fail(fmt.Errorf("count the providers' payouts: %w", err))
		}
	}
	if err := verifyWebhooks(ctx, pool, receiver, windows, &f); err != nil {
		return fail(fmt.Errorf("check webhooks: %w", err))
	}
	if len(f.repeatIDs) > 0 {
		var logs []string
		for _, n := range cluster.nodes {
			logs = append(logs, n.logPath)
		}
		f.RepeatLog = logLinesAbout(logs, f.repeatIDs, 20)
	}
	f.AuditVerify = auditVerify(ctx, cfg.ledgerctl, cluster.dbURL)
	res.Answers, res.Findings, res.Notes = client.snapshot(), f, r.notes
	res.Acknowledged = chaosAckCounts{Users: len(acked.Users), MomoAdded: acked.MomoAdds, MomoRemoved: acked.MomoDels,
		Payments: len(acked.Payments), Deposits: len(deposited), Unanswered: unanswered}
	res.commonChecks()
	if sc.extra != nil {
		sc.extra(r, &res)
	}
	res.Passed = res.Error == "" && !slices.ContainsFunc(res.Checks, func(c chaosCheck) bool { return !c.OK })
	return res
}

// killRandomly kills a random ledgerd every 1-3 s and restarts it after
// 0.5-1.5 s, until the load's -duration is over.
func killRandomly(ctx context.Context, r *chaosRun) ([]window, error) {
	end := time.Now().Add(r.cfg.duration - 2*time.Second)
	for time.Now().Before(end) {
		if !sleepCtx(ctx, time.Second+rand.N(2*time.Second)) {
			return nil, nil
		}
		i := rand.IntN(len(r.cluster.nodes))
		r.cluster.kill(i)
		if !sleepCtx(ctx, 500*time.Millisecond+rand.N(time.Second)) {
			return nil, nil
		}
		if err := r.cluster.restart(context.WithoutCancel(ctx), i); err != nil {
			return nil, err
		}
		r.note("kills", len(r.cluster.killTimes()))
	}
	return nil, nil
}

// stopNATS stops the NATS server for -nats-outage while writes go on.
func stopNATS(ctx context.Context, r *chaosRun) ([]window, error) {
	if !sleepCtx(ctx, 3*time.Second) {
		return nil, nil
	}
	before := r.client.snapshot().Acknowledged
	r.cluster.nats.stop()
	sleepCtx(ctx, r.cfg.natsOutage)
	r.note("acknowledgedDuringOutage", r.client.snapshot().Acknowledged-before)
	r.note("outageSeconds", int(r.cfg.natsOutage.Seconds()))
	return nil, r.cluster.nats.start()
}

// restartPostgres stops Postgres for -pg-outage; the ledgerd processes
// stay up and must recover on their own.
func restartPostgres(ctx context.Context, r *chaosRun) ([]window, error) {
	if !sleepCtx(ctx, 3*time.Second) {
		return nil, nil
	}
	bg := context.WithoutCancel(ctx)
	from := time.Now()
	before := r.client.snapshot().Unavailable
	if err := r.cluster.pg.stop(bg, "fast"); err != nil {
		return nil, err
	}
	sleepCtx(ctx, r.cfg.pgOutage)
	r.note("unavailableAnswersDuringOutage", r.client.snapshot().Unavailable-before)
	r.note("outageSeconds", int(r.cfg.pgOutage.Seconds()))
	if err := r.cluster.pg.start(bg); err != nil {
		return nil, err
	}
	// A fast stop flushes every commit, the leases too, and a 2xx answered
	// while Postgres is away is recorded once it is back, unless it is
	// back later than the record's retries last: only a longer
	// -pg-outage explains a webhook sent again.
	if w := (window{from: from, to: time.Now().Add(-recordRetries)}); w.to.After(w.from) {
		return []window{w}, nil
	}
	return nil, nil
}

// deliveryLease is how long a ledgerd holds a webhook delivery it claimed
// (the workers package's leaseFor): one whose 2xx it got but did not record
// is sent again once that lease ends.
const deliveryLease = 45 * time.Second

// recordRetries is the least time for which a ledgerd tries to record a
// webhook attempt while Postgres is away (the workers package's recordFor).
const recordRetries = 30 * time.Second

// killOneRestartAnother runs three processes; a third into the load one
// is killed for good, two thirds in another is stopped and started again.
func killOneRestartAnother(ctx context.Context, r *chaosRun) ([]window, error) {
	if !sleepCtx(ctx, r.cfg.duration/3) {
		return nil, nil
	}
	r.cluster.kill(0)
	if !sleepCtx(ctx, r.cfg.duration/3) {
		return nil, nil
	}
	if err := r.cluster.stopGracefully(1); err != nil {
		return nil, fmt.Errorf("SIGTERM %s: %w", r.cluster.nodes[1].name, err)
	}
	return nil, r.cluster.restart(context.WithoutCancel(ctx), 1)
}

func nothing(context.Context, *chaosRun) ([]window, error) { return nil, nil }

// hostileReceivers sends every tenth payment's webhooks to the slow
// receiver, every other one's to the hostile one, the rest to a good one.
func hostileReceivers(n int64) string {
	switch {
	case n%10 == 0:
		return receiverSlow
	case n%2 == 1:
		return receiverHostile
	}
	return receiverOK
}

func checkNATSOutage(r *chaosRun, res *chaosResult) {
	res.addAtLeast("writes acknowledged while NATS was down", r.notes["acknowledgedDuringOutage"], 1)
}

func checkPostgresOutage(r *chaosRun, res *chaosResult) {
	res.addAtLeast("503 problem+json answers with Retry-After while Postgres was down", r.notes["unavailableAnswersDuringOutage"], 1)
}

// checkReceivers checks the hostile receiver's failures were exercised and
// that the slow receiver delayed nobody else.
func checkReceivers(r *chaosRun, res *chaosResult) {
	hs, _ := r.receiver.histories()
	retried := 0
	for _, h := range hs {
		if h.Path == receiverHostile && h.Attempts >= 3 {
			retried++
		}
	}
	res.addAtLeast("hostile deliveries retried through a hang, a 500 and a closed connection", retried, 1)
	acked, _ := r.load.snapshot()
	ok := r.receiver.successLatencies(acked.Payments, receiverOK)
	slow := r.receiver.successLatencies(acked.Payments, receiverSlow)
	res.addAtLeast("payments whose webhooks went to the slow receiver, succeeded", len(slow), 1)
	if len(ok) == 0 {
		res.add("payments with a good receiver, succeeded", 0, 1)
		return
	}
	p50, p99 := ok[len(ok)/2], ok[min(len(ok)-1, len(ok)*99/100)]
	res.Notes["goodReceiverSuccessP50Ms"] = int(p50.Milliseconds())
	res.Notes["goodReceiverSuccessP99Ms"] = int(p99.Milliseconds())
	// Were the dispatcher waiting on the slow receiver, a good receiver's
	// four status webhooks would each wait behind a 6 s delivery: its
	// median would be several times 6 s. The median, not the tail, so a
	// busy machine's noise does not decide the check.
	res.addAtMost("deposit to payment.success median at the good receiver, ms (the slow one takes 6,000 per delivery)",
		int(p50.Milliseconds()), int(slowReceiverDelay.Milliseconds()))
}

// sleepCtx sleeps for d unless ctx ends first, and says whether it slept.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}
