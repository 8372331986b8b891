package main

import (
	"context"
	"fmt"
	"os"
	"runtime"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"
)

// machine describes where the figures were measured; they mean little
// without it. The Postgres settings listed are the ones that move commit
// rates most (a commit waits for one WAL flush when synchronous_commit is on).
type machine struct {
	Hostname           string            `json:"hostname"`
	NumCPU             int               `json:"numCPU"`
	GOOS               string            `json:"goos"`
	GOARCH             string            `json:"goarch"`
	GoVersion          string            `json:"goVersion"`
	PostgresVersion    string            `json:"postgresVersion"`
	PostgresSettings   map[string]string `json:"postgresSettings"`
	NATSVersion        string            `json:"natsVersion"`
	LoadAverage        string            `json:"loadAverage,omitempty"`        // before the run: other work skews the figures
	CPUReferenceUs     float64           `json:"cpuReferenceUs,omitempty"`     // cpuReferenceMicros at the start: the machine's speed that day
	SyscallReferenceNs float64           `json:"syscallReferenceNs,omitempty"` // syscallReferenceNanos at the start: what its kernel entries cost
}

// references are the machine's two references with their names, for a
// report's header line.
func (m machine) references() string {
	return "CPU reference (a payment's JSON encoded and decoded, one core): " + m.cpuReferenceFigure() +
		"; system call reference (getppid): " + m.syscallReferenceFigure()
}

var reportedSettings = []string{"synchronous_commit", "fsync", "wal_sync_method", "commit_delay", "shared_buffers", "max_connections"}

func describeMachine(ctx context.Context, pool *pgxpool.Pool, nc *nats.Conn) (machine, error) {
	m, err := describeProcessMachine(ctx, pool, reportedSettings)
	m.NATSVersion = nc.ConnectedServerVersion()
	return m, err
}

// describeProcessMachine is this process's machine and the Postgres
// settings named: what every mode reports, NATS aside.
func describeProcessMachine(ctx context.Context, pool *pgxpool.Pool, settings []string) (machine, error) {
	host, _ := os.Hostname()
	m := machine{Hostname: host, NumCPU: runtime.NumCPU(), GOOS: runtime.GOOS, GOARCH: runtime.GOARCH,
		GoVersion: runtime.Version(), LoadAverage: loadAverage(), PostgresSettings: map[string]string{},
		CPUReferenceUs: cpuReferenceMicros(), SyscallReferenceNs: syscallReferenceNanos()}
	if err := pool.QueryRow(ctx, "SHOW server_version").Scan(&m.PostgresVersion); err != nil {
		return m, fmt.Errorf("describe machine: postgres version: %w", err)
	}
	for _, name := range settings {
		var v string
		if err := pool.QueryRow(ctx, "SELECT current_setting($1)", name).Scan(&v); err != nil {
			return m, fmt.Errorf("describe machine: postgres %s: %w", name, err)
		}
		m.PostgresSettings[name] = v
	}
	return m, nil
}
