package main

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ledger/ledger/eventstore/testenv"
)

// nextCommand is the command events export's report says to run next,
// after want ("complete: ... for the events appended later: ", ...).
func nextCommand(t *testing.T, stderr, want string) []string {
	t.Helper()
	_, cmd, ok := strings.Cut(strings.TrimSpace(stderr), want)
	if !ok || !strings.HasPrefix(cmd, "ledgerctl events export") {
		t.Fatalf("stderr %q: want %q followed by a ledgerctl command", stderr, want)
	}
	return strings.Fields(cmd)[1:]
}

// TestEventsExportSaysWhatComesNext: a complete export says so and how to
// fetch the events appended later; one stopped by --limit or interrupted
// says so and gives the exact command that resumes it, and running that
// command exports the rest, nothing twice and nothing skipped.
func TestEventsExportSaysWhatComesNext(t *testing.T) {
	t.Parallel()
	e := newEventsEnv(t)
	for range 3 {
		e.tenant(t, 2)
	}
	e.waitPublished(t)
	all := e.stored(t, "true")
	if len(all) != 15 {
		t.Fatalf("seeded %d events, want 15", len(all))
	}
	ctx := testenv.Context(t, time.Minute)
	runNext := func(args []string) []byte {
		t.Helper()
		var out bytes.Buffer
		if err := run(ctx, args, databaseEnv(e.url), &out); err != nil {
			t.Fatalf("%s: %v", strings.Join(args, " "), err)
		}
		return out.Bytes()
	}

	// Complete, to stdout: the next command asks for what comes after it.
	var stderr, out bytes.Buffer
	var batches []int
	if err := e.exporter(4, &stderr, &batches).run(ctx, []string{"--public"}, &out); err != nil {
		t.Fatal(err)
	}
	next := nextCommand(t, stderr.String(), "complete: 15 events written; last position exported: 15; for the events appended later: ")
	if want := "events export --public=true --after 15"; strings.Join(next, " ") != want {
		t.Fatalf("after a complete export: got %q, want %q", strings.Join(next, " "), want)
	}

	// Stopped by --limit: the command continues it.
	stderr.Reset()
	out.Reset()
	if err := e.exporter(4, &stderr, &batches).run(ctx, []string{"--limit", "6"}, &out); err != nil {
		t.Fatal(err)
	}
	next = nextCommand(t, stderr.String(), "stopped at --limit 6: 6 events written; last position exported: 6; to continue: ")
	if want := "events export --limit 6 --after 6"; strings.Join(next, " ") != want {
		t.Fatalf("after --limit: got %q, want %q", strings.Join(next, " "), want)
	}
	joined := append(out.Bytes(), runNext(next)...)
	checkExported(t, parseNDJSON(t, append(joined, runNext([]string{"events", "export", "--after", "12"})...)), all)

	// Interrupted (Ctrl-C after the first batch): the command resumes it.
	stderr.Reset()
	out.Reset()
	cctx, cancel := context.WithCancel(ctx)
	x := e.exporter(4, &stderr, &batches)
	x.onBatch = func(int) { cancel() }
	if err := x.run(cctx, []string{"--after", "2"}, &out); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted export: got %v, want context.Canceled", err)
	}
	next = nextCommand(t, stderr.String(), "interrupted: 4 events written; last position exported: 6; to resume: ")
	checkExported(t, parseNDJSON(t, append(out.Bytes(), runNext(next)...)), all[2:])

	// To a file: the same command, which continues after the file's last line.
	file := filepath.Join(t.TempDir(), "events.ndjson")
	stderr.Reset()
	if err := e.exporter(4, &stderr, &batches).run(ctx, []string{"--out", file, "--limit", "10"}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	next = nextCommand(t, stderr.String(), "to continue: ")
	if want := "events export --limit 10 --out " + shellQuote(file); strings.Join(next, " ") != want {
		t.Fatalf("after --out: got %q, want %q", strings.Join(next, " "), want)
	}
	runNext(next)
	checkExported(t, parseNDJSON(t, readFile(t, file)), all)
}

func TestShellQuote(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"ledger.payment.deposited.v1": "ledger.payment.deposited.v1",
		"/tmp/a b.ndjson": "'/tmp/a b.ndjson'", "it's": `'it'\''s'`, "": "''"} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q): got %s, want %s", in, got, want)
		}
	}
}
