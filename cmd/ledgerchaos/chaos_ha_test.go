package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ledger/ledger/eventstore/testenv"
)

// TestClusterScenarioShort runs the cluster scenario in short form: the
// Postgres primary, the stream's NATS leader and a ledgerd killed under
// load and brought back, then a rolling restart, and every check of the
// other scenarios after it. It needs Debian's patroni, etcd-server and
// haproxy (.ci/cluster-deps): without them it is skipped on a developer's
// machine, but fails under CI=true, where it must run.
func TestClusterScenarioShort(t *testing.T) {
	if missing := missingHABinaries(); len(missing) > 0 {
		testenv.MissingSoftware(t, "the cluster scenario needs "+strings.Join(missing, ", "), "run .ci/cluster-deps")
	}
	if testing.Short() {
		t.Skip("the cluster scenario takes minutes")
	}
	out := filepath.Join(t.TempDir(), "chaos.json")
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	var stdout bytes.Buffer
	err := run(ctx, []string{"-scenarios", "cluster", "-duration", "12s", "-throughput", "3s", "-workers", "8", "-rate", "20", "-out", out}, &stdout, os.Stderr)
	t.Log(stdout.String())
	if err != nil {
		t.Fatal(err)
	}
	body, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var results []chaosResult
	if err := json.Unmarshal(body, &results); err != nil {
		t.Fatal(err)
	}
	if len(results) != 1 || !results[0].Passed {
		t.Fatalf("want the cluster scenario passed, got %+v", results)
	}
	for _, fault := range []string{"PostgresPrimaryKilled", "NATSStreamLeaderKilled", "LedgerdKilled", "RollingRestart"} {
		if _, ok := results[0].Notes["writePauseMs"+fault]; !ok {
			t.Errorf("no write pause measured for %s", fault)
		}
	}
}
