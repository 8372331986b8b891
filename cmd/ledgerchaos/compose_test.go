package main

import (
	"fmt"
	"os"
	"reflect"
	"testing"

	"go.yaml.in/yaml/v3"
)

// composeFile is what TestComposeClusterIsTheScenariosTopology reads of
// docker-compose.cluster.yml.
type composeFile struct {
	Services map[string]struct {
		Environment map[string]string `yaml:"environment"`
		Configs     []struct {
			Source string `yaml:"source"`
			Target string `yaml:"target"`
		} `yaml:"configs"`
	} `yaml:"services"`
	Configs map[string]struct {
		Content string `yaml:"content"`
	} `yaml:"configs"`
}

// TestComposeClusterIsTheScenariosTopology checks that
// docker-compose.cluster.yml runs what the cluster scenario proves: each
// server's configuration is the one chaos_ha_config.go writes for it (with
// the compose network's host names and the images' paths for loopback
// ports and scenario directories), and every ledgerd is given every
// Postgres and NATS server, asks for the primary and keeps 3 replicas.
func TestComposeClusterIsTheScenariosTopology(t *testing.T) {
	body, err := os.ReadFile("../../docker-compose.cluster.yml")
	if err != nil {
		t.Fatal(err)
	}
	var c composeFile
	if err := yaml.Unmarshal(body, &c); err != nil {
		t.Fatalf("docker-compose.cluster.yml: %v", err)
	}
	// mounted returns the content of the config service mounts at target.
	mounted := func(service, target string) string {
		t.Helper()
		s, ok := c.Services[service]
		if !ok {
			t.Fatalf("no service %s", service)
		}
		for _, m := range s.Configs {
			if m.Target == target {
				return c.Configs[m.Source].Content
			}
		}
		t.Fatalf("service %s mounts nothing at %s", service, target)
		return ""
	}

	var pg []patroniNode
	for _, name := range []string{"pg-a", "pg-b"} {
		n := patroniNode{Name: name, Host: name, Dir: "/var/lib/postgresql", PGPort: 5432, APIPort: 8008}
		pg = append(pg, n)
		want, err := patroniConfig("ledger", "etcd:2379", "/usr/lib/postgresql/16/bin", n)
		if err != nil {
			t.Fatal(err)
		}
		var got, wantTree any
		if err := yaml.Unmarshal([]byte(mounted(name, "/etc/patroni.yml")), &got); err != nil {
			t.Fatalf("%s's Patroni configuration: %v", name, err)
		}
		if err := yaml.Unmarshal(want, &wantTree); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, wantTree) {
			t.Errorf("%s's Patroni configuration differs from the scenario's; want (as YAML, JSON being YAML):\n%s", name, want)
		}
	}

	var nats []natsNode
	for i := 1; i <= 3; i++ {
		name := fmt.Sprintf("nats%d", i)
		nats = append(nats, natsNode{Name: name, Host: name, Dir: "/data", ClientPort: 4222, ClusterPort: 6222, MonitorPort: 8222})
	}
	for _, n := range nats {
		if got, want := mounted(n.Name, "/etc/nats/ledger.conf"), natsConfig(n, nats); got != want {
			t.Errorf("%s's configuration:\n%s\nwant the scenario's:\n%s", n.Name, got, want)
		}
	}

	const errorFile = "/usr/local/etc/haproxy/ledger-503.http"
	if got, want := mounted("haproxy", "/usr/local/etc/haproxy/haproxy.cfg"),
		haproxyConfig(":8080", []string{"ledgerd-1:8080", "ledgerd-2:8080", "ledgerd-3:8080"}, errorFile); got != want {
		t.Errorf("HAProxy's configuration:\n%s\nwant the scenario's:\n%s", got, want)
	}
	if got := mounted("haproxy", errorFile); got != unavailableAnswer {
		t.Errorf("HAProxy's 503 answer %q, want the scenario's %q", got, unavailableAnswer)
	}

	for i := 1; i <= 3; i++ {
		name := fmt.Sprintf("ledgerd-%d", i)
		env := c.Services[name].Environment
		for k, want := range map[string]string{"DATABASE_URL": multiHostDatabaseURL(pg, "ledger"),
			"NATS_URL": natsServers(nats), "LEDGER_NATS_REPLICAS": fmt.Sprint(len(nats))} {
			if env[k] != want {
				t.Errorf("%s: %s=%q, want %q", name, k, env[k], want)
			}
		}
	}
}
