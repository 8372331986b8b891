package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/ledger/ledger/cmd/internal/benchkit"
	"github.com/ledger/ledger/eventstore/keys"
)

// chaosCluster is what one fault scenario runs against: its own Postgres
// and NATS servers (one of each, or the cluster scenario's replicated ones)
// and several ledgerd processes sharing them, each on a fixed address so
// that a restarted process is found where the killed one was.
type chaosCluster struct {
	pg        *privatePostgres // nil in the cluster scenario
	nats      *privateNATS     // nil in the cluster scenario
	ha        *haServers       // the cluster scenario's servers, else nil
	dbURL     string           // the ledgerds' DATABASE_URL (database ledger)
	natsURL   string           // the ledgerds' NATS_URL
	ledgerd   string           // binary
	ledgerctl string           // binary
	env       []string
	dir       string // logs and the servers' data
	nodes     []*chaosNode

	mu    sync.Mutex
	kills []time.Time // when a ledgerd was killed (SIGKILL), for the webhook check
}

// chaosNode is one ledgerd of the cluster.
type chaosNode struct {
	name    string
	addr    string
	logPath string
	env     []string

	mu   sync.Mutex
	proc *benchkit.Ledgerd // nil while it is down
}

// chaosValidity is how long a chaos payment waits for its deposit.
const chaosValidity = 15 * time.Second

// chaosSettings are the ledgerd settings every node of a scenario shares.
type chaosSettings struct {
	Nodes        int
	WebhookRetry string // LEDGER_WEBHOOK_RETRY: short, so the run sees retries
	// NATSServer is the nats-server binary for a replicated cluster behind
	// HAProxy (the cluster scenario); empty: one Postgres, one NATS.
	NATSServer string
	// Env are settings over the defaults (the rails scenario's production
	// mode and providers).
	Env []string
}

// startChaosCluster starts the servers and n ledgerd processes under dir.
// The caller closes it, on error too.
func startChaosCluster(ctx context.Context, dir, ledgerdBin, ledgerctlBin string, s chaosSettings) (*chaosCluster, error) {
	c := &chaosCluster{ledgerd: ledgerdBin, ledgerctl: ledgerctlBin, dir: dir}
	if err := c.startServers(ctx, s.NATSServer); err != nil {
		return c, err
	}
	// One master key for every process: each would otherwise make its own
	// under its LEDGER_DATA_DIR, and the second could not unwrap the
	// signing key the first stored.
	masterKey, _, err := keys.LocalMasterKeyFile(dir)
	if err != nil {
		return c, err
	}
	c.env = []string{"DATABASE_URL=" + c.dbURL, "NATS_URL=" + c.natsURL, "LEDGER_LOG_LEVEL=warn",
		"LEDGER_MASTER_KEY_FILE=" + masterKey,
		"LEDGER_MODE=sandbox", "LEDGER_WEBHOOK_RETRY=" + s.WebhookRetry, "LEDGER_EXPIRY_POLL=200ms",
		// Payments whose deposit never came (the load stopped between the
		// two requests) expire while the scenario settles, so every
		// payment reaches a final state.
		"LEDGER_VALIDITY=lightning=" + chaosValidity.String(),
		// The check reads back every acknowledged write as fast as it can;
		// the load itself stays far below the default limits.
		"LEDGER_RATE_LIMIT=0"}
	if c.ha != nil {
		c.env = append(c.env, fmt.Sprintf("LEDGER_NATS_REPLICAS=%d", len(c.ha.nats)))
	}
	// Later settings win: exec keeps the last of a name.
	c.env = append(c.env, s.Env...)
	for i := range s.Nodes {
		addr, err := benchkit.FreeAddr()
		if err != nil {
			return c, err
		}
		name := fmt.Sprintf("ledgerd-%d", i+1)
		c.nodes = append(c.nodes, &chaosNode{name: name, addr: addr, logPath: filepath.Join(dir, name+".log"),
			env: benchkit.Env(append(c.env, "LEDGER_ADDR="+addr, "LEDGER_DATA_DIR="+filepath.Join(dir, name))...)})
	}
	// One at a time: the first creates the database and migrates it.
	for _, n := range c.nodes {
		if err := n.start(ctx, c.ledgerd); err != nil {
			return c, err
		}
	}
	if c.ha != nil {
		var addrs []string
		for _, n := range c.nodes {
			addrs = append(addrs, n.addr)
		}
		return c, c.ha.startProxy(ctx, addrs)
	}
	return c, nil
}

// startServers starts Postgres and NATS: the replicated ones when
// natsServer names a nats-server binary, else one of each.
func (c *chaosCluster) startServers(ctx context.Context, natsServer string) error {
	var err error
	if natsServer != "" {
		c.ha, err = startHAServers(ctx, c.dir, natsServer)
		c.dbURL, c.natsURL = c.ha.dbURL, c.ha.natsURL
		return err
	}
	pgDir := filepath.Join(c.dir, "postgres")
	if err := os.MkdirAll(pgDir, 0o755); err != nil {
		return err
	}
	if c.pg, err = startPrivatePostgres(ctx, pgDir); err != nil {
		return err
	}
	if c.dbURL, err = benchkit.DatabaseURLFor(c.pg.URL, "ledger"); err != nil {
		return err
	}
	if c.nats, err = startPrivateNATS(filepath.Join(c.dir, "nats")); err != nil {
		return err
	}
	c.natsURL = c.nats.URL
	return nil
}

// start runs the node's ledgerd and waits until it is ready.
func (n *chaosNode) start(ctx context.Context, bin string) error {
	log, err := os.OpenFile(n.logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	p, err := benchkit.StartLedgerd(bin, n.addr, n.env, log)
	if err != nil {
		log.Close()
		return err
	}
	go func() { <-p.Exited(); log.Close() }()
	if err := p.WaitReady(ctx, 90*time.Second); err != nil {
		p.Kill()
		return fmt.Errorf("%s: %w (log: %s)", n.name, err, n.logPath)
	}
	n.mu.Lock()
	n.proc = p
	n.mu.Unlock()
	return nil
}

// up says whether the node's process runs.
func (n *chaosNode) up() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.proc != nil
}

// down takes the process out of the node, for a kill or a stop.
func (n *chaosNode) down() *benchkit.Ledgerd {
	n.mu.Lock()
	defer n.mu.Unlock()
	p := n.proc
	n.proc = nil
	return p
}

// kill sends SIGKILL to node i's ledgerd (no drain, no cleanup: a crash)
// and records when.
func (c *chaosCluster) kill(i int) bool {
	p := c.nodes[i].down()
	if p == nil {
		return false
	}
	c.mu.Lock()
	c.kills = append(c.kills, time.Now())
	c.mu.Unlock()
	p.Kill()
	return true
}

// stopGracefully sends SIGTERM to node i's ledgerd and waits for it to drain.
func (c *chaosCluster) stopGracefully(i int) error {
	if p := c.nodes[i].down(); p != nil {
		return p.Stop(60 * time.Second)
	}
	return nil
}

// restart starts node i again at its address.
func (c *chaosCluster) restart(ctx context.Context, i int) error {
	return c.nodes[i].start(ctx, c.ledgerd)
}

// killTimes returns when ledgerd processes were killed.
func (c *chaosCluster) killTimes() []time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Time(nil), c.kills...)
}

// baseURLs returns HAProxy's URL in the cluster scenario; else the base URL
// of every node, up or not: a client tries them in turn, as behind a load
// balancer.
func (c *chaosCluster) baseURLs() []string {
	if c.ha != nil {
		return []string{c.ha.proxyURL}
	}
	urls := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		urls[i] = "http://" + n.addr
	}
	return urls
}

// anyUp returns the base URL of a node that runs, or HAProxy's.
func (c *chaosCluster) anyUp() (string, error) {
	if c.ha != nil {
		return c.ha.proxyURL, nil
	}
	for _, n := range c.nodes {
		if n.up() {
			return "http://" + n.addr, nil
		}
	}
	return "", errors.New("no ledgerd runs")
}

// close stops every node gracefully, then the servers. A node that fails
// to drain is an error: it is part of what a scenario checks.
func (c *chaosCluster) close(ctx context.Context) error {
	var err error
	for i, n := range c.nodes {
		if e := c.stopGracefully(i); e != nil {
			err = errors.Join(err, fmt.Errorf("%s: %w (log: %s)", n.name, e, n.logPath))
		}
	}
	if c.ha != nil {
		c.ha.close()
	}
	if c.nats != nil {
		c.nats.stop()
	}
	if c.pg != nil {
		err = errors.Join(err, c.pg.stop(context.WithoutCancel(ctx), "fast"))
	}
	return err
}
