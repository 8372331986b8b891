package main

import (
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// startEmbeddedNATS runs an in-process NATS server with JetStream, its data
// under dataDir/nats, listening on addr so the nats CLI and analytics tools
// can connect. It is for a single ledgerd (development, sandbox); several
// processes share a standalone server through NATS_URL instead.
func startEmbeddedNATS(addr, dataDir string) (*server.Server, error) {
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("embedded NATS address: %w", err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return nil, fmt.Errorf("embedded NATS port: %w", err)
	}
	ns, err := server.NewServer(&server.Options{
		ServerName: "ledgerd-embedded",
		Host:       host,
		Port:       port,
		JetStream:  true,
		StoreDir:   filepath.Join(dataDir, "nats"),
		// Acknowledged writes reach the disk before the ack (the Jepsen
		// analysis of NATS 2.12.1 lost acknowledged writes without this).
		SyncAlways: true,
		NoSigs:     true,
		NoLog:      true,
	})
	if err != nil {
		return nil, fmt.Errorf("embedded NATS: %w", err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		ns.Shutdown()
		return nil, fmt.Errorf("embedded NATS did not start on %s (is the port taken?)", addr)
	}
	return ns, nil
}

// connectNATS connects to url and keeps reconnecting for ever, so a NATS
// outage only delays publication (the outbox keeps every event meanwhile).
func connectNATS(url string) (*nats.Conn, error) {
	nc, err := nats.Connect(url, nats.Name("ledgerd"), nats.MaxReconnects(-1),
		nats.ReconnectWait(500*time.Millisecond), nats.RetryOnFailedConnect(true))
	if err != nil {
		return nil, fmt.Errorf("connect to NATS %s: %w", url, err)
	}
	return nc, nil
}
