package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestGracefulShutdown cancels serve's context while a request is half
// sent: serve waits for it, the request gets its answer, and then serve
// returns nil and the port is closed.
func TestGracefulShutdown(t *testing.T) {
	t.Parallel()
	s := startServer(t, nil)
	tn := s.createTenant(t, "Hooli")
	body := fmt.Sprintf(`{"apiKey":%q,"apiSecret":%q}`, tn.APIKey, tn.APISecret)
	addr := strings.TrimPrefix(s.URL, "http://")

	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer conn.Close()
	half := len(body) / 2
	fmt.Fprintf(conn, "POST /token HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		addr, len(body), body[:half])
	time.Sleep(100 * time.Millisecond) // let the server start on the request

	s.cancel()
	select {
	case err := <-s.done:
		s.done <- err // for stop
		t.Fatalf("serve returned %v with a request in flight, want it to wait", err)
	case <-time.After(300 * time.Millisecond):
	}
	if _, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		t.Errorf("dial after cancellation: got a connection, want the listener closed")
	}

	if _, err := conn.Write([]byte(body[half:])); err != nil {
		t.Fatalf("finish the request: %v", err)
	}
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("read response: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("in-flight request: got %d, want 200", resp.StatusCode)
	}

	done := make(chan error, 1)
	go func() { done <- s.stop() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve: got %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("serve did not return within 10 s of the last request")
	}
}

// TestRun runs ledgerd's run with a fake environment: it prints where it
// listens, serves there, and returns nil when its context ends.
func TestRun(t *testing.T) {
	t.Parallel()
	env, _ := serverVars(t, map[string]string{"LEDGER_MASTER_KEY_FILE": "", "LEDGER_DATA_DIR": t.TempDir()}) // the sandbox's master key
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr lockedBuffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, nil, func(k string) string { return env[k] }, &stdout, &stderr) }()

	var url string
	for deadline := time.Now().Add(20 * time.Second); url == ""; {
		if i := strings.Index(stdout.String(), "listening on "); i >= 0 {
			url = strings.Fields(stdout.String()[i+len("listening on "):])[0]
			break
		}
		select {
		case err := <-done:
			t.Fatalf("run returned %v before listening; stderr:\n%s", err, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("run did not print its address within 20 s; stderr:\n%s", stderr.String())
		}
	}
	resp, err := http.Get(url + "/readyz")
	if err != nil {
		t.Fatalf("GET /readyz: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /readyz: got %d, want 200", resp.StatusCode)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run: got %v, want nil", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("run did not return within 30 s of cancellation")
	}
	if !strings.Contains(stderr.String(), `"msg":"stopped"`) {
		t.Errorf("log: got %s, want a JSON \"stopped\" line", stderr.String())
	}
}
