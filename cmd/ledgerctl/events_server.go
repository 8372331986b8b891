package main

import (
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/ledger/ledger/cmd/internal/embeddednats"
	"github.com/ledger/ledger/cmd/internal/natsurl"
)

// natsServer is the NATS server a command reads the event stream from.
type natsServer struct {
	url   string
	opts  []nats.Option // the embedded server's token
	about string        // how it was found, for messages
}

// String names the server for messages, without NATS_URL's credentials.
func (s natsServer) String() string { return natsurl.Redacted(s.url) + " (" + s.about + ")" }

// eventsServer is the server ledgerd publishes to with the same
// environment: NATS_URL when set, else the server a ledgerd without
// NATS_URL embeds, at LEDGER_EMBEDDED_NATS_ADDR, with the token it keeps
// in LEDGER_DATA_DIR.
func eventsServer(getenv func(string) string) (natsServer, error) {
	if url := getenv("NATS_URL"); url != "" {
		return natsServer{url: url, about: "NATS_URL"}, nil
	}
	addr, dataDir := getenv("LEDGER_EMBEDDED_NATS_ADDR"), getenv("LEDGER_DATA_DIR")
	if addr == "" {
		addr = embeddednats.DefaultAddr
	}
	if dataDir == "" {
		dataDir = embeddednats.DefaultDataDir
	}
	s := natsServer{url: "nats://" + addr, about: "ledgerd's embedded server, NATS_URL being unset"}
	token, err := embeddednats.ReadToken(dataDir)
	if err != nil {
		return s, fmt.Errorf("no client token for %s: %w (run where ledgerd runs, give its LEDGER_DATA_DIR, or set NATS_URL)", s, err)
	}
	s.opts = []nats.Option{nats.Token(token)}
	return s, nil
}
