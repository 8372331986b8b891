package main

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/ledger/ledger/cmd/internal/benchkit"
)

// startProcess runs the ledgerd binary, as an operator would, with
// startServer's settings and env, and waits until it is ready. Tests use
// it to kill ledgerd (a crash: SIGKILL, no drain, no cleanup) or to give it
// what only a process has (SSL_CERT_FILE for the system roots it trusts).
// It is stopped with SIGTERM, and its exit checked, when t ends.
func startProcess(t *testing.T, env map[string]string) *testServer {
	t.Helper()
	bin := command(t, "ledgerd")
	vars, stream := serverVars(t, env)
	addr, err := benchkit.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	vars["LEDGER_ADDR"] = addr
	environ := os.Environ()
	for k, v := range vars {
		environ = append(environ, k+"="+v)
	}
	logs := &lockedBuffer{}
	proc, err := benchkit.StartLedgerd(bin, addr, environ, logs)
	if err != nil {
		t.Fatal(err)
	}
	s := &testServer{URL: proc.BaseURL, DatabaseURL: vars["DATABASE_URL"], Stream: stream, proc: proc, logs: logs}
	t.Cleanup(func() {
		if err := s.stop(); err != nil {
			t.Errorf("ledgerd process: got %v, want a clean exit", err)
		}
		if t.Failed() {
			t.Logf("ledgerd process log:\n%s", logs.String())
		}
	})
	if err := proc.WaitReady(context.Background(), time.Minute); err != nil {
		t.Fatal(err)
	}
	return s
}

// kill ends a process-run ledgerd at once with SIGKILL and waits for it.
func (s *testServer) kill() { s.proc.Kill() }

// asProcess stops s, an in-process server a test set up its tenants
// with, and runs ledgerd as a process in its place, with env.
func asProcess(t *testing.T, s *testServer, env map[string]string) *testServer {
	t.Helper()
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	return startProcess(t, onStore(s, env))
}
