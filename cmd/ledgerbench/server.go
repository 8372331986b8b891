package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ledgerProgram is the import path of the ledger's commands, so that go build
// finds them from anywhere inside the module, not only from its root.
const ledgerProgram = "github.com/ledger/ledger/cmd/"

// buildCommands builds the named commands of cmd/ (ledgerd, ledgerctl) into
// dir and returns their paths, in the order of names. A real binary, not
// go run, so that the process ledgerbench starts, signals and samples is
// the server itself.
func buildCommands(ctx context.Context, dir string, stderr io.Writer, names ...string) ([]string, error) {
	if len(names) == 0 {
		return nil, nil
	}
	args := []string{"build", "-o", dir + string(filepath.Separator)}
	paths := make([]string, len(names))
	for i, n := range names {
		args = append(args, ledgerProgram+n)
		paths[i] = filepath.Join(dir, n)
	}
	fmt.Fprintf(stderr, "ledgerbench: building %s\n", strings.Join(names, ", "))
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Stdout, cmd.Stderr = stderr, stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go build %s: %w (run ledgerbench inside the ledger module, or name binaries with -%s)",
			strings.Join(names, " "), err, strings.Join(names, ", -"))
	}
	return paths, nil
}

// ledgerEnv returns the environment for ledgerd and ledgerctl: this
// process's, without any ledger setting of the caller's shell (a stray
// LEDGER_MODE or NATS_URL would change what is measured), plus settings.
func ledgerEnv(settings ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "LEDGER_") || name == "DATABASE_URL" || name == "NATS_URL" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, settings...)
}

// databaseURLFor returns serverURL naming database name instead of its own.
// serverURL must be a postgres:// URL, which ledgerd and ledgerctl read from
// DATABASE_URL.
func databaseURLFor(serverURL, name string) (string, error) {
	u, err := url.Parse(serverURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Host == "" {
		return "", fmt.Errorf("-database-url must be a postgres://host/database URL, not %q", serverURL)
	}
	u.Path, u.RawPath = "/"+name, ""
	return u.String(), nil
}

// freeAddr returns a loopback address with a port nobody listens on now.
func freeAddr() (string, error) {
	port, err := freePort()
	if err != nil {
		return "", err
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), nil
}

// ledgerd is a running ledgerd process.
type ledgerd struct {
	cmd     *exec.Cmd
	Addr    string // host:port it listens on
	BaseURL string // http://Addr
	exited  chan struct{}
	waitErr error // set before exited closes
	gone    bool  // its exit was already returned as an error
}

// startLedgerd starts bin listening on addr with env, its log (JSON lines)
// on stderr. It runs in a process group of its own, so a Ctrl-C in the
// terminal reaches only ledgerbench, which then stops it in order.
func startLedgerd(bin, addr string, env []string, stderr io.Writer) (*ledgerd, error) {
	cmd := exec.Command(bin)
	cmd.Env = env
	cmd.Stdout = io.Discard // the banner: where it listens, how to get credentials
	cmd.Stderr = stderr
	cmd.SysProcAttr = childProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start ledgerd: %w", err)
	}
	s := &ledgerd{cmd: cmd, Addr: addr, BaseURL: "http://" + addr, exited: make(chan struct{})}
	go func() {
		s.waitErr = cmd.Wait()
		close(s.exited)
	}()
	return s, nil
}

// PID is the server's process id.
func (s *ledgerd) PID() int { return s.cmd.Process.Pid }

// waitReady polls GET /readyz until it answers 200, the process exits, or
// limit passes. ledgerd answers 503 until Postgres and NATS are reachable
// and its schema is current.
func (s *ledgerd) waitReady(ctx context.Context, limit time.Duration) error {
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(limit)
	last := "no answer yet"
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.BaseURL+"/readyz", nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Sprintf("%s: %s", resp.Status, strings.TrimSpace(string(body)))
		} else {
			last = err.Error()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("ledgerd not ready after %v (GET /readyz: %s)", limit, last)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.exited:
			s.gone = true
			return fmt.Errorf("ledgerd exited before it was ready (%v); its log is above", s.waitErr)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// stop sends SIGTERM, on which ledgerd drains in-flight requests, stops its
// relay and exits 0, and waits up to limit before killing it. An exit other
// than 0 is an error: the server failed during the run.
func (s *ledgerd) stop(limit time.Duration) error {
	select {
	case <-s.exited:
		if s.gone {
			return nil
		}
		return fmt.Errorf("ledgerd exited during the run: %v", s.waitErr)
	default:
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("stop ledgerd: %w", err)
	}
	select {
	case <-s.exited:
		if s.waitErr != nil {
			return fmt.Errorf("ledgerd after SIGTERM: %w", s.waitErr)
		}
		return nil
	case <-time.After(limit):
		s.cmd.Process.Kill()
		<-s.exited
		return fmt.Errorf("ledgerd did not stop within %v of SIGTERM; killed", limit)
	}
}
