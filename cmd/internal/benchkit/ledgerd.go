package benchkit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Ledgerd is a running ledgerd process.
type Ledgerd struct {
	cmd     *exec.Cmd
	Addr    string // host:port it listens on
	BaseURL string // http://Addr
	exited  chan struct{}
	waitErr error // set before exited closes
	gone    bool  // its exit was already returned as an error
}

// StartLedgerd starts bin listening on addr with env, its log (JSON lines)
// on stderr. It runs in a process group of its own, so a Ctrl-C in the
// terminal reaches only the command that started it, which then stops it
// in order.
func StartLedgerd(bin, addr string, env []string, stderr io.Writer) (*Ledgerd, error) {
	cmd := exec.Command(bin)
	cmd.Env = env
	cmd.Stdout = io.Discard // the banner: where it listens, how to get credentials
	cmd.Stderr = stderr
	cmd.SysProcAttr = ChildProcAttr(nil)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start ledgerd: %w", err)
	}
	s := &Ledgerd{cmd: cmd, Addr: addr, BaseURL: "http://" + addr, exited: make(chan struct{})}
	go func() {
		s.waitErr = cmd.Wait()
		close(s.exited)
	}()
	return s, nil
}

// PID is the server's process id.
func (s *Ledgerd) PID() int { return s.cmd.Process.Pid }

// Exited is closed once the process has exited.
func (s *Ledgerd) Exited() <-chan struct{} { return s.exited }

// WaitReady polls GET /readyz until it answers 200, the process exits, or
// limit passes. ledgerd answers 503 until Postgres and NATS are reachable
// and its schema is current.
func (s *Ledgerd) WaitReady(ctx context.Context, limit time.Duration) error {
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

// Stop sends SIGTERM, on which ledgerd drains in-flight requests, stops its
// relay and exits 0, and waits up to limit before killing it. An exit other
// than 0 is an error: the server failed during the run.
func (s *Ledgerd) Stop(limit time.Duration) error {
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

// Kill ends the process at once with SIGKILL and waits for it.
func (s *Ledgerd) Kill() {
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.exited
	s.gone = true
}

// FreeAddr returns a loopback address with a port nobody listens on now.
func FreeAddr() (string, error) {
	port, err := FreePort()
	if err != nil {
		return "", err
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), nil
}

// FreePort returns a loopback port nobody listens on now.
func FreePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
