package eventstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore/eventrow"
)

// TestCatchUpReaderSeesEveryEventOnce runs 20 writers appending to 200
// streams while two sequencers assign positions (two, to show that the
// sequencer_state row lock serialises them) and a catch-up reader follows
// "position > P ORDER BY position" in small pages, remembering only P. The
// reader must see every committed event exactly once, at positions 1..N
// without gaps, each stream's versions in order, and every hash must be the
// one an auditor recomputes along its tenant's chain.
func TestCatchUpReaderSeesEveryEventOnce(t *testing.T) {
	t.Parallel()
	const (
		writers          = 20
		streamCount      = 200
		tenantCount      = 5
		appendsPerWriter = 25
		sequencers       = 2
		pageSize         = 17
	)
	pool := mustMigrated(t, writers+4)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	store := New(pool, nopProjector{}, nil)

	tenants := make([]uuid.UUID, tenantCount)
	for i := range tenants {
		tenants[i] = uuid.New()
	}
	streams := make([]domain.StreamRef, streamCount)
	for i := range streams {
		typ := "tenant"
		if i%2 == 1 {
			typ = "user"
		}
		streams[i] = domain.StreamRef{TenantID: tenants[i%tenantCount], Type: typ, ID: uuid.New()}
	}
	eventFor := func(s domain.StreamRef) domain.Event {
		if s.Type == "user" {
			return domain.UserCreated{UserID: s.ID, Email: uuid.NewString() + "@example.com", Name: "U", Role: domain.RoleNormal}
		}
		return newKey()
	}

	var (
		mu        sync.Mutex
		committed = map[uuid.UUID]domain.Record{}
		conflicts atomic.Int64
	)
	writersDone := make(chan struct{})
	var writersWG sync.WaitGroup
	for range writers {
		writersWG.Add(1)
		go func() {
			defer writersWG.Done()
			for done := 0; done < appendsPerWriter; {
				// Mostly single events, sometimes a multi-event batch, and
				// sometimes two streams in one transaction.
				picks := []domain.StreamRef{streams[rand.IntN(streamCount)]}
				if rand.IntN(10) == 0 {
					if other := streams[rand.IntN(streamCount)]; other.ID != picks[0].ID {
						picks = append(picks, other)
					}
				}
				var batches []Batch
				for _, s := range picks {
					_, version, err := Fold(ctx, store, s, func(n int, _ domain.Event) int { return n + 1 })
					if err != nil {
						if ctx.Err() == nil {
							t.Errorf("fold: %v", err)
						}
						return
					}
					events := []domain.Event{eventFor(s)}
					if rand.IntN(4) == 0 {
						for range 1 + rand.IntN(3) {
							events = append(events, eventFor(s))
						}
					}
					batches = append(batches, Batch{Stream: s, Expected: version, Events: events})
				}
				recs, err := store.Append(ctx, domain.Metadata{Actor: "test"}, batches...)
				if errors.Is(err, ErrVersionConflict) {
					conflicts.Add(1)
					continue
				}
				if err != nil {
					if ctx.Err() == nil {
						t.Errorf("append: %v", err)
					}
					return
				}
				mu.Lock()
				for _, r := range recs {
					committed[r.ID] = r
				}
				mu.Unlock()
				done++
			}
		}()
	}

	// The sequencers, each on a connection of its own as the relay has.
	var seqWG sync.WaitGroup
	for range sequencers {
		conn := mustConn(t, ctx, pool)
		seq := newSequencer() // each with its own chain-head cache, which the other's rounds make stale
		seqWG.Add(1)
		go func() {
			defer seqWG.Done()
			for {
				rd, err := seq.sequence(ctx, conn, 23, nil)
				if err != nil {
					if ctx.Err() == nil {
						t.Errorf("sequence: %v", err)
					}
					return
				}
				if len(rd.recs) > 0 {
					continue
				}
				select {
				case <-writersDone: // nothing left once a round after the writers finds nothing
					return
				case <-ctx.Done():
					return
				case <-time.After(time.Millisecond):
				}
			}
		}()
	}
	seqDone := make(chan struct{})
	go func() {
		writersWG.Wait()
		close(writersDone)
		seqWG.Wait()
		close(seqDone)
	}()
	t.Cleanup(func() { // before the connections close, even when the test stops early
		cancel()
		<-seqDone
	})

	// The catch-up reader: it remembers nothing but the last position it saw.
	var seen []domain.Record
	var seenWhileWriting int
	var last int64
	for finished := false; !finished; {
		select {
		case <-seqDone:
			finished = true // nothing new comes after this: read up to the end once more, then stop
		default:
		}
		for {
			page := readPage(t, ctx, pool, last, pageSize)
			for _, r := range page {
				if r.Position != last+1 {
					t.Fatalf("reader after position %d: got position %d, want %d", last, r.Position, last+1)
				}
				last = r.Position
				seen = append(seen, r)
			}
			if len(page) < pageSize {
				break
			}
		}
		select {
		case <-writersDone:
		default:
			seenWhileWriting = len(seen)
		}
		if ctx.Err() != nil {
			t.Fatalf("reader: %v after %d events", ctx.Err(), len(seen))
		}
		if !finished {
			time.Sleep(2 * time.Millisecond)
		}
	}
	if t.Failed() {
		return
	}

	// Every committed event, exactly once.
	if len(seen) != len(committed) {
		t.Errorf("reader saw %d events, want the %d committed", len(seen), len(committed))
	}
	once := map[uuid.UUID]bool{}
	for _, r := range seen {
		if once[r.ID] {
			t.Errorf("event %s seen twice", r.ID)
		}
		once[r.ID] = true
		if c, ok := committed[r.ID]; !ok {
			t.Errorf("event %s seen but never appended", r.ID)
		} else if c.StreamID != r.StreamID || c.StreamVersion != r.StreamVersion {
			t.Errorf("event %s: got stream %s v%d, want %s v%d", r.ID, r.StreamID, r.StreamVersion, c.StreamID, c.StreamVersion)
		}
	}
	for id := range committed {
		if !once[id] {
			t.Errorf("committed event %s never seen by the reader", id)
		}
	}
	// Each stream's versions in order, from 1 without gaps.
	version := map[uuid.UUID]int{}
	for _, r := range seen {
		if r.StreamVersion != version[r.StreamID]+1 {
			t.Errorf("stream %s at position %d: got version %d after %d, want %d", r.StreamID, r.Position, r.StreamVersion, version[r.StreamID], version[r.StreamID]+1)
		}
		version[r.StreamID] = r.StreamVersion
	}
	checkChains(t, ctx, pool, seen)

	var lastPosition int64
	if err := pool.QueryRow(ctx, `SELECT last_position FROM sequencer_state`).Scan(&lastPosition); err != nil {
		t.Fatalf("read sequencer state: %v", err)
	}
	if lastPosition != int64(len(seen)) {
		t.Errorf("sequencer_state.last_position: got %d, want %d", lastPosition, len(seen))
	}
	t.Logf("%d events in %d appends (%d conflicts retried); %d read while writers ran", len(seen), writers*appendsPerWriter, conflicts.Load(), seenWhileWriting)
}

// readPage reads the sequenced events after position, as a catch-up reader does.
func readPage(t *testing.T, ctx context.Context, pool *pgxpool.Pool, after int64, limit int) []domain.Record {
	t.Helper()
	rows, err := pool.Query(ctx, `SELECT `+recordColumns+` FROM events
		WHERE position IS NOT NULL AND position > $1 ORDER BY position LIMIT $2`, after, limit)
	if err != nil {
		t.Fatalf("read page after %d: %v", after, err)
	}
	recs, err := pgx.CollectRows(rows, eventrow.Scan)
	if err != nil {
		t.Fatalf("read page after %d: %v", after, err)
	}
	return recs
}

// checkChains recomputes every hash along its tenant's chain from recs (all
// events, in position order), as an auditor would, and compares the heads.
func checkChains(t *testing.T, ctx context.Context, pool *pgxpool.Pool, recs []domain.Record) {
	t.Helper()
	head := map[uuid.UUID]string{}
	headPos := map[uuid.UUID]int64{}
	for _, r := range recs {
		prev, ok := head[r.TenantID]
		if !ok {
			prev = GenesisHash
		}
		if r.PrevHash != prev {
			t.Fatalf("event %s at %d: got prevhash %s, want %s", r.ID, r.Position, r.PrevHash, prev)
		}
		want, err := Hash(prev, r)
		if err != nil {
			t.Fatalf("hash %s: %v", r.ID, err)
		}
		if r.Hash != want {
			t.Fatalf("event %s at %d: got hash %s, want %s", r.ID, r.Position, r.Hash, want)
		}
		head[r.TenantID], headPos[r.TenantID] = r.Hash, r.Position
	}
	rows, err := pool.Query(ctx, `SELECT tenant_id, last_position, hash FROM chain_heads`)
	if err != nil {
		t.Fatalf("read chain heads: %v", err)
	}
	var tenant uuid.UUID
	var pos int64
	var hash string
	n := 0
	_, err = pgx.ForEachRow(rows, []any{&tenant, &pos, &hash}, func() error {
		n++
		if hash != head[tenant] || pos != headPos[tenant] {
			t.Errorf("chain head of %s: got %s at %d, want %s at %d", tenant, hash, pos, head[tenant], headPos[tenant])
		}
		return nil
	})
	if err != nil {
		t.Fatalf("read chain heads: %v", err)
	}
	if n != len(head) {
		t.Errorf("chain heads: got %d, want %d", n, len(head))
	}
}

// mustConn opens a dedicated connection with pool's settings.
func mustConn(t *testing.T, ctx context.Context, pool *pgxpool.Pool) *pgx.Conn {
	t.Helper()
	conn, err := pgx.ConnectConfig(ctx, pool.Config().ConnConfig.Copy())
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// TestHashIsTheDocumentedFormula checks Hash against the formula of
// contract §9, written out by hand: SHA-256 of prevhash, a newline and the
// RFC 8785 canonical JSON of the CloudEvent without hash and prevhash.
func TestHashIsTheDocumentedFormula(t *testing.T) {
	t.Parallel()
	tenant := uuid.MustParse("0190a8a0-0000-7000-8000-000000000001")
	owner := uuid.MustParse("0190a8a0-0000-7000-8000-000000000002")
	r := domain.Record{
		ID: uuid.MustParse("0190a8a0-0000-7000-8000-0000000000e1"), TenantID: tenant,
		StreamType: "tenant", StreamID: tenant, StreamVersion: 1, Type: "tenant.created", SchemaVersion: 1,
		Data: []byte(`{"tenantId": "` + tenant.String() + `", "name": "Acme", "ownerUserId": "` + owner.String() + `", "ownerEmail": "a@b.co"}`),
		Meta: domain.Metadata{Actor: "operator", RequestID: "req-1"}, RecordedAt: time.Date(2025, 1, 2, 3, 4, 5, 678e6, time.UTC),
		Position: 7, Hash: "not part of the hash", PrevHash: "nor this",
	}
	canonical := `{"actor":"operator",` +
		`"data":{"name":"Acme","ownerEmail":"a@b.co","ownerUserId":"` + owner.String() + `","tenantId":"` + tenant.String() + `"},` +
		`"datacontenttype":"application/json","id":"0190a8a0-0000-7000-8000-0000000000e1","position":7,"requestid":"req-1",` +
		`"source":"/tenants/` + tenant.String() + `","specversion":"1.0","streamid":"` + tenant.String() + `","streamversion":1,` +
		`"subject":"tenants/` + tenant.String() + `","tenantid":"` + tenant.String() + `","time":"2025-01-02T03:04:05.678Z",` +
		`"type":"ledger.tenant.created.v1"}`
	prev := "5f" + GenesisHash[2:]
	sum := sha256.Sum256([]byte(prev + "\n" + canonical))
	want := hex.EncodeToString(sum[:])

	got, err := Hash(prev, r)
	if err != nil {
		t.Fatalf("hash: %v", err)
	}
	if got != want {
		t.Errorf("hash: got %s, want %s", got, want)
	}
	if len(GenesisHash) != 64 || GenesisHash != "0000000000000000000000000000000000000000000000000000000000000000" {
		t.Errorf("genesis hash: got %q, want 64 zeros", GenesisHash)
	}
	// Any change to the event or the chain changes the hash.
	tampered := r
	tampered.Data = []byte(`{"tenantId": "` + tenant.String() + `", "name": "Acme!", "ownerUserId": "` + owner.String() + `", "ownerEmail": "a@b.co"}`)
	moved := r
	moved.Position = 8
	for name, h := range map[string]func() (string, error){
		"data":     func() (string, error) { return Hash(prev, tampered) },
		"position": func() (string, error) { return Hash(prev, moved) },
		"prevhash": func() (string, error) { return Hash(GenesisHash, r) },
	} {
		if other, err := h(); err != nil || other == want {
			t.Errorf("hash with changed %s: got %s, %v; want a different hash", name, other, err)
		}
	}
}
