package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ledger/ledger/eventstore/keys"
	"github.com/ledger/ledger/eventstore/testenv"
)

// TestKeysRotateMaster: keys rotate wraps the new key with
// LEDGER_MASTER_KEY_FILE's master key, and refuses without one or with one
// the stored keys are not wrapped with; keys rotate-master re-wraps every
// key, after which only the new master key rotates.
func TestKeysRotateMaster(t *testing.T) {
	t.Parallel()
	ctx := testenv.Context(t, time.Minute)
	url := testenv.NewDatabase(t)
	oldKey, _, err := keys.LocalMasterKeyFile(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	newKey, _, err := keys.LocalMasterKeyFile(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ledgerctl := func(masterKeyFile string, args ...string) (string, error) {
		var out bytes.Buffer
		err := run(ctx, args, func(k string) string {
			return map[string]string{"DATABASE_URL": url, "LEDGER_MASTER_KEY_FILE": masterKeyFile, "LEDGER_DATA_DIR": t.TempDir()}[k]
		}, &out)
		return out.String(), err
	}

	if _, err := ledgerctl("", "keys", "rotate"); err == nil || !strings.Contains(err.Error(), "LEDGER_MASTER_KEY_FILE") {
		t.Errorf("keys rotate without a master key: got %v, want an error naming LEDGER_MASTER_KEY_FILE", err)
	}
	if _, err := ledgerctl(oldKey, "keys", "rotate"); err != nil {
		t.Fatalf("keys rotate: %v", err)
	}
	if _, err := ledgerctl(newKey, "keys", "rotate"); !errors.Is(err, keys.ErrMasterKey) {
		t.Errorf("keys rotate with another master key: got %v, want ErrMasterKey", err)
	}
	out, err := ledgerctl("", "keys", "rotate-master", "--old", oldKey, "--new", newKey)
	var rewrapped struct {
		Rewrapped int `json:"rewrapped"`
	}
	if err != nil || json.Unmarshal([]byte(out), &rewrapped) != nil || rewrapped.Rewrapped != 1 {
		t.Fatalf("keys rotate-master: got %s %v, want 1 key re-wrapped", out, err)
	}
	if _, err := ledgerctl(oldKey, "keys", "rotate"); !errors.Is(err, keys.ErrMasterKey) {
		t.Errorf("keys rotate with the old master key: got %v, want ErrMasterKey", err)
	}
	if _, err := ledgerctl(newKey+","+oldKey, "keys", "rotate"); err != nil {
		t.Errorf("keys rotate with the new master key, the old one beside: %v", err)
	}
	if _, err := ledgerctl("", "keys", "rotate-master", "--old", oldKey, "--new", oldKey); err == nil {
		t.Errorf("keys rotate-master to the same key: got no error, want one")
	}
}
