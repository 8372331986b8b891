package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ledger/ledger/cmd/internal/benchkit"
)

// haServers are the cluster scenario's servers, each a process of its own
// in its own directory on free loopback ports: etcd (Patroni's consensus
// store), two Postgres servers under Patroni (a primary and a synchronous
// standby), three NATS servers in one JetStream cluster, and HAProxy in
// front of the ledgerd processes.
type haServers struct {
	dir      string
	etcd     *serverProc
	pg       []*patroniServer
	nats     []*natsServer
	proxy    *serverProc
	proxyURL string
	dbURL    string // multi-host, read-write: database ledger on whichever server is primary
	natsURL  string // every NATS server
}

// haBinaries are the programs the cluster scenario runs; .ci/cluster-deps
// installs the Debian packages that have them.
var haBinaries = []string{"etcd", "patroni", "haproxy"}

// missingHABinaries names those of haBinaries not on the PATH.
func missingHABinaries() []string {
	var missing []string
	for _, b := range haBinaries {
		if _, err := exec.LookPath(b); err != nil {
			missing = append(missing, b)
		}
	}
	return missing
}

// buildNATSServer builds nats-server from the module's own nats-server
// dependency into dir: Debian's is too old for sync_interval.
func buildNATSServer(ctx context.Context, dir string, stderr io.Writer) (string, error) {
	bin := filepath.Join(dir, "nats-server")
	fmt.Fprintln(stderr, "ledgerchaos: building nats-server")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/nats-io/nats-server/v2")
	cmd.Stdout, cmd.Stderr = stderr, stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build nats-server: %w (run ledgerchaos inside the ledger module, or name it with -nats-server)", err)
	}
	return bin, nil
}

// serverProc is one server process, its output in its log file.
type serverProc struct {
	name    string
	argv    []string
	logPath string
	owner   *user.User // nil: this process's user

	mu     sync.Mutex
	cmd    *exec.Cmd // nil while it is down
	exited chan struct{}
}

func (p *serverProc) start() error {
	log, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(p.argv[0], p.argv[1:]...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = benchkit.ChildProcAttr(p.owner)
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("start %s: %w", p.name, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); log.Close(); close(exited) }()
	p.mu.Lock()
	p.cmd, p.exited = cmd, exited
	p.mu.Unlock()
	return nil
}

// signal sends sig and waits for the exit, killing the process after limit.
func (p *serverProc) signal(sig os.Signal, limit time.Duration) {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.cmd = nil
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(sig)
	select {
	case <-exited:
	case <-time.After(limit):
		_ = cmd.Process.Kill()
		<-exited
	}
}

// patroniServer is one Postgres server and the Patroni that runs it.
type patroniServer struct {
	node patroniNode
	proc *serverProc
}

// kill crashes the server: Patroni first, so that it cannot start Postgres
// again, then the postmaster (which Patroni runs detached from itself).
func (s *patroniServer) kill() error {
	s.proc.signal(syscall.SIGKILL, 10*time.Second)
	pidFile, err := os.ReadFile(filepath.Join(s.node.Dir, "data", "postmaster.pid"))
	if err != nil {
		return fmt.Errorf("%s: read postmaster.pid: %w", s.node.Name, err)
	}
	first, _, _ := strings.Cut(string(pidFile), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil {
		return fmt.Errorf("%s: postmaster.pid: %w", s.node.Name, err)
	}
	postmaster, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return postmaster.Signal(syscall.SIGKILL)
}

// is asks Patroni's REST API whether the server is in role: "primary",
// "replica" or "sync" (the synchronous standby).
func (s *patroniServer) is(ctx context.Context, role string) bool {
	return httpOK(ctx, fmt.Sprintf("http://127.0.0.1:%d/%s", s.node.APIPort, role))
}

// natsServer is one server of the NATS cluster.
type natsServer struct {
	node natsNode
	proc *serverProc
}

// ready says whether the server runs and its JetStream is current with the
// cluster.
func (s *natsServer) ready(ctx context.Context) bool {
	return httpOK(ctx, fmt.Sprintf("http://127.0.0.1:%d/healthz", s.node.MonitorPort))
}

// startHAServers starts etcd, the Postgres pair and the NATS cluster under
// dir, and waits until Postgres has a primary and a synchronous standby and
// every NATS server is current. The caller closes it, on error too.
func startHAServers(ctx context.Context, dir, natsBin string) (*haServers, error) {
	h := &haServers{dir: dir}
	pgBin, err := postgresBinDir()
	if err != nil {
		return h, err
	}
	var owner *user.User
	if os.Geteuid() == 0 {
		if owner, err = user.Lookup("postgres"); err != nil {
			return h, fmt.Errorf("running as root, Postgres needs the postgres user: %w", err)
		}
	}
	ports, err := freePorts(2 + 2*2 + 3*3 + 1)
	if err != nil {
		return h, err
	}
	take := func() int { p := ports[0]; ports = ports[1:]; return p }

	etcdDir := filepath.Join(dir, "etcd")
	clientPort, peerPort := take(), take()
	etcdAddr := fmt.Sprintf("127.0.0.1:%d", clientPort)
	peer := fmt.Sprintf("http://127.0.0.1:%d", peerPort)
	h.etcd = &serverProc{name: "etcd", logPath: filepath.Join(dir, "etcd.log"), argv: []string{"etcd",
		"--name", "etcd1", "--data-dir", etcdDir,
		"--listen-client-urls", "http://" + etcdAddr, "--advertise-client-urls", "http://" + etcdAddr,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer, "--initial-cluster", "etcd1=" + peer}}
	if err := h.etcd.start(); err != nil {
		return h, err
	}
	if err := waitFor(ctx, 30*time.Second, "etcd", func() bool { return httpOK(ctx, "http://"+etcdAddr+"/health") }); err != nil {
		return h, err
	}

	var pgNodes []patroniNode
	for i := range 2 {
		n := patroniNode{Name: fmt.Sprintf("pg%d", i+1), Host: "127.0.0.1", Dir: filepath.Join(dir, fmt.Sprintf("pg%d", i+1)),
			PGPort: take(), APIPort: take()}
		pgNodes = append(pgNodes, n)
		s, err := newPatroniServer(n, etcdAddr, pgBin, owner)
		if err != nil {
			return h, err
		}
		h.pg = append(h.pg, s)
	}
	h.dbURL = multiHostDatabaseURL(pgNodes, "ledger")
	// The first bootstraps the cluster (initdb) and becomes primary; the
	// second copies it and becomes its synchronous standby.
	if err := h.pg[0].proc.start(); err != nil {
		return h, err
	}
	if err := waitFor(ctx, 60*time.Second, "a Postgres primary", func() bool { return h.pg[0].is(ctx, "primary") }); err != nil {
		return h, err
	}
	if err := h.pg[1].proc.start(); err != nil {
		return h, err
	}
	if err := waitFor(ctx, 120*time.Second, "a synchronous standby", func() bool { return h.pg[1].is(ctx, "sync") }); err != nil {
		return h, err
	}

	var nodes []natsNode
	for i := range 3 {
		name := fmt.Sprintf("nats%d", i+1)
		nodes = append(nodes, natsNode{Name: name, Host: "127.0.0.1", Dir: filepath.Join(dir, name), ClientPort: take(), ClusterPort: take(), MonitorPort: take()})
	}
	h.natsURL = natsServers(nodes)
	for _, n := range nodes {
		conf := filepath.Join(dir, n.Name+".conf")
		if err := os.WriteFile(conf, []byte(natsConfig(n, nodes)), 0o644); err != nil {
			return h, err
		}
		s := &natsServer{node: n, proc: &serverProc{name: n.Name, logPath: filepath.Join(dir, n.Name+".log"), argv: []string{natsBin, "-c", conf}}}
		h.nats = append(h.nats, s)
		if err := s.proc.start(); err != nil {
			return h, err
		}
	}
	for _, s := range h.nats {
		if err := waitFor(ctx, 60*time.Second, s.node.Name, func() bool { return s.ready(ctx) }); err != nil {
			return h, err
		}
	}
	h.proxyURL = fmt.Sprintf("http://127.0.0.1:%d", take())
	return h, nil
}

func newPatroniServer(n patroniNode, etcdAddr, pgBin string, owner *user.User) (*patroniServer, error) {
	if err := os.MkdirAll(n.Dir, 0o700); err != nil {
		return nil, err
	}
	if owner != nil {
		uid, _ := strconv.Atoi(owner.Uid)
		gid, _ := strconv.Atoi(owner.Gid)
		if err := os.Chown(n.Dir, uid, gid); err != nil {
			return nil, err
		}
	}
	conf, err := patroniConfig("ledgerchaos", etcdAddr, pgBin, n)
	if err != nil {
		return nil, err
	}
	confPath := filepath.Join(n.Dir, "patroni.yml")
	if err := os.WriteFile(confPath, conf, 0o644); err != nil {
		return nil, err
	}
	return &patroniServer{node: n, proc: &serverProc{name: n.Name, owner: owner,
		logPath: filepath.Join(n.Dir, "patroni.log"), argv: []string{"patroni", confPath}}}, nil
}

// startProxy starts HAProxy on proxyURL in front of the ledgerd addresses
// and waits until it sends requests to one that is ready.
func (h *haServers) startProxy(ctx context.Context, backends []string) error {
	errorFile := filepath.Join(h.dir, "haproxy-503.http")
	if err := os.WriteFile(errorFile, []byte(unavailableAnswer), 0o644); err != nil {
		return err
	}
	conf := filepath.Join(h.dir, "haproxy.cfg")
	if err := os.WriteFile(conf, []byte(haproxyConfig(strings.TrimPrefix(h.proxyURL, "http://"), backends, errorFile)), 0o644); err != nil {
		return err
	}
	h.proxy = &serverProc{name: "haproxy", logPath: filepath.Join(h.dir, "haproxy.log"), argv: []string{"haproxy", "-db", "-f", conf}}
	if err := h.proxy.start(); err != nil {
		return err
	}
	return waitFor(ctx, 30*time.Second, "HAProxy to reach a ready ledgerd", func() bool { return httpOK(ctx, h.proxyURL+"/readyz") })
}

// primary returns the index of the Postgres server that is primary,
// waiting for one while Patroni's API is slow to answer (a busy machine)
// or a failover is under way.
func (h *haServers) primary(ctx context.Context) (int, error) {
	found := -1
	err := waitFor(ctx, 30*time.Second, "a Postgres primary", func() bool {
		for i, s := range h.pg {
			if s.is(ctx, "primary") {
				found = i
				return true
			}
		}
		return false
	})
	return found, err
}

// close stops HAProxy, NATS, Postgres (Patroni stops it on SIGTERM) and
// etcd, in that order.
func (h *haServers) close() {
	var procs []*serverProc
	if h.proxy != nil {
		procs = append(procs, h.proxy)
	}
	for _, s := range h.nats {
		procs = append(procs, s.proc)
	}
	for _, s := range h.pg {
		procs = append(procs, s.proc)
	}
	if h.etcd != nil {
		procs = append(procs, h.etcd)
	}
	for _, p := range procs {
		p.signal(syscall.SIGTERM, 60*time.Second)
	}
}

// freePorts returns n loopback ports nobody listens on now, all different.
func freePorts(n int) ([]int, error) {
	seen := map[int]bool{}
	var ports []int
	for len(ports) < n {
		p, err := benchkit.FreePort()
		if err != nil {
			return nil, err
		}
		if !seen[p] {
			seen[p] = true
			ports = append(ports, p)
		}
	}
	return ports, nil
}

// httpOK says whether GET url answers 200 within two seconds.
func httpOK(ctx context.Context, url string) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// waitFor polls ok every 200 ms until it holds, or fails after limit.
func waitFor(ctx context.Context, limit time.Duration, what string, ok func() bool) error {
	deadline := time.Now().Add(limit)
	for !ok() {
		if time.Now().After(deadline) {
			return fmt.Errorf("waited %v for %s", limit, what)
		}
		if !sleepCtx(ctx, 200*time.Millisecond) {
			return ctx.Err()
		}
	}
	return nil
}
