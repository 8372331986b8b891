package keys_test

import (
	"bytes"
	"sync"
	"testing"
	"time"

	"github.com/ledger/ledger/eventstore/keys"
	"github.com/ledger/ledger/eventstore/storetest"
	"github.com/ledger/ledger/eventstore/testenv"
)

// TestServerKeysAreShared: processes starting together agree on one key
// per purpose, and purposes get different keys.
func TestServerKeysAreShared(t *testing.T) {
	t.Parallel()
	ctx := testenv.Context(t, 30*time.Second)
	pool := storetest.Migrated(t, 8)
	master := storetest.MasterKeys(t)
	a, b := keys.NewServerKeys(pool, master), keys.NewServerKeys(pool, master)
	var ka, kb []byte
	var errA, errB error
	var wg sync.WaitGroup
	wg.Go(func() { ka, errA = a.Key(ctx, "test") })
	wg.Go(func() { kb, errB = b.Key(ctx, "test") })
	wg.Wait()
	if errA != nil || errB != nil {
		t.Fatalf("key: %v, %v", errA, errB)
	}
	if len(ka) != 32 || !bytes.Equal(ka, kb) {
		t.Fatalf("keys: got %x and %x, want one 32-byte key", ka, kb)
	}
	other, err := keys.NewServerKeys(pool, master).Key(ctx, "other")
	if err != nil || bytes.Equal(other, ka) {
		t.Errorf("another purpose: got %x, %v; want a key of its own", other, err)
	}
}
