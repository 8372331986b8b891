package keys_test

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ledger/ledger/eventstore/keys"
	"github.com/ledger/ledger/eventstore/sealing"
	"github.com/ledger/ledger/eventstore/storetest"
	"github.com/ledger/ledger/eventstore/testenv"
)

// randomBytes returns n random bytes.
func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

// TestDumpHoldsNoKey: keys stored in clear before envelope encryption are
// wrapped at start (by two processes at once, each key once), new keys
// are stored wrapped, and pg_dump of the database then holds none of the
// signing or sealing secrets in any encoding; the processes, which hold
// the master key, still use every one of them, and a process with another
// master key uses none.
func TestDumpHoldsNoKey(t *testing.T) {
	t.Parallel()
	ctx := testenv.Context(t, 60*time.Second)
	pool, url := storetest.MigratedURL(t, 4)
	master := storetest.MasterKeys(t)

	oldSigning, oldSealing := randomBytes(32), randomBytes(32)
	if _, err := pool.Exec(ctx, `INSERT INTO signing_keys (kid, clear_secret, signs_from, tenant_token_ttl, user_token_ttl)
		VALUES ('old', $1, now() - interval '1 hour', '1 hour', '1 day')`, oldSigning); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO sealing_keys (kid, clear_key, created_at) VALUES ('k0', $1, now() - interval '1 hour')`, oldSealing); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Go(func() { errs[i] = keys.WrapStoredKeys(ctx, pool, master) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("wrap the stored keys: %v", err)
	}
	if err := keys.EnsureKey(ctx, pool, master, testLifetimes); err != nil {
		t.Fatal(err)
	}
	// A new signing key, and the first sealing key of the sealer.
	kid, _, err := keys.RotateKey(ctx, pool, master, false, testLifetimes)
	if err != nil {
		t.Fatal(err)
	}
	signing := keys.NewSigningKeys(pool, master)
	old, err := signing.Verifying(ctx, "old")
	if err != nil || !bytes.Equal(old.Secret, oldSigning) {
		t.Fatalf("the old signing key: got %x (%v), want %x", old.Secret, err, oldSigning)
	}
	newKey, err := signing.Verifying(ctx, kid)
	if err != nil {
		t.Fatal(err)
	}
	sealer := sealing.NewSealer(pool, master)
	sealed, err := sealer.Seal(ctx, "whsec_dumped")
	if err != nil || !strings.HasPrefix(sealed, "sealed:v1:k1:") {
		t.Fatalf("seal: got %q %v, want it sealed with a new key k1", sealed, err)
	}
	var wrappedK1 []byte
	var kekID string
	if err := pool.QueryRow(ctx, `SELECT wrapped_key, kek_id FROM sealing_keys WHERE kid = 'k1'`).Scan(&wrappedK1, &kekID); err != nil {
		t.Fatal(err)
	}
	newSealing, err := master.Unwrap(kekID, keys.SealingKeyAAD("k1"), wrappedK1)
	if err != nil {
		t.Fatal(err)
	}
	csrfKey, err := keys.NewServerKeys(pool, master).Key(ctx, "csrf")
	if err != nil {
		t.Fatal(err)
	}
	var clear int
	if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM signing_keys WHERE clear_secret IS NOT NULL) +
		(SELECT count(*) FROM sealing_keys WHERE clear_key IS NOT NULL)`).Scan(&clear); err != nil || clear != 0 {
		t.Errorf("keys in clear: got %d (%v), want none", clear, err)
	}

	dump, err := exec.CommandContext(ctx, "pg_dump", "--dbname="+url).Output()
	if err != nil {
		t.Fatalf("pg_dump: %v", err)
	}
	if !bytes.Contains(dump, []byte(kid)) || !bytes.Contains(dump, []byte(master.ID())) {
		t.Fatalf("the dump names neither key %s nor master key %s: not this database's", kid, master.ID())
	}
	for name, secret := range map[string][]byte{"old signing key": oldSigning, "new signing key": newKey.Secret,
		"old sealing key": oldSealing, "new sealing key": newSealing, "server key": csrfKey} {
		for encoding, text := range map[string]string{
			"raw":       string(secret),
			"hex":       hex.EncodeToString(secret),
			"HEX":       strings.ToUpper(hex.EncodeToString(secret)),
			"base64":    base64.StdEncoding.EncodeToString(secret),
			"base64url": base64.RawURLEncoding.EncodeToString(secret),
			"base64raw": base64.RawStdEncoding.EncodeToString(secret),
		} {
			if bytes.Contains(dump, []byte(text)) {
				t.Errorf("the dump holds the %s in %s", name, encoding)
			}
		}
	}

	// A process with another master key cannot use the keys.
	other := storetest.MasterKeys(t)
	if _, err := keys.NewSigningKeys(pool, other).Signing(ctx); !errors.Is(err, keys.ErrMasterKey) {
		t.Errorf("signing key under another master key: got %v, want ErrMasterKey", err)
	}
	if _, err := sealing.NewSealer(pool, other).Open(ctx, sealed); !errors.Is(err, keys.ErrMasterKey) {
		t.Errorf("sealing key under another master key: got %v, want ErrMasterKey", err)
	}
	if _, err := keys.NewServerKeys(pool, other).Key(ctx, "csrf"); !errors.Is(err, keys.ErrMasterKey) {
		t.Errorf("server key under another master key: got %v, want ErrMasterKey", err)
	}
	if _, _, err := keys.RotateKey(ctx, pool, other, false, testLifetimes); !errors.Is(err, keys.ErrMasterKey) {
		t.Errorf("rotate with another master key: got %v, want ErrMasterKey", err)
	}
}

// TestRewrapKeys: changing the master key re-wraps every stored key under
// the new one, in one go that can be run again; processes holding both
// work throughout, and afterwards the new one alone suffices.
func TestRewrapKeys(t *testing.T) {
	t.Parallel()
	ctx := testenv.Context(t, 30*time.Second)
	pool := storetest.Migrated(t, 4)
	oldKEK, newKEK := randomBytes(32), randomBytes(32)
	older, _ := keys.NewMasterKeys(oldKEK)
	newer, _ := keys.NewMasterKeys(newKEK)
	both, _ := keys.NewMasterKeys(newKEK, oldKEK)
	if err := keys.EnsureKey(ctx, pool, older, testLifetimes); err != nil {
		t.Fatal(err)
	}
	sealed, err := sealing.NewSealer(pool, older).Seal(ctx, "whsec_kept")
	if err != nil {
		t.Fatal(err)
	}
	csrfKey, err := keys.NewServerKeys(pool, older).Key(ctx, "csrf")
	if err != nil {
		t.Fatal(err)
	}
	// Every process restarts holding both, the new one first.
	if err := keys.EnsureKey(ctx, pool, both, testLifetimes); err != nil {
		t.Fatalf("start with both master keys: %v", err)
	}
	before, err := keys.NewSigningKeys(pool, both).Signing(ctx)
	if err != nil {
		t.Fatalf("signing key under both master keys: %v", err)
	}
	if n, err := keys.RewrapKeys(ctx, pool, older, newer); err != nil || n != 3 {
		t.Fatalf("rewrap: got %d %v, want 3 keys (signing, sealing, server)", n, err)
	}
	if n, err := keys.RewrapKeys(ctx, pool, older, newer); err != nil || n != 0 {
		t.Fatalf("rewrap again: got %d %v, want nothing to do", n, err)
	}
	for name, m := range map[string]*keys.MasterKeys{"both": both, "the new one": newer} {
		after, err := keys.NewSigningKeys(pool, m).Signing(ctx)
		if err != nil || !bytes.Equal(after.Secret, before.Secret) {
			t.Errorf("signing key under %s: got %x %v, want %x", name, after.Secret, err, before.Secret)
		}
		if got, err := sealing.NewSealer(pool, m).Open(ctx, sealed); err != nil || got != "whsec_kept" {
			t.Errorf("sealed value under %s: got %q %v, want it opened", name, got, err)
		}
		if got, err := keys.NewServerKeys(pool, m).Key(ctx, "csrf"); err != nil || !bytes.Equal(got, csrfKey) {
			t.Errorf("server key under %s: got %x %v, want %x", name, got, err, csrfKey)
		}
	}
	if _, err := keys.NewSigningKeys(pool, older).Signing(ctx); !errors.Is(err, keys.ErrMasterKey) {
		t.Errorf("signing key under the old master key alone: got %v, want ErrMasterKey", err)
	}
	if _, err := keys.NewServerKeys(pool, older).Key(ctx, "csrf"); !errors.Is(err, keys.ErrMasterKey) {
		t.Errorf("server key under the old master key alone: got %v, want ErrMasterKey", err)
	}
}
