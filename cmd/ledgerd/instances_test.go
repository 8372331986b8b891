package main

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledger/ledger/eventstore/testenv"
)

var leaderGauge = regexp.MustCompile(`(?m)^ledger_relay_leader (\d)`)

// relayLeader reads the ledger_relay_leader gauge from s's /metrics.
func relayLeader(t *testing.T, s *testServer) bool {
	t.Helper()
	m := leaderGauge.FindSubmatch(s.get(t, "/metrics").Body)
	return m != nil && string(m[1]) == "1"
}

// TestTwoInstancesShareOneStore runs two ledgerd processes' worth of app on
// one database and one stream: a token issued by one works on the other
// (shared signing keys and credentials), exactly one of them relays, and when
// it stops the other takes over and every event is published exactly once.
func TestTwoInstancesShareOneStore(t *testing.T) {
	t.Parallel()
	a := startServer(t, nil)
	b := startServer(t, onStore(a, nil))

	tn := a.createTenant(t, "Kramerica")
	token := a.tenantToken(t, tn.APIKey, tn.APISecret)
	if r := b.post(t, "/users/token", token, `{"userId":"`+tn.OwnerUserID+`"}`); r.Status != http.StatusOK {
		t.Fatalf("a's token on b: got %d %s, want 200", r.Status, r.Body)
	}

	leader, standby := waitForOneLeader(t, a, b)
	if err := leader.stop(); err != nil {
		t.Fatalf("stop the leader: %v", err)
	}
	standby.createTenant(t, "Pendant")
	deadline := time.Now().Add(15 * time.Second)
	for !relayLeader(t, standby) {
		if time.Now().After(deadline) {
			t.Fatal("the standby did not take over the relay within 15 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	ids := waitForMessages(t, a.Stream, 6)
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Errorf("event %s published twice", id)
		}
		seen[id] = true
	}
	var stored int
	standby.queryRow(t, `SELECT count(*) FROM events`, nil, &stored)
	if stored != len(seen) {
		t.Errorf("published %d distinct events, want all %d stored", len(seen), stored)
	}
}

// waitForOneLeader waits until exactly one of a and b is the relay and
// returns it first.
func waitForOneLeader(t *testing.T, a, b *testServer) (leader, standby *testServer) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		la, lb := relayLeader(t, a), relayLeader(t, b)
		if la && lb {
			t.Fatal("both instances report being the relay")
		}
		if la != lb {
			if la {
				return a, b
			}
			return b, a
		}
		if time.Now().After(deadline) {
			t.Fatal("no instance became the relay within 15 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitForMessages waits until stream holds want messages (failing on more)
// and returns their Nats-Msg-Id headers in stream order.
func waitForMessages(t *testing.T, s testenv.Stream, want int) []string {
	t.Helper()
	js := testenv.JetStream(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	for {
		stream, err := js.Stream(ctx, s.Name)
		if err == nil {
			info, err := stream.Info(ctx)
			if err == nil && info.State.Msgs >= uint64(want) {
				time.Sleep(300 * time.Millisecond) // a duplicate would arrive now
				if info, err = stream.Info(ctx); err != nil || info.State.Msgs != uint64(want) {
					t.Fatalf("stream %s: got %d messages (%v), want %d", s.Name, info.State.Msgs, err, want)
				}
				var ids []string
				for seq := info.State.FirstSeq; seq <= info.State.LastSeq; seq++ {
					msg, err := stream.GetMsg(ctx, seq)
					if err != nil {
						t.Fatalf("read message %d: %v", seq, err)
					}
					ids = append(ids, strings.TrimSpace(msg.Header.Get(jetstream.MsgIDHeader)))
				}
				return ids
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("stream %s: fewer than %d messages within 15 s", s.Name, want)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
