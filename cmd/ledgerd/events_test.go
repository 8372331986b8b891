package main

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledger/ledger/eventstore/testenv"
)

// TestEventsPublished creates a tenant with ledgerctl, which only writes to
// Postgres, and reads the test's JetStream stream: the server's relay must
// publish the three events as CloudEvents, in position order, with the event
// id as Nats-Msg-Id, and without the personal data the stored rows keep.
func TestEventsPublished(t *testing.T) {
	t.Parallel()
	s := startServer(t, nil)
	tn := s.createTenant(t, "Vandelay")

	js := testenv.JetStream(t)
	var err error
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()

	const want = 3
	var stream jetstream.Stream
	for {
		if stream, err = js.Stream(ctx, s.Stream.Name); err == nil {
			info, err := stream.Info(ctx)
			if err != nil {
				t.Fatalf("stream info: %v", err)
			}
			if info.State.Msgs >= want {
				if info.State.Msgs != want {
					t.Errorf("messages: got %d, want %d", info.State.Msgs, want)
				}
				break
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("stream %s: got no %d messages within 15 s (last error %v)", s.Stream.Name, want, err)
		case <-time.After(50 * time.Millisecond):
		}
	}

	type stored struct {
		typ, streamType, streamID string
		data                      map[string]any
		position                  int64
		hash, prevhash            string
	}
	conn, err := pgx.Connect(ctx, s.DatabaseURL)
	if err != nil {
		t.Fatalf("connect to test database: %v", err)
	}
	defer conn.Close(context.Background())
	rows := map[string]stored{}
	r, err := conn.Query(ctx, `SELECT id::text, type, stream_type, stream_id::text, data, position, hash, prevhash FROM events`)
	if err != nil {
		t.Fatalf("read events: %v", err)
	}
	for r.Next() {
		var id string
		var row stored
		if err := r.Scan(&id, &row.typ, &row.streamType, &row.streamID, &row.data, &row.position, &row.hash, &row.prevhash); err != nil {
			t.Fatalf("scan event: %v", err)
		}
		rows[id] = row
	}
	if r.Err() != nil {
		t.Fatalf("read events: %v", r.Err())
	}

	hex64 := regexp.MustCompile(`^[0-9a-f]{64}$`)
	seen := map[string]bool{}
	prevHash := strings.Repeat("0", 64)
	for seq := uint64(1); seq <= want; seq++ {
		msg, err := stream.GetMsg(ctx, seq)
		if err != nil {
			t.Fatalf("get message %d: %v", seq, err)
		}
		id := msg.Header.Get(jetstream.MsgIDHeader)
		row, ok := rows[id]
		if !ok {
			t.Fatalf("message %d: Nats-Msg-Id %q is not the id of a stored event", seq, id)
		}
		seen[row.typ] = true
		name := row.typ[strings.IndexByte(row.typ, '.')+1:]
		if want := s.Stream.SubjectPrefix + "." + tn.TenantID + "." + row.streamType + "." + row.streamID + "." + name; msg.Subject != want {
			t.Errorf("message %d subject: got %s, want %s", seq, msg.Subject, want)
		}
		if got := msg.Header.Get("Content-Type"); got != "application/cloudevents+json" {
			t.Errorf("message %d Content-Type: got %q, want application/cloudevents+json", seq, got)
		}
		var ce struct {
			SpecVersion     string          `json:"specversion"`
			ID              string          `json:"id"`
			Source          string          `json:"source"`
			Type            string          `json:"type"`
			Subject         string          `json:"subject"`
			Time            string          `json:"time"`
			DataContentType string          `json:"datacontenttype"`
			Data            map[string]any  `json:"data"`
			TenantID        string          `json:"tenantid"`
			StreamID        string          `json:"streamid"`
			StreamVersion   json.RawMessage `json:"streamversion"`
			Position        int64           `json:"position"`
			Hash            string          `json:"hash"`
			PrevHash        string          `json:"prevhash"`
		}
		mustDecode(t, msg.Data, &ce)
		checks := []struct {
			what      string
			got, want any
		}{
			{"specversion", ce.SpecVersion, "1.0"},
			{"id", ce.ID, id},
			{"source", ce.Source, "/tenants/" + tn.TenantID},
			{"type", ce.Type, "ledger." + row.typ + ".v1"},
			{"subject", ce.Subject, row.streamType + "s/" + row.streamID},
			{"datacontenttype", ce.DataContentType, "application/json"},
			{"tenantid", ce.TenantID, tn.TenantID},
			{"streamid", ce.StreamID, row.streamID},
			{"position", ce.Position, int64(seq)},
			{"position as stored", ce.Position, row.position},
			{"hash as stored", ce.Hash, row.hash},
			{"prevhash", ce.PrevHash, prevHash},
			{"time format", isoMillis.MatchString(ce.Time), true},
			{"hash format", hex64.MatchString(ce.Hash), true},
		}
		for _, c := range checks {
			if c.got != c.want {
				t.Errorf("message %d (%s) %s: got %v, want %v", seq, row.typ, c.what, c.got, c.want)
			}
		}
		prevHash = ce.Hash

		var private []string
		switch row.typ {
		case "tenant.created":
			private = []string{"ownerEmail"}
		case "tenant.api_key_created":
			private = []string{"secretHash"}
		case "user.created":
			private = []string{"email", "name"}
		}
		for _, f := range private {
			if _, ok := ce.Data[f]; ok {
				t.Errorf("published %s data: got %s = %v, want it left out", row.typ, f, ce.Data[f])
			}
			if v, _ := row.data[f].(string); v == "" {
				t.Errorf("stored %s data: got no %s, want the store to keep it", row.typ, f)
			}
		}
		for k, v := range row.data {
			if _, ok := ce.Data[k]; !ok && !slices.Contains(private, k) {
				t.Errorf("published %s data: got no %s, want %v", row.typ, k, v)
			}
		}
	}
	for _, typ := range []string{"tenant.created", "tenant.api_key_created", "user.created"} {
		if !seen[typ] {
			t.Errorf("published types: got %v, want %s among them", seen, typ)
		}
	}
}
