package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledger/ledger/cmd/internal/embeddednats"
	"github.com/ledger/ledger/eventstore/testenv"
)

// TestEventsServerDefaultsToTheEmbeddedServer: without NATS_URL, the
// server is where a default ledgerd embeds one, with its token.
func TestEventsServerDefaultsToTheEmbeddedServer(t *testing.T) {
	t.Parallel()
	env := func(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }
	s, err := eventsServer(env(nil))
	if s.url != "nats://127.0.0.1:4223" || err == nil ||
		!strings.Contains(err.Error(), "nats://127.0.0.1:4223") || !strings.Contains(err.Error(), filepath.Join(".ledger", "nats-token")) {
		t.Fatalf("defaults: got %s, %v; want nats://127.0.0.1:4223 and an error naming it and ./.ledger/nats-token", s.url, err)
	}
	if s, err := eventsServer(env(map[string]string{"NATS_URL": "nats://nats.internal:4222"})); err != nil || s.url != "nats://nats.internal:4222" || s.opts != nil {
		t.Fatalf("NATS_URL: got %s, %d options, %v; want NATS_URL as it is", s.url, len(s.opts), err)
	}
	if s, _ := eventsServer(env(map[string]string{"NATS_URL": "nats://s3cret@nats.internal:4222"})); strings.Contains(s.String(), "s3cret") {
		t.Errorf("NATS_URL with a token: messages name it as %s, want the token redacted", s)
	}
	dir := t.TempDir()
	if _, err := embeddednats.LoadOrCreateToken(dir); err != nil {
		t.Fatal(err)
	}
	s, err = eventsServer(env(map[string]string{"LEDGER_EMBEDDED_NATS_ADDR": "127.0.0.1:5000", "LEDGER_DATA_DIR": dir}))
	if err != nil || s.url != "nats://127.0.0.1:5000" || len(s.opts) != 1 {
		t.Fatalf("ledgerd's settings: got %s, %d options, %v; want its address and token", s.url, len(s.opts), err)
	}
}

// TestEventsTailOnTheEmbeddedServer: with ledgerd's environment and no
// NATS_URL, events tail gets into a token-protected server as ledgerd's
// embedded one is, and an error names the server and stream it tried.
// Not parallel: events tail reads the environment.
func TestEventsTailOnTheEmbeddedServer(t *testing.T) {
	dataDir := t.TempDir()
	token, err := embeddednats.LoadOrCreateToken(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, Authorization: token, JetStream: true,
		StoreDir: t.TempDir(), NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	t.Cleanup(ns.Shutdown)
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats server not ready")
	}
	addr := ns.Addr().String()
	t.Setenv("NATS_URL", "")
	t.Setenv("LEDGER_EMBEDDED_NATS_ADDR", addr)
	t.Setenv("LEDGER_DATA_DIR", dataDir)
	ctx := testenv.Context(t, 30*time.Second)

	err = run(ctx, []string{"events", "tail", "--stream", "NOSUCH"}, databaseEnv(""), &tailLines{})
	for _, want := range []string{"nats://" + addr, "embedded", "stream NOSUCH", "not found"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("missing stream: got %v, want an error with %q", err, want)
		}
	}

	nc, err := nats.Connect("nats://"+addr, nats.Token(token))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "LEDGER", Subjects: []string{"ledger.>"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "ledger.t.tenant.a.created", []byte(`{"id": "e1"}`)); err != nil {
		t.Fatal(err)
	}
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := &tailLines{want: 1, cancel: cancel}
	if err := run(tctx, []string{"events", "tail", "--from-start"}, databaseEnv(""), w); err != nil {
		t.Fatalf("events tail: %v", err)
	}
	if got := w.buf.String(); got != "{\"id\":\"e1\"}\n" {
		t.Fatalf("events tail: got %q, want the one event", got)
	}
}
