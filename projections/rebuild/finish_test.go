package rebuild

import (
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestFinishStepsRunAfterWhatTheyWaitFor runs steps on two connections,
// each recording when it starts and sleeping while it holds a row's lock,
// and finds every step started after the steps it waits for ended, two
// steps that wait for nothing at the same time, and a failed step's
// dependents never started.
func TestFinishStepsRunAfterWhatTheyWaitFor(t *testing.T) {
	t.Parallel()
	ctx, conns := testConns(t, 2)
	if _, err := conns[0].Exec(ctx, `CREATE TABLE log (step text PRIMARY KEY, started timestamptz, ended timestamptz)`); err != nil {
		t.Fatal(err)
	}
	// Each step logs its start and end in a transaction of its own.
	step := func(name string) *finishStep {
		return newFinishStep(`INSERT INTO log VALUES ('` + name + `', clock_timestamp(), NULL); ` +
			`SELECT pg_sleep(0.2); UPDATE log SET ended = clock_timestamp() WHERE step = '` + name + `'`)
	}
	keysA, keysB := step("keys a"), step("keys b")
	indexA1, indexA2, indexB := step("index a1"), step("index a2"), step("index b")
	analyzeA, analyzeB := step("analyze a"), step("analyze b")
	for _, ix := range []*finishStep{indexA1, indexA2} {
		keysA.then(ix)
		ix.then(analyzeA)
	}
	keysB.then(indexB)
	indexB.then(analyzeB)
	waits := map[string][]string{"index a1": {"keys a"}, "index a2": {"keys a"}, "index b": {"keys b"},
		"analyze a": {"index a1", "index a2"}, "analyze b": {"index b"}}
	steps := []*finishStep{keysA, keysB, indexA1, indexA2, indexB, analyzeA, analyzeB}
	if err := runFinishSteps(ctx, conns, steps); err != nil {
		t.Fatal(err)
	}
	started, ended := map[string]time.Time{}, map[string]time.Time{}
	rows, err := conns[0].Query(ctx, `SELECT step, started, ended FROM log`)
	if err != nil {
		t.Fatal(err)
	}
	var name string
	var s, e time.Time
	if _, err := pgx.ForEachRow(rows, []any{&name, &s, &e}, func() error {
		started[name], ended[name] = s, e
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(started) != len(steps) {
		t.Fatalf("%d steps ran, want %d: %v", len(started), len(steps), started)
	}
	for s, before := range waits {
		for _, b := range before {
			if started[s].Before(ended[b]) {
				t.Errorf("%s started at %v, before %s ended at %v", s, started[s], b, ended[b])
			}
		}
	}
	if !started["keys b"].Before(ended["keys a"]) {
		t.Errorf("keys b started at %v, after keys a ended at %v: one connection idled", started["keys b"], ended["keys a"])
	}

	if _, err := conns[0].Exec(ctx, `TRUNCATE log`); err != nil {
		t.Fatal(err)
	}
	broken, after := newFinishStep(`SELECT 1/0`), step("after the broken one")
	broken.then(after)
	err = runFinishSteps(ctx, conns, []*finishStep{broken, after, step("independent")})
	if err == nil || !strings.Contains(err.Error(), "SELECT 1/0") {
		t.Fatalf("runFinishSteps = %v, want the failed statement's error", err)
	}
	var ran []string
	rows, err = conns[0].Query(ctx, `SELECT step FROM log ORDER BY step`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pgx.ForEachRow(rows, []any{&name}, func() error { ran = append(ran, name); return nil }); err != nil {
		t.Fatal(err)
	}
	for _, r := range ran {
		if r == "after the broken one" {
			t.Errorf("a step waiting for a failed one ran (ran: %v)", ran)
		}
	}
}
