package main

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ledger/ledger/eventstore/keys"
	"github.com/ledger/ledger/eventstore/testenv"
)

// Production refuses to start without a master key.
func TestProductionNeedsAMasterKey(t *testing.T) {
	t.Parallel()
	_, err := loadEnv(map[string]string{"LEDGER_MODE": "production"})
	if err == nil || !strings.Contains(err.Error(), "LEDGER_MASTER_KEY_FILE") {
		t.Errorf("production without LEDGER_MASTER_KEY_FILE: got %v, want an error naming it", err)
	}
}

// The sandbox without LEDGER_MASTER_KEY_FILE makes a local master key
// under LEDGER_DATA_DIR, says so, and a second instance there uses it.
func TestSandboxMakesALocalMasterKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := startServer(t, map[string]string{"LEDGER_MASTER_KEY_FILE": "", "LEDGER_DATA_DIR": dir})
	kek, err := os.ReadFile(filepath.Join(dir, "master.key"))
	if err != nil || len(kek) != 32 {
		t.Fatalf("master key under LEDGER_DATA_DIR: got %d bytes (%v), want 32", len(kek), err)
	}
	if logs := a.logs.String(); !strings.Contains(logs, "local master key") || !strings.Contains(logs, filepath.Join(dir, "master.key")) {
		t.Errorf("log: want it to say the sandbox made a local master key at %s", filepath.Join(dir, "master.key"))
	}
	b := startServer(t, onStore(a, map[string]string{"LEDGER_MASTER_KEY_FILE": "", "LEDGER_DATA_DIR": dir}))
	tn := a.createTenant(t, "Kruger")
	token := a.tenantToken(t, tn.APIKey, tn.APISecret)
	if r := b.post(t, "/users/token", token, `{"userId":"`+tn.OwnerUserID+`"}`); r.Status != http.StatusOK {
		t.Errorf("a's token on b: got %d %s, want 200", r.Status, r.Body)
	}
}

// ledgerd refuses to start with a master key that does not unwrap the
// stored keys, rather than start and fail every token.
func TestStartRefusesAnotherMasterKey(t *testing.T) {
	t.Parallel()
	a := startServer(t, nil)
	other, _, err := keys.LocalMasterKeyFile(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	vars := onStore(a, map[string]string{"NATS_URL": testenv.NATSURL(), "LEDGER_ADDR": "127.0.0.1:0", "LEDGER_MASTER_KEY_FILE": other})
	cfg, err := loadEnv(vars)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := newApp(ctx, cfg, slog.New(slog.DiscardHandler))
	if err == nil {
		b.close()
	}
	if !errors.Is(err, keys.ErrMasterKey) {
		t.Errorf("start with another master key: got %v, want ErrMasterKey", err)
	}
}
