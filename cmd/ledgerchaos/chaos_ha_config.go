package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"time"
)

// The configuration files of the cluster scenario's servers. Each says,
// in the settings that matter for safety, what docs/deployment.md tells an
// operator to run.

// patroniNode is one Postgres server under Patroni.
type patroniNode struct {
	Name    string
	Host    string // where it listens and is reached: 127.0.0.1 here, its host name in docker-compose.cluster.yml
	Dir     string // data directory Dir/data, the Unix socket in Dir
	PGPort  int
	APIPort int // Patroni's REST API: GET /primary, /replica, /sync
}

// patroniTTL is how long the primary's leader key lives in etcd without
// being renewed: a primary that died is replaced once it expires, so it
// bounds the write pause of a failover from above (docs/deployment.md).
const patroniTTL = 20 * time.Second

// patroniConfig is node n's Patroni configuration, as JSON (which Patroni
// reads as the YAML it is a subset of): a synchronous standby
// (synchronous_mode) with synchronous_commit on, so that a write the
// primary acknowledged is on the standby that Patroni promotes; pg_rewind,
// so that a killed primary rejoins as a standby. Clients on the servers'
// own networks (samenet: the loopback one here, the compose network in
// docker-compose.cluster.yml) are trusted.
func patroniConfig(scope, etcdAddr, binDir string, n patroniNode) ([]byte, error) {
	hba := []string{"local all all trust", "host all all samenet trust", "host replication all samenet trust"}
	pgAddr := fmt.Sprintf("%s:%d", n.Host, n.PGPort)
	apiAddr := fmt.Sprintf("%s:%d", n.Host, n.APIPort)
	superuser := map[string]string{"username": "postgres"}
	cfg := map[string]any{
		"scope": scope, "name": n.Name,
		"log":     map[string]any{"level": "INFO"},
		"restapi": map[string]any{"listen": apiAddr, "connect_address": apiAddr},
		"etcd3":   map[string]any{"hosts": []string{etcdAddr}},
		"bootstrap": map[string]any{
			"dcs": map[string]any{
				// loop_wait + 2 × retry_timeout must stay within the TTL. A
				// primary that cannot reach etcd within retry_timeout steps
				// down: shorter than this, a busy two-core machine's etcd
				// made Patroni demote a healthy primary.
				"ttl": int(patroniTTL.Seconds()), "loop_wait": 2, "retry_timeout": 9,
				"maximum_lag_on_failover": 0,
				"synchronous_mode":        true,
				"postgresql": map[string]any{
					"use_pg_rewind": true,
					"parameters": map[string]any{
						"synchronous_commit": "on",
						// Three ledgerd pools of LEDGER_DB_MAX_CONNS 32, the check's
						// pool, Patroni's and replication's connections.
						"max_connections": 200,
						"wal_log_hints":   "on",
						"fsync":           "on",
					},
				},
			},
			"initdb": []any{map[string]string{"encoding": "UTF8"}, "no-sync"},
		},
		"postgresql": map[string]any{
			"listen": pgAddr, "connect_address": pgAddr,
			"data_dir": filepath.Join(n.Dir, "data"), "bin_dir": binDir,
			"pgpass":         filepath.Join(n.Dir, "pgpass"),
			"pg_hba":         hba,
			"authentication": map[string]any{"superuser": superuser, "replication": superuser, "rewind": superuser},
			"parameters":     map[string]any{"unix_socket_directories": n.Dir},
		},
	}
	return json.MarshalIndent(cfg, "", "  ")
}

// natsNode is one server of the NATS cluster.
type natsNode struct {
	Name        string
	Host        string // where it listens and is reached: 127.0.0.1 here, its host name in docker-compose.cluster.yml
	Dir         string // JetStream's store
	ClientPort  int
	ClusterPort int
	MonitorPort int // GET /healthz?js-enabled-only=true
}

// natsConfig is node n's configuration in a cluster of nodes: JetStream
// on file storage synced to disk before every acknowledgement.
func natsConfig(n natsNode, nodes []natsNode) string {
	var routes []string
	for _, o := range nodes {
		if o.Name != n.Name {
			routes = append(routes, fmt.Sprintf("nats-route://%s:%d", o.Host, o.ClusterPort))
		}
	}
	return fmt.Sprintf(`server_name: %[1]q
listen: "%[2]s:%[3]d"
http: "%[2]s:%[4]d"
jetstream {
  store_dir: %[5]q
  sync_interval: always
}
cluster {
  name: "ledger"
  listen: "%[2]s:%[6]d"
  routes: [%[7]s]
}
`, n.Name, n.Host, n.ClientPort, n.MonitorPort, n.Dir, n.ClusterPort, strings.Join(routes, ", "))
}

// natsServers is the NATS_URL naming every server of the cluster: a
// ledgerd that starts while one is down connects to another.
func natsServers(nodes []natsNode) string {
	urls := make([]string, len(nodes))
	for i, n := range nodes {
		urls[i] = fmt.Sprintf("nats://%s:%d", n.Host, n.ClientPort)
	}
	return strings.Join(urls, ",")
}

// multiHostDatabaseURL names every Postgres server of the cluster and asks
// for the one that takes writes: whichever Patroni has made primary.
func multiHostDatabaseURL(nodes []patroniNode, database string) string {
	hosts := make([]string, len(nodes))
	for i, n := range nodes {
		hosts[i] = fmt.Sprintf("%s:%d", n.Host, n.PGPort)
	}
	q := url.Values{"sslmode": {"disable"}, "target_session_attrs": {"read-write"}}
	return "postgres://postgres@" + strings.Join(hosts, ",") + "/" + database + "?" + q.Encode()
}

// unavailableAnswer is the load balancer's own answer when no ledgerd can
// take a request (none ready, or the one it was sent to died before
// answering): what ledgerd answers when Postgres is away, a 503
// problem+json with Retry-After, so that a partner retries it with the same
// Idempotency-Key like any other 503.
const unavailableAnswer = "HTTP/1.1 503 Service Unavailable\r\n" +
	"Content-Type: application/problem+json\r\nRetry-After: 1\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n" +
	`{"type":"about:blank","title":"Service Unavailable","status":503,"code":"service_unavailable",` +
	`"detail":"no ledgerd instance could answer; retry with the same Idempotency-Key"}` + "\n"

// haproxyConfig balances listen over backends, sending requests only to
// those whose GET /readyz answers 200. A request whose connection was
// refused is sent to another instance (it reached none); one that an
// instance took and did not answer is not, since only the partner's
// Idempotency-Key makes its retry safe: it gets unavailableAnswer
// (errorFile) and the partner retries.
func haproxyConfig(listen string, backends []string, errorFile string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `global
  maxconn 2000

defaults
  mode http
  timeout connect 1s
  timeout client 60s
  timeout server 30s
  retries 3
  option redispatch
  retry-on conn-failure
  errorfile 502 %[1]s
  errorfile 503 %[1]s
  errorfile 504 %[1]s

frontend ledger
  bind %[2]s
  default_backend ledgerd

backend ledgerd
  balance roundrobin
  option httpchk GET /readyz
  http-check expect status 200
  default-server inter 500ms fall 2 rise 2
`, errorFile, listen)
	for i, addr := range backends {
		fmt.Fprintf(&b, "  server ledgerd-%d %s check\n", i+1, addr)
	}
	return b.String()
}
