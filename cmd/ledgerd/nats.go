package main

import (
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/ledger/ledger/cmd/internal/embeddednats"
	"github.com/ledger/ledger/cmd/internal/natsurl"
)

// startEmbeddedNATS runs an in-process NATS server with JetStream, its data
// under dataDir/nats, listening on addr so the nats CLI and analytics tools
// can connect. It is for a single ledgerd (development, sandbox); several
// processes share a standalone server through NATS_URL instead. Clients
// must give the token it returns, kept in dataDir (embeddednats): whoever
// reaches the port is not thereby allowed to read or rewrite the stream.
func startEmbeddedNATS(addr, dataDir string) (*server.Server, string, error) {
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, "", fmt.Errorf("embedded NATS address: %w", err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return nil, "", fmt.Errorf("embedded NATS port: %w", err)
	}
	token, err := embeddednats.LoadOrCreateToken(dataDir)
	if err != nil {
		return nil, "", err
	}
	ns, err := server.NewServer(&server.Options{
		ServerName:    "ledgerd-embedded",
		Host:          host,
		Port:          port,
		Authorization: token,
		JetStream:     true,
		StoreDir:      filepath.Join(dataDir, "nats"),
		// Acknowledged writes reach the disk before the ack (the Jepsen
		// analysis of NATS 2.12.1 lost acknowledged writes without this).
		SyncAlways: true,
		NoSigs:     true,
		NoLog:      true,
	})
	if err != nil {
		return nil, "", fmt.Errorf("embedded NATS: %w", err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		ns.Shutdown()
		return nil, "", fmt.Errorf("embedded NATS did not start on %s (is the port taken?)", addr)
	}
	return ns, token, nil
}

// connectNATS connects to url and keeps reconnecting for ever, so a NATS
// outage only delays publication (the outbox keeps every event meanwhile).
func connectNATS(url string, opts ...nats.Option) (*nats.Conn, error) {
	nc, err := nats.Connect(url, append([]nats.Option{nats.Name("ledgerd"), nats.MaxReconnects(-1),
		nats.ReconnectWait(500 * time.Millisecond), nats.RetryOnFailedConnect(true)}, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("connect to NATS %s: %w", natsurl.Redacted(url), err)
	}
	return nc, nil
}
