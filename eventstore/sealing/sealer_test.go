package sealing_test

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ledger/ledger/eventstore/sealing"
	"github.com/ledger/ledger/eventstore/storetest"
	"github.com/ledger/ledger/eventstore/testenv"
)

// TestSealerRoundTrip: a sealed secret reads as none of its plaintext, is
// different each time, and opens to the secret in any process sharing the
// database; values stored before sealing open as they are.
func TestSealerRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := testenv.Context(t, 30*time.Second)
	pool := storetest.Migrated(t, 8)
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

	// Two processes start together: both create "the first key"; one wins
	// and both seal with it.
	master := storetest.MasterKeys(t)
	a, b := sealing.NewSealer(pool, master), sealing.NewSealer(pool, master)
	var sa, sb string
	var errA, errB error
	var wg sync.WaitGroup
	wg.Go(func() { sa, errA = a.Seal(ctx, secret) })
	wg.Go(func() { sb, errB = b.Seal(ctx, secret) })
	wg.Wait()
	if errA != nil || errB != nil {
		t.Fatalf("seal: %v, %v", errA, errB)
	}
	for _, sealed := range []string{sa, sb} {
		if !strings.HasPrefix(sealed, "sealed:v1:k1:") || strings.Contains(sealed, "whsec_") {
			t.Errorf("sealed %q: want sealed:v1:k1:... without the secret", sealed)
		}
	}
	if sa == sb {
		t.Errorf("the same secret sealed twice gave the same text %q: want a fresh nonce each time", sa)
	}
	// A third process, which never sealed, opens both.
	c := sealing.NewSealer(pool, master)
	for _, sealed := range []string{sa, sb} {
		if got, err := c.Open(ctx, sealed); err != nil || got != secret {
			t.Errorf("open %q: got %q, %v; want the secret", sealed, got, err)
		}
	}
	var keys int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM sealing_keys`).Scan(&keys); err != nil || keys != 1 {
		t.Errorf("sealing keys: got %d (%v), want 1", keys, err)
	}

	for _, stored := range []string{"", "whsec_stored-before-sealing", "sealed-looking:v1:k1:x"} {
		if got, err := c.Open(ctx, stored); err != nil || got != stored {
			t.Errorf("open unsealed %q: got %q, %v; want it as it is", stored, got, err)
		}
	}
	if got, err := a.Seal(ctx, ""); err != nil || got != "" {
		t.Errorf("seal of no secret: got %q, %v; want empty", got, err)
	}
}

// TestSealerRefusesAlteredValues: a sealed value that was changed, cut, or
// names a key the database does not have is ErrSealed, never a wrong secret.
func TestSealerRefusesAlteredValues(t *testing.T) {
	t.Parallel()
	ctx := testenv.Context(t, 30*time.Second)
	s := sealing.NewSealer(storetest.Migrated(t, 4), storetest.MasterKeys(t))
	sealed, err := s.Seal(ctx, "whsec_secret")
	if err != nil {
		t.Fatal(err)
	}
	flip := []byte(sealed) // a character inside the ciphertext: every one of its bits is used
	mid := len("sealed:v1:k1:") + (len(sealed)-len("sealed:v1:k1:"))/2
	flip[mid] = map[bool]byte{true: 'B', false: 'A'}[flip[mid] == 'A']
	for name, v := range map[string]string{
		"one character changed": string(flip),
		"cut short":             sealed[:len("sealed:v1:k1:")+8],
		"unknown key":           strings.Replace(sealed, ":k1:", ":k9:", 1),
		"no key id":             "sealed:v1::AAAA",
		"not base64":            "sealed:v1:k1:***",
		"prefix alone":          "sealed:v1:",
	} {
		if got, err := s.Open(ctx, v); !errors.Is(err, sealing.ErrSealed) {
			t.Errorf("%s (%q): got %q, %v; want ErrSealed", name, v, got, err)
		}
	}
}
