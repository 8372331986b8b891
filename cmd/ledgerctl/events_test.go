package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore"
	"github.com/ledger/ledger/eventstore/apikeys"
	"github.com/ledger/ledger/eventstore/testenv"
)

// The events tests run `ledgerctl events export` and `events tail` on a
// database of their own on the real Postgres, with the relay (which runs the
// sequencer, so events get their positions) publishing to a JetStream stream
// of their own on the real NATS server.

// eventsEnv is a migrated database, and the stream its relay publishes to.
type eventsEnv struct {
	url    string
	db     *database
	stream testenv.Stream
	relay  func() // stops the relay; may be called again
}

func newEventsEnv(t *testing.T) *eventsEnv {
	t.Helper()
	ctx := testenv.Context(t, time.Minute)
	e := &eventsEnv{url: testenv.NewDatabase(t), stream: testenv.NewStream(t)}
	db, err := openDatabase(ctx, e.url)
	if err != nil {
		t.Fatalf("open database: %v", err)
	}
	t.Cleanup(db.close)
	e.db = db
	js := testenv.JetStream(t)
	relay := eventstore.NewRelay(db.pool, js, eventstore.RelayConfig{Stream: e.stream.Name, SubjectPrefix: e.stream.SubjectPrefix},
		slog.New(slog.DiscardHandler), nil)
	runCtx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { relay.Run(runCtx); close(done) }()
	var once sync.Once
	e.relay = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(e.relay)
	return e
}

// tenant appends a new tenant's first events as `ledgerctl tenant create`
// does (tenant.created, tenant.api_key_created, and user.created, whose
// email and name are personal data), then keys more API keys, and returns
// the tenant's id and its owner's email.
func (e *eventsEnv) tenant(t *testing.T, keys int) (uuid.UUID, string) {
	t.Helper()
	ctx := testenv.Context(t, time.Minute)
	apiKey, _, secretHash := apikeys.NewPair()
	c := domain.CreateTenant{TenantID: uuid.Must(uuid.NewV7()), OwnerUserID: uuid.Must(uuid.NewV7()),
		Name: "Tenant " + testenv.Name(""), OwnerEmail: testenv.Name("owner-") + "@example.com", APIKey: apiKey, SecretHash: secretHash}
	tenantEvents, ownerEvents, err := domain.DecideCreateTenant(c)
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.db.store.Append(ctx, operator,
		eventstore.Batch{Stream: tenantStream(c.TenantID), Events: tenantEvents},
		eventstore.Batch{Stream: domain.StreamRef{TenantID: c.TenantID, Type: "user", ID: c.OwnerUserID}, Events: ownerEvents})
	if err != nil {
		t.Fatalf("create tenant: %v", err)
	}
	for range keys {
		apiKey, _, secretHash := apikeys.NewPair()
		_, err := eventstore.Execute(ctx, e.db.store, tenantStream(c.TenantID), operator, domain.ApplyTenant,
			func(t domain.Tenant) ([]domain.Event, error) { return domain.DecideCreateAPIKey(t, apiKey, secretHash) })
		if err != nil {
			t.Fatalf("create api key: %v", err)
		}
	}
	return c.TenantID, c.OwnerEmail
}

func tenantStream(id uuid.UUID) domain.StreamRef {
	return domain.StreamRef{TenantID: id, Type: "tenant", ID: id}
}

// waitPublished waits until every event is sequenced and published.
func (e *eventsEnv) waitPublished(t *testing.T) {
	t.Helper()
	ctx := testenv.Context(t, 30*time.Second)
	for {
		var last, published, waiting int64
		err := e.db.pool.QueryRow(ctx, `SELECT last_position, published_position,
			(SELECT count(*) FROM events WHERE position IS NULL) FROM sequencer_state`).Scan(&last, &published, &waiting)
		if err != nil {
			t.Fatalf("read sequencer state: %v", err)
		}
		if waiting == 0 && published == last {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("events not published: %d unsequenced, published %d of %d", waiting, published, last)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// storedEvent is what the events table holds of one sequenced event.
type storedEvent struct {
	ID, TenantID, Type, Hash, PrevHash string
	Position                           int64
	Data                               map[string]any
}

// stored returns the sequenced events matching where (SQL, "true" for all),
// in position order.
func (e *eventsEnv) stored(t *testing.T, where string, args ...any) []storedEvent {
	t.Helper()
	ctx := testenv.Context(t, 30*time.Second)
	rows, err := e.db.pool.Query(ctx, `SELECT id::text, tenant_id::text, 'ledger.' || type || '.v' || schema_version,
		hash, prevhash, position, data FROM events WHERE position IS NOT NULL AND (`+where+`) ORDER BY position`, args...)
	if err != nil {
		t.Fatalf("read events: %v", err)
	}
	evs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (storedEvent, error) {
		var s storedEvent
		err := row.Scan(&s.ID, &s.TenantID, &s.Type, &s.Hash, &s.PrevHash, &s.Position, &s.Data)
		return s, err
	})
	if err != nil {
		t.Fatalf("read events: %v", err)
	}
	return evs
}

// export runs `ledgerctl events export args...` through run and returns its output.
func (e *eventsEnv) export(t *testing.T, args ...string) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := run(testenv.Context(t, time.Minute), append([]string{"events", "export"}, args...), databaseEnv(e.url), &out); err != nil {
		t.Fatalf("events export %s: %v", strings.Join(args, " "), err)
	}
	return out.Bytes()
}

// exporter returns the command's exporter with batches of batchSize, its
// report going to stderr and the rows of each query appended to batches.
func (e *eventsEnv) exporter(batchSize int, stderr *bytes.Buffer, batches *[]int) exporter {
	return exporter{db: e.db, batchSize: batchSize, stderr: stderr,
		onBatch: func(n int) { *batches = append(*batches, n) }}
}

// exported is one NDJSON line: its envelope, and its data decoded.
type exported struct {
	domain.CloudEvent
	Fields map[string]any
}

func parseNDJSON(t *testing.T, out []byte) []exported {
	t.Helper()
	var evs []exported
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev exported
		if err := json.Unmarshal(sc.Bytes(), &ev.CloudEvent); err != nil {
			t.Fatalf("line %d: %v: %q", len(evs)+1, err, sc.Text())
		}
		if err := json.Unmarshal(ev.Data, &ev.Fields); err != nil {
			t.Fatalf("line %d: data: %v", len(evs)+1, err)
		}
		evs = append(evs, ev)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) > 0 && out[len(out)-1] != '\n' {
		t.Fatalf("output does not end with a newline: %q", out[max(0, len(out)-80):])
	}
	return evs
}

// checkExported checks that got is exactly want, in the same order: same
// ids, positions, hashes, tenants, types and (unless public) data.
func checkExported(t *testing.T, got []exported, want []storedEvent) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d events (positions %v), want %d (positions %v)", len(got), exportedPositions(got), len(want), storedPositions(want))
	}
	for i, w := range want {
		g := got[i]
		if g.ID != w.ID || g.Position != w.Position || g.Hash != w.Hash || g.PrevHash != w.PrevHash ||
			g.TenantID != w.TenantID || g.Type != w.Type {
			t.Fatalf("line %d: got %s at position %d (hash %s, prevhash %s, tenant %s, type %s), want %+v",
				i+1, g.ID, g.Position, g.Hash, g.PrevHash, g.TenantID, g.Type, w)
		}
		if !reflect.DeepEqual(g.Fields, w.Data) {
			t.Fatalf("line %d: got data %v, want the stored %v", i+1, g.Fields, w.Data)
		}
		if g.SpecVersion != "1.0" || g.Source != "/tenants/"+w.TenantID || g.StreamID == "" || g.StreamVersion < 1 || g.Time == "" {
			t.Fatalf("line %d: incomplete envelope %+v", i+1, g.CloudEvent)
		}
	}
}

func exportedPositions(evs []exported) []int64 {
	var p []int64
	for _, e := range evs {
		p = append(p, e.Position)
	}
	return p
}

func storedPositions(evs []storedEvent) []int64 {
	var p []int64
	for _, e := range evs {
		p = append(p, e.Position)
	}
	return p
}

// lastPositionReported reads the position events export reports on stderr.
func lastPositionReported(t *testing.T, stderr string) int64 {
	t.Helper()
	m := regexp.MustCompile(`last position exported: (\d+);`).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("stderr %q does not report the last position exported", stderr)
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return n
}

// TestEventsExport: the export is the events table's sequenced events in
// position order, full envelopes with the stored data, read in batches.
func TestEventsExport(t *testing.T) {
	t.Parallel()
	e := newEventsEnv(t)
	for i := range 4 {
		e.tenant(t, i+2)
	}
	e.waitPublished(t)
	e.relay() // events appended from now on stay unsequenced: they must not be exported
	e.tenant(t, 1)
	want := e.stored(t, "true")
	if len(want) != 26 {
		t.Fatalf("seeded %d sequenced events, want 26", len(want))
	}
	var unsequenced int
	if err := e.db.pool.QueryRow(context.Background(), `SELECT count(*) FROM events WHERE position IS NULL`).Scan(&unsequenced); err != nil || unsequenced != 4 {
		t.Fatalf("got %d unsequenced events (%v), want 4", unsequenced, err)
	}

	out := e.export(t)
	checkExported(t, parseNDJSON(t, out), want)

	// Batches of 5: every query reads at most 5 rows, and the export only
	// goes on while a batch is full, so memory holds one batch whatever
	// the number of events; the output is the same.
	var stderr bytes.Buffer
	var batches []int
	var small bytes.Buffer
	if err := e.exporter(5, &stderr, &batches).run(testenv.Context(t, time.Minute), nil, &small); err != nil {
		t.Fatalf("export: %v", err)
	}
	if !bytes.Equal(small.Bytes(), out) {
		t.Fatalf("export in batches of 5 differs from the export in batches of %d", exportBatchSize)
	}
	if want := []int{5, 5, 5, 5, 5, 1}; !reflect.DeepEqual(batches, want) {
		t.Fatalf("got queries of %v rows, want %v", batches, want)
	}
	if got := lastPositionReported(t, stderr.String()); got != 26 {
		t.Fatalf("reported last position %d, want 26", got)
	}

	// 25 events in batches of 5: a last, empty query ends it.
	batches = nil
	small.Reset()
	if err := e.exporter(5, &stderr, &batches).run(testenv.Context(t, time.Minute), []string{"--limit", "25"}, &small); err != nil {
		t.Fatalf("export: %v", err)
	}
	if want := []int{5, 5, 5, 5, 5}; !reflect.DeepEqual(batches, want) {
		t.Fatalf("with --limit 25: got queries of %v rows, want %v", batches, want)
	}
	checkExported(t, parseNDJSON(t, small.Bytes()), want[:25])
}

// TestEventsExportResume: --after and an existing --out file continue the
// export with no event repeated and none skipped.
func TestEventsExportResume(t *testing.T) {
	t.Parallel()
	e := newEventsEnv(t)
	for range 5 {
		e.tenant(t, 2)
	}
	e.waitPublished(t)
	all := e.stored(t, "true")
	if len(all) != 25 {
		t.Fatalf("seeded %d events, want 25", len(all))
	}

	// --after P: the events after P.
	checkExported(t, parseNDJSON(t, e.export(t, "--after", "11")), all[11:])
	checkExported(t, parseNDJSON(t, e.export(t, "--after", "25")), nil)

	// stdout, piece by piece: each run continues with the --after the
	// previous one reported.
	var joined []byte
	after := int64(0)
	for range 4 {
		var stderr bytes.Buffer
		var batches []int
		var out bytes.Buffer
		err := e.exporter(4, &stderr, &batches).run(testenv.Context(t, time.Minute),
			[]string{"--after", strconv.FormatInt(after, 10), "--limit", "7"}, &out)
		if err != nil {
			t.Fatalf("export: %v", err)
		}
		joined = append(joined, out.Bytes()...)
		after = lastPositionReported(t, stderr.String())
	}
	checkExported(t, parseNDJSON(t, joined), all)
	if after != 25 {
		t.Fatalf("last reported position %d, want 25", after)
	}

	// --out: the same command, run again, continues after the file's last line.
	file := filepath.Join(t.TempDir(), "events.ndjson")
	var stderr bytes.Buffer
	var batches []int
	for _, wantLast := range []int64{10, 20, 25, 25} {
		stderr.Reset()
		if err := e.exporter(3, &stderr, &batches).run(testenv.Context(t, time.Minute), []string{"--out", file, "--limit", "10"}, &bytes.Buffer{}); err != nil {
			t.Fatalf("export --out: %v", err)
		}
		if got := lastPositionReported(t, stderr.String()); got != wantLast {
			t.Fatalf("export --out: reported last position %d, want %d", got, wantLast)
		}
	}
	data := readFile(t, file)
	checkExported(t, parseNDJSON(t, data), all)
	if st, err := os.Stat(file); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("export file: got %v (%v), want mode 0600", st.Mode(), err)
	}

	// An export interrupted in the middle of a line: the incomplete line is
	// cut off and its event exported again, with the new events.
	lines := bytes.SplitAfter(data, []byte("\n"))
	if err := os.WriteFile(file, append(bytes.Join(lines[:20], nil), lines[20][:40]...), 0o600); err != nil {
		t.Fatal(err)
	}
	e.tenant(t, 1)
	e.waitPublished(t)
	all = e.stored(t, "true")
	stderr.Reset()
	if err := e.exporter(1000, &stderr, &batches).run(testenv.Context(t, time.Minute), []string{"--out", file}, &bytes.Buffer{}); err != nil {
		t.Fatalf("export --out: %v", err)
	}
	if !strings.Contains(stderr.String(), "incomplete line (40 bytes)") {
		t.Fatalf("stderr %q does not report the incomplete line", stderr.String())
	}
	checkExported(t, parseNDJSON(t, readFile(t, file)), all)

	// An --after before the file's last event would repeat events.
	err := run(testenv.Context(t, time.Minute), []string{"events", "export", "--out", file, "--after", "3"}, databaseEnv(e.url), &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "would repeat events") {
		t.Fatalf("export --out with an earlier --after: got %v, want it refused", err)
	}
	checkExported(t, parseNDJSON(t, readFile(t, file)), all)

	// A file whose last line is not an exported event is not continued.
	other := filepath.Join(t.TempDir(), "other.ndjson")
	if err := os.WriteFile(other, []byte("not an event\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err = run(testenv.Context(t, time.Minute), []string{"events", "export", "--out", other}, databaseEnv(e.url), &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "not an exported event") {
		t.Fatalf("export --out to a foreign file: got %v, want an error", err)
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestEventsExportFilters: --tenant and --type select events, still in
// position order and resumable.
func TestEventsExportFilters(t *testing.T) {
	t.Parallel()
	e := newEventsEnv(t)
	a, _ := e.tenant(t, 2)
	b, _ := e.tenant(t, 3)
	e.tenant(t, 1)
	e.tenant(t, 2) // a's events are not all before b's
	_, err := eventstore.Execute(testenv.Context(t, time.Minute), e.db.store, tenantStream(a), operator, domain.ApplyTenant,
		func(t domain.Tenant) ([]domain.Event, error) {
			return domain.DecideCreateAPIKey(t, "key-"+uuid.NewString(), "ab")
		})
	if err != nil {
		t.Fatal(err)
	}
	e.waitPublished(t)

	checkExported(t, parseNDJSON(t, e.export(t, "--tenant", a.String())), e.stored(t, "tenant_id = $1", a))
	users := e.stored(t, "type = 'user.created'")
	if len(users) != 4 {
		t.Fatalf("got %d user.created events, want 4", len(users))
	}
	checkExported(t, parseNDJSON(t, e.export(t, "--type", "ledger.user.created.v1")), users)
	checkExported(t, parseNDJSON(t, e.export(t, "--type", "user.created")), users)
	checkExported(t, parseNDJSON(t, e.export(t, "--type", "user.created", "--after", strconv.FormatInt(users[1].Position, 10))), users[2:])
	keysOfB := e.stored(t, "tenant_id = $1 AND type = 'tenant.api_key_created'", b)
	if len(keysOfB) != 4 {
		t.Fatalf("got %d keys of b, want 4", len(keysOfB))
	}
	checkExported(t, parseNDJSON(t, e.export(t, "--tenant", b.String(), "--type", "ledger.tenant.api_key_created.v1")), keysOfB)
	checkExported(t, parseNDJSON(t, e.export(t, "--tenant", b.String(), "--type", "tenant.api_key_created", "--limit", "2")), keysOfB[:2])

	// Filtered batches: still at most the batch size per query.
	var stderr, out bytes.Buffer
	var batches []int
	if err := e.exporter(2, &stderr, &batches).run(testenv.Context(t, time.Minute), []string{"--tenant", a.String()}, &out); err != nil {
		t.Fatal(err)
	}
	if want := []int{2, 2, 2, 0}; !reflect.DeepEqual(batches, want) {
		t.Fatalf("got queries of %v rows, want %v", batches, want)
	}
	checkExported(t, parseNDJSON(t, out.Bytes()), e.stored(t, "tenant_id = $1", a))

	def, _ := domain.LookupEvent("user.created")
	for _, args := range [][]string{
		{"--type", "user.created_typo"},
		{"--type", fmt.Sprintf("ledger.user.created.v%d", def.Version+1)},
		{"--tenant", "not-a-uuid"},
		{"--after", "-1"},
		{"stray"},
	} {
		err := run(testenv.Context(t, time.Minute), append([]string{"events", "export"}, args...), databaseEnv(e.url), &bytes.Buffer{})
		if err == nil {
			t.Errorf("events export %v: got no error", args)
		}
	}
}

// TestEventsExportPublic: --public writes the NATS publication form, which
// leaves personal data out; the stored form keeps it.
func TestEventsExportPublic(t *testing.T) {
	t.Parallel()
	e := newEventsEnv(t)
	tenant, email := e.tenant(t, 1)
	e.waitPublished(t)

	full := e.export(t, "--tenant", tenant.String())
	public := e.export(t, "--tenant", tenant.String(), "--public")
	if !bytes.Contains(full, []byte(email)) {
		t.Fatalf("the stored form leaves the owner's email %s out:\n%s", email, full)
	}
	if bytes.Contains(public, []byte(email)) {
		t.Fatalf("the public form holds the owner's email %s:\n%s", email, public)
	}
	stored, pub := parseNDJSON(t, full), parseNDJSON(t, public)
	if len(stored) != 4 || len(pub) != 4 {
		t.Fatalf("got %d stored and %d public events, want 4 each", len(stored), len(pub))
	}
	var users int
	for i := range stored {
		s, p := stored[i], pub[i]
		// The envelope is the same (the hash refers to the stored event); only data differs.
		sEnv, pEnv := s.CloudEvent, p.CloudEvent
		sEnv.Data, pEnv.Data = nil, nil
		if !reflect.DeepEqual(sEnv, pEnv) {
			t.Fatalf("event %d: public envelope %+v differs from the stored %+v", i, pEnv, sEnv)
		}
		if s.Type != "ledger.user.created.v1" {
			continue
		}
		users++
		if s.Fields["email"] != email || s.Fields["name"] == nil {
			t.Fatalf("stored user.created without its personal data: %v", s.Fields)
		}
		if _, ok := p.Fields["email"]; ok {
			t.Fatalf("public user.created holds email: %v", p.Fields)
		}
		if _, ok := p.Fields["name"]; ok {
			t.Fatalf("public user.created holds name: %v", p.Fields)
		}
		if p.Fields["userId"] != s.Fields["userId"] || p.Fields["role"] != s.Fields["role"] {
			t.Fatalf("public user.created lost its other fields: %v, stored %v", p.Fields, s.Fields)
		}
	}
	if users != 1 {
		t.Fatalf("got %d user.created events, want 1", users)
	}
}

// tailLines is the output of events tail: it cancels the tail once it has
// printed want lines.
type tailLines struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	want   int
	cancel context.CancelFunc
}

func (w *tailLines) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if bytes.Count(w.buf.Bytes(), []byte("\n")) >= w.want {
		w.cancel()
	}
	return len(p), nil
}

// tail runs `ledgerctl events tail args...` through run until it has
// printed want lines, then stops it as Ctrl-C does, and returns what it
// printed: every line, also those it printed after being told to stop.
func (e *eventsEnv) tail(t *testing.T, want int, args ...string) []exported {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &tailLines{want: want, cancel: cancel}
	done := make(chan error, 1)
	args = append([]string{"events", "tail", "--stream", e.stream.Name}, args...)
	go func() { done <- run(ctx, args, databaseEnv(e.url), w) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s: %v", strings.Join(args, " "), err)
		}
	case <-time.After(30 * time.Second):
		cancel()
		<-done
		t.Fatalf("%s: printed %q within 30s, want %d lines", strings.Join(args, " "), w.buf.String(), want)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return parseNDJSON(t, w.buf.Bytes())
}

// TestEventsTail: a durable consumer gets the published events, and after
// a restart goes on with the next ones, repeating none; a subject filter
// picks one tenant. Not parallel: events tail reads NATS_URL.
func TestEventsTail(t *testing.T) {
	t.Setenv("NATS_URL", testenv.NATSURL())
	e := newEventsEnv(t)
	a, emailA := e.tenant(t, 1)
	e.tenant(t, 0)
	e.waitPublished(t)
	all := e.stored(t, "true")
	if len(all) != 7 {
		t.Fatalf("seeded %d events, want 7", len(all))
	}

	durable := []string{"--subject", e.stream.SubjectPrefix + ".>", "--durable", "analytics"}
	got := e.tail(t, 7, append(durable, "--from-start")...)
	checkTailed(t, got, all, "")

	// Restarted, the durable consumer goes on after what it acknowledged.
	c, emailC := e.tenant(t, 2)
	e.waitPublished(t)
	got = e.tail(t, 5, durable...)
	checkTailed(t, got, e.stored(t, "tenant_id = $1", c), emailC)

	// And once more, with an event appended while it runs.
	appended := make(chan error, 1)
	go func() {
		_, err := eventstore.Execute(testenv.Context(t, time.Minute), e.db.store, tenantStream(a), operator, domain.ApplyTenant,
			func(t domain.Tenant) ([]domain.Event, error) {
				return domain.DecideCreateAPIKey(t, "key-"+uuid.NewString(), "ab")
			})
		appended <- err
	}()
	got = e.tail(t, 1, durable...)
	if err := <-appended; err != nil {
		t.Fatal(err)
	}
	keys := e.stored(t, "tenant_id = $1 AND type = 'tenant.api_key_created'", a)
	checkTailed(t, got, keys[len(keys)-1:], "")

	// An ephemeral consumer from the start, filtered to tenant a.
	e.waitPublished(t)
	wantA := e.stored(t, "tenant_id = $1", a)
	got = e.tail(t, len(wantA), "--subject", e.stream.SubjectPrefix+"."+a.String()+".>", "--from-start")
	checkTailed(t, got, wantA, emailA)
}

// checkTailed checks the tail printed exactly want, in order, without the
// personal data (email) the store keeps.
func checkTailed(t *testing.T, got []exported, want []storedEvent, email string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("tail printed %d events (positions %v), want %d (positions %v)", len(got), exportedPositions(got), len(want), storedPositions(want))
	}
	for i, w := range want {
		g := got[i]
		if g.ID != w.ID || g.Position != w.Position || g.Hash != w.Hash || g.Type != w.Type {
			t.Fatalf("tail line %d: got %s at position %d, want %s at position %d", i+1, g.ID, g.Position, w.ID, w.Position)
		}
		if _, ok := g.Fields["email"]; ok || (email != "" && strings.Contains(string(g.Data), email)) {
			t.Fatalf("tail line %d: published data holds personal data: %s", i+1, g.Data)
		}
	}
}
