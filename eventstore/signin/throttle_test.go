package signin

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore/storetest"
	"github.com/ledger/ledger/eventstore/testenv"
)

// TestSignInAttemptsInParallelRespectTheLimit: 40 attempts at one address
// from one client at once, against a limit of 5 a client: exactly 5 are
// admitted (each recorded as failed until cleared). Other clients are
// admitted until the address's 20 in all; then no client is, while another
// address still is; a success clears the failures of its own client only.
func TestSignInAttemptsInParallelRespectTheLimit(t *testing.T) {
	t.Parallel()
	ctx := testenv.Context(t, 30*time.Second)
	th := NewThrottle(storetest.Migrated(t, 16))
	now := time.Now()
	lockout := domain.SignInLockout{Since: now.Add(-15 * time.Minute), PerClient: 5, PerAddress: 20, PerClientAllAddresses: 100}
	reserve := func(email, client string) bool {
		t.Helper()
		ok, err := th.ReserveSignInAttempt(ctx, email, client, now, lockout)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	var admitted atomic.Int32
	var wg sync.WaitGroup
	for range 40 {
		wg.Go(func() {
			ok, err := th.ReserveSignInAttempt(ctx, "ops@acme.test", "192.0.2.1", now, lockout)
			if err != nil {
				t.Error(err)
			}
			if ok {
				admitted.Add(1)
			}
		})
	}
	wg.Wait()
	if got := admitted.Load(); got != 5 {
		t.Fatalf("admitted %d of 40 parallel attempts, want 5", got)
	}
	for i := range 15 {
		if client := fmt.Sprintf("198.51.100.%d", i/3); !reserve("ops@acme.test", client) {
			t.Fatalf("attempt %d of the address in all, from %s: refused, want admitted", 6+i, client)
		}
	}
	if reserve("ops@acme.test", "203.0.113.9") {
		t.Fatal("a new client after the address's 20 failures: admitted, want refused")
	}
	if !reserve("other@acme.test", "192.0.2.1") {
		t.Fatal("another address from the locked-out client: refused, want admitted")
	}
	if err := th.ClearSignInFailures(ctx, "ops@acme.test", "192.0.2.1"); err != nil {
		t.Fatal(err)
	}
	if !reserve("ops@acme.test", "192.0.2.1") {
		t.Fatal("the client whose failures a success cleared: refused, want admitted")
	}
	for range 2 { // 198.51.100.0 failed three times: two more pass, not five
		if !reserve("ops@acme.test", "198.51.100.0") {
			t.Fatal("another client's fourth or fifth attempt: refused, want admitted")
		}
	}
	if reserve("ops@acme.test", "198.51.100.0") {
		t.Fatal("another client's sixth attempt after a success elsewhere: admitted, want refused (its failures kept)")
	}
}

// TestSignInFailuresExpireWithTheirWindow: failures at 50 addresses, each
// tried once, are gone once the window has passed them, at the next
// attempt at any address; that attempt's own failure stays.
func TestSignInFailuresExpireWithTheirWindow(t *testing.T) {
	t.Parallel()
	ctx := testenv.Context(t, 30*time.Second)
	pool := storetest.Migrated(t, 4)
	th := NewThrottle(pool)
	start := time.Now()
	lockout := domain.SignInLockout{Since: start.Add(-15 * time.Minute), PerClient: 5, PerAddress: 20, PerClientAllAddresses: 100}
	for i := range 50 {
		if _, err := th.ReserveSignInAttempt(ctx, fmt.Sprintf("guess%d@acme.test", i), "192.0.2.1", start, lockout); err != nil {
			t.Fatal(err)
		}
	}
	later := start.Add(16 * time.Minute)
	lockout.Since = later.Add(-15 * time.Minute)
	if _, err := th.ReserveSignInAttempt(ctx, "ops@acme.test", "198.51.100.1", later, lockout); err != nil {
		t.Fatal(err)
	}
	var rows int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM dashboard_sign_in_failures`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != 1 {
		t.Errorf("failures kept: got %d, want 1 (the latest attempt's; the window passed the rest)", rows)
	}
}

// TestSignInClientCeilingAcrossAddresses: 60 attempts at 60 addresses from
// one client at once, against a ceiling of 30 for a client at all
// addresses: exactly 30 are admitted; another client still is.
func TestSignInClientCeilingAcrossAddresses(t *testing.T) {
	t.Parallel()
	ctx := testenv.Context(t, 30*time.Second)
	th := NewThrottle(storetest.Migrated(t, 16))
	now := time.Now()
	lockout := domain.SignInLockout{Since: now.Add(-15 * time.Minute), PerClient: 5, PerAddress: 20, PerClientAllAddresses: 30}
	var admitted atomic.Int32
	var wg sync.WaitGroup
	for i := range 60 {
		wg.Go(func() {
			ok, err := th.ReserveSignInAttempt(ctx, fmt.Sprintf("guess%d@acme.test", i), "192.0.2.1", now, lockout)
			if err != nil {
				t.Error(err)
			}
			if ok {
				admitted.Add(1)
			}
		})
	}
	wg.Wait()
	if got := admitted.Load(); got != 30 {
		t.Errorf("admitted %d of 60 parallel attempts at distinct addresses, want 30", got)
	}
	if ok, err := th.ReserveSignInAttempt(ctx, "guess0@acme.test", "198.51.100.1", now, lockout); err != nil || !ok {
		t.Errorf("another client: got admitted %v (err %v), want admitted", ok, err)
	}
}
