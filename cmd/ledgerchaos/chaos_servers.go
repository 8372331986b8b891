package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/ledger/ledger/cmd/internal/benchkit"
)

// ledgerchaos stops and restarts Postgres and NATS under load. It never
// touches the machine's own servers (other tests and a developer's ledgerd
// use them): each scenario runs a Postgres cluster and a NATS server of its
// own, on free loopback ports, in a temporary directory.

// privatePostgres is a throwaway Postgres cluster (initdb + pg_ctl).
type privatePostgres struct {
	binDir  string   // where initdb and pg_ctl are
	dir     string   // data directory and socket directory live under it
	port    int      // loopback TCP port
	runAs   []string // runuser prefix when this process is root (initdb refuses root)
	URL     string   // postgres://postgres@127.0.0.1:port/postgres?sslmode=disable
	logPath string
}

// postgresBinDir finds the server binaries: $PG_BINDIR, or the newest
// /usr/lib/postgresql/<version>/bin (Debian's layout).
func postgresBinDir() (string, error) {
	if d := os.Getenv("PG_BINDIR"); d != "" {
		return d, nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool {
		vi, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[i])))
		vj, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[j])))
		return vi < vj
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		if _, err := os.Stat(filepath.Join(dirs[i], "pg_ctl")); err == nil {
			return dirs[i], nil
		}
	}
	return "", errors.New("no Postgres server binaries (initdb, pg_ctl): set PG_BINDIR")
}

// startPrivatePostgres creates a cluster under dir and starts it.
func startPrivatePostgres(ctx context.Context, dir string) (*privatePostgres, error) {
	bin, err := postgresBinDir()
	if err != nil {
		return nil, err
	}
	port, err := benchkit.FreePort()
	if err != nil {
		return nil, err
	}
	p := &privatePostgres{binDir: bin, dir: dir, port: port, logPath: filepath.Join(dir, "postgres.log"),
		URL: fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("running as root, initdb needs the postgres user: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			return nil, err
		}
		p.runAs = []string{"runuser", "-u", "postgres", "--"}
	}
	if err := p.run(ctx, "initdb", "-D", p.dataDir(), "-U", "postgres", "--auth=trust", "-N", "-E", "UTF8"); err != nil {
		return nil, err
	}
	err = p.start(ctx)
	return p, err
}

func (p *privatePostgres) dataDir() string { return filepath.Join(p.dir, "data") }

// start starts the server and waits until it accepts connections. Three
// ledgerd pools of 32 fit in max_connections.
func (p *privatePostgres) start(ctx context.Context) error {
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c max_connections=200 -c fsync=on", p.port, p.dir)
	return p.run(ctx, "pg_ctl", "-D", p.dataDir(), "-o", opts, "-l", p.logPath, "-w", "-t", "60", "start")
}

// stop shuts the server down: mode fast ends every session at once (a
// restart as an operator does it), immediate is a crash.
func (p *privatePostgres) stop(ctx context.Context, mode string) error {
	return p.run(ctx, "pg_ctl", "-D", p.dataDir(), "-m", mode, "-w", "-t", "60", "stop")
}

func (p *privatePostgres) run(ctx context.Context, program string, args ...string) error {
	argv := append(append(append([]string{}, p.runAs...), filepath.Join(p.binDir, program)), args...)
	out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w: %s", program, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// privateNATS is a NATS server with JetStream run inside ledgerchaos, so a
// scenario can stop it and start it again on the same port and store.
type privateNATS struct {
	opts server.Options
	srv  *server.Server
	URL  string
}

// startPrivateNATS starts a JetStream server storing under dir.
func startPrivateNATS(dir string) (*privateNATS, error) {
	port, err := benchkit.FreePort()
	if err != nil {
		return nil, err
	}
	n := &privateNATS{URL: fmt.Sprintf("nats://127.0.0.1:%d", port), opts: server.Options{
		ServerName: "ledgerchaos", Host: "127.0.0.1", Port: port, JetStream: true,
		StoreDir: dir, SyncAlways: true, NoSigs: true, NoLog: true}}
	err = n.start()
	return n, err
}

// start runs a new server with the same options (a server cannot be
// started again after Shutdown).
func (n *privateNATS) start() error {
	opts := n.opts
	srv, err := server.NewServer(&opts)
	if err != nil {
		return fmt.Errorf("nats server: %w", err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(15 * time.Second) {
		srv.Shutdown()
		return fmt.Errorf("nats server did not start on port %d", n.opts.Port)
	}
	n.srv = srv
	return nil
}

// stop shuts the server down; clients see their connections close.
func (n *privateNATS) stop() {
	if n.srv != nil {
		n.srv.Shutdown()
		n.srv.WaitForShutdown()
		n.srv = nil
	}
}
