package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/nats-io/nats-server/v2/server"
)

// TestMultiHostDatabaseURLAsksForThePrimary checks that pgx reads the
// URL as both servers, tried in turn, and a connection kept only where
// writes are allowed: what makes ledgerd follow a failover.
func TestMultiHostDatabaseURLAsksForThePrimary(t *testing.T) {
	cfg, err := pgconn.ParseConfig(multiHostDatabaseURL([]patroniNode{{Host: "127.0.0.1", PGPort: 5501}, {Host: "127.0.0.1", PGPort: 5502}}, "ledger"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Port != 5501 || len(cfg.Fallbacks) != 1 || cfg.Fallbacks[0].Port != 5502 || cfg.Fallbacks[0].Host != "127.0.0.1" {
		t.Errorf("servers: first port %d, fallbacks %+v; want 5501 then 127.0.0.1:5502", cfg.Port, cfg.Fallbacks)
	}
	if cfg.Database != "ledger" || cfg.User != "postgres" {
		t.Errorf("database %q user %q, want ledger and postgres", cfg.Database, cfg.User)
	}
	if cfg.ValidateConnect == nil {
		t.Error("no ValidateConnect: target_session_attrs=read-write was not read, so a standby would be used")
	}
}

// TestNATSConfigIsAReplicatedSyncedCluster reads each node's file as
// nats-server does.
func TestNATSConfigIsAReplicatedSyncedCluster(t *testing.T) {
	dir := t.TempDir()
	nodes := []natsNode{
		{Name: "a", Host: "127.0.0.1", Dir: filepath.Join(dir, "a"), ClientPort: 4301, ClusterPort: 6301, MonitorPort: 8301},
		{Name: "b", Host: "127.0.0.1", Dir: filepath.Join(dir, "b"), ClientPort: 4302, ClusterPort: 6302, MonitorPort: 8302},
		{Name: "c", Host: "127.0.0.1", Dir: filepath.Join(dir, "c"), ClientPort: 4303, ClusterPort: 6303, MonitorPort: 8303},
	}
	conf := filepath.Join(dir, "b.conf")
	if err := os.WriteFile(conf, []byte(natsConfig(nodes[1], nodes)), 0o644); err != nil {
		t.Fatal(err)
	}
	opts, err := server.ProcessConfigFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	if !opts.JetStream || !opts.SyncAlways || opts.StoreDir != nodes[1].Dir {
		t.Errorf("JetStream %v, sync always %v, store %q; want a JetStream synced before each ack, in %s", opts.JetStream, opts.SyncAlways, opts.StoreDir, nodes[1].Dir)
	}
	if opts.ServerName != "b" || opts.Port != 4302 || opts.HTTPPort != 8302 || opts.Cluster.Port != 6302 || opts.Cluster.Name == "" {
		t.Errorf("server %q ports %d/%d/%d cluster %q", opts.ServerName, opts.Port, opts.HTTPPort, opts.Cluster.Port, opts.Cluster.Name)
	}
	var routes []string
	for _, r := range opts.Routes {
		routes = append(routes, r.Host)
	}
	if strings.Join(routes, " ") != "127.0.0.1:6301 127.0.0.1:6303" {
		t.Errorf("routes %v, want the two other nodes", routes)
	}
	if got := natsServers(nodes); got != "nats://127.0.0.1:4301,nats://127.0.0.1:4302,nats://127.0.0.1:4303" {
		t.Errorf("NATS_URL %q", got)
	}
}

// TestPatroniConfigKeepsAcknowledgedWrites checks the settings that make an
// acknowledged write survive the primary's loss. (patroni --validate-config
// is for production files: it refuses loopback addresses.)
func TestPatroniConfigKeepsAcknowledgedWrites(t *testing.T) {
	n := patroniNode{Name: "pg1", Host: "127.0.0.1", Dir: t.TempDir(), PGPort: 5501, APIPort: 8008}
	conf, err := patroniConfig("ledger", "127.0.0.1:2379", "/usr/lib/postgresql/15/bin", n)
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Bootstrap struct {
			DCS struct {
				TTL             float64 `json:"ttl"`
				LoopWait        float64 `json:"loop_wait"`
				RetryTimeout    float64 `json:"retry_timeout"`
				SynchronousMode bool    `json:"synchronous_mode"`
				Postgresql      struct {
					UsePgRewind bool           `json:"use_pg_rewind"`
					Parameters  map[string]any `json:"parameters"`
				} `json:"postgresql"`
			} `json:"dcs"`
		} `json:"bootstrap"`
	}
	if err := json.Unmarshal(conf, &c); err != nil {
		t.Fatal(err)
	}
	d := c.Bootstrap.DCS
	if !d.SynchronousMode || d.Postgresql.Parameters["synchronous_commit"] != "on" || !d.Postgresql.UsePgRewind {
		t.Errorf("synchronous_mode %v, synchronous_commit %v, use_pg_rewind %v; want true, on, true",
			d.SynchronousMode, d.Postgresql.Parameters["synchronous_commit"], d.Postgresql.UsePgRewind)
	}
	if d.TTL != patroniTTL.Seconds() || d.LoopWait+2*d.RetryTimeout > d.TTL {
		t.Errorf("ttl %v loop_wait %v retry_timeout %v: Patroni needs loop_wait + 2 × retry_timeout <= ttl = %v",
			d.TTL, d.LoopWait, d.RetryTimeout, patroniTTL.Seconds())
	}
}

// TestHAProxyConfigChecksReadiness checks that every ledgerd is a backend
// health-checked on /readyz and, where HAProxy is installed, that it
// accepts the file.
func TestHAProxyConfigChecksReadiness(t *testing.T) {
	dir := t.TempDir()
	errorFile := filepath.Join(dir, "503.http")
	if err := os.WriteFile(errorFile, []byte(unavailableAnswer), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := haproxyConfig("127.0.0.1:8080", []string{"127.0.0.1:9001", "127.0.0.1:9002"}, errorFile)
	for _, want := range []string{"option httpchk GET /readyz", "http-check expect status 200",
		"server ledgerd-1 127.0.0.1:9001 check", "server ledgerd-2 127.0.0.1:9002 check", "retry-on conn-failure"} {
		if !strings.Contains(cfg, want) {
			t.Errorf("configuration lacks %q:\n%s", want, cfg)
		}
	}
	if _, err := exec.LookPath("haproxy"); err != nil {
		t.Log("haproxy is not installed (.ci/cluster-deps): its own check is skipped")
		return
	}
	path := filepath.Join(dir, "haproxy.cfg")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("haproxy", "-c", "-f", path).CombinedOutput(); err != nil {
		t.Errorf("haproxy -c: %v: %s", err, out)
	}
}

func TestLongestGapEndsInTheWindow(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	acks := []time.Time{at(0), at(100), at(5000), at(5100), at(9000), at(9050)}
	// The fault at 1,000 ms: the gap 100 → 5,000 ends in the window and
	// counts from the last write before the fault; 5,100 → 9,000 ends after it.
	if got := longestGap(acks, at(1000), at(8000)); got != 4900*time.Millisecond {
		t.Errorf("got %v, want 4.9s", got)
	}
	if got := longestGap(acks, at(9010), at(9100)); got != 50*time.Millisecond {
		t.Errorf("got %v, want 50ms", got)
	}
	if got := longestGap(nil, at(0), at(1)); got != 0 {
		t.Errorf("no writes: got %v", got)
	}
}
