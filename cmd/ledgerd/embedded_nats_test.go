package main

import (
	"bytes"
	"net"
	"os"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/ledger/ledger/cmd/internal/embeddednats"
)

// TestEmbeddedNATSNeedsTheToken: the embedded server refuses clients
// without the token ledgerd keeps in LEDGER_DATA_DIR (mode 0600), which
// the start banner prints and a restart reuses.
func TestEmbeddedNATSNeedsTheToken(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	dataDir := t.TempDir()
	env := map[string]string{"NATS_URL": "", "LEDGER_EMBEDDED_NATS_ADDR": addr, "LEDGER_DATA_DIR": dataDir}
	s := startServer(t, env)

	token, err := embeddednats.ReadToken(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(embeddednats.TokenPath(dataDir)); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("token file: got %v (%v), want mode 0600", st.Mode(), err)
	}
	if nc, err := nats.Connect("nats://" + addr); err == nil {
		nc.Close()
		t.Fatal("connect without the token: got nil, want it refused")
	}
	nc, err := nats.Connect("nats://"+addr, nats.Token(token))
	if err != nil {
		t.Fatalf("connect with the token: %v", err)
	}
	nc.Close()
	var banner bytes.Buffer
	s.app.printBanner(&banner, "127.0.0.1:8080")
	if want := "nats --server nats://" + token + "@" + addr; !strings.Contains(banner.String(), want) ||
		!strings.Contains(banner.String(), embeddednats.TokenPath(dataDir)) {
		t.Fatalf("banner %q: want the token file and %q", banner.String(), want)
	}

	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	startServer(t, env)
	if again, err := embeddednats.ReadToken(dataDir); err != nil || again != token {
		t.Fatalf("after a restart: got token %q (%v), want the same", again, err)
	}
	nc, err = nats.Connect("nats://"+addr, nats.Token(token))
	if err != nil {
		t.Fatalf("connect with the token after a restart: %v", err)
	}
	nc.Close()
}

// TestBannerRedactsNATSCredentials: the start banner names the NATS
// servers of NATS_URL without their tokens, user names or passwords.
func TestBannerRedactsNATSCredentials(t *testing.T) {
	t.Parallel()
	a := &app{cfg: config{Mode: "production", NATSStream: "LEDGER",
		NATSURL: "nats://s3cret-token@10.0.0.1:4222, nats://ops:pa55word@10.0.0.2:4222,nats://10.0.0.3:4222"}}
	var banner bytes.Buffer
	a.printBanner(&banner, "127.0.0.1:8080")
	for _, secret := range []string{"s3cret-token", "ops", "pa55word"} {
		if strings.Contains(banner.String(), secret) {
			t.Errorf("banner %q shows %q", banner.String(), secret)
		}
	}
	if want := "nats://redacted@10.0.0.1:4222,nats://redacted@10.0.0.2:4222,nats://10.0.0.3:4222"; !strings.Contains(banner.String(), want) {
		t.Errorf("banner %q: want the servers as %s", banner.String(), want)
	}
}
