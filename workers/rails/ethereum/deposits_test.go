package ethereum

import (
	"context"
	"testing"

	"github.com/google/uuid"
)

var _ Deposits = (*SandboxDeposits)(nil)

func mustDepositAddress(t *testing.T, d *SandboxDeposits, id uuid.UUID) string {
	t.Helper()
	addr, err := d.DepositAddress(context.Background(), uuid.Nil, id)
	if err != nil {
		t.Fatal(err)
	}
	if !ValidChecksumAddress(addr) {
		t.Fatalf("deposit address %s is not EIP-55", addr)
	}
	return addr
}

func TestSandboxDepositAddress(t *testing.T) {
	t.Parallel()
	seed := []byte("ledger sandbox ethereum deposits, test seed 32 bytes")
	a, b := uuid.MustParse("7c9e6679-7425-40de-944b-e07fc1f90ae7"), uuid.MustParse("2d8f0f4e-6b3a-4c1e-9d7a-5b6c7d8e9f00")

	first := mustDepositAddress(t, NewSandboxDeposits(seed), a)
	if again := mustDepositAddress(t, NewSandboxDeposits(seed), a); again != first {
		t.Errorf("same payment on another instance: got %s, want %s", again, first)
	}
	if other := mustDepositAddress(t, NewSandboxDeposits(seed), b); other == first {
		t.Errorf("two payments share %s", first)
	}
	if otherSeed := mustDepositAddress(t, NewSandboxDeposits([]byte("another seed")), a); otherSeed == first {
		t.Errorf("two seeds share %s", first)
	}
}

func TestSandboxDepositsCopiesSeed(t *testing.T) {
	t.Parallel()
	seed := []byte("ledger sandbox ethereum deposits")
	d := NewSandboxDeposits(seed)
	id := uuid.MustParse("7c9e6679-7425-40de-944b-e07fc1f90ae7")
	before := mustDepositAddress(t, d, id)
	seed[0] ^= 0xff
	if after := mustDepositAddress(t, d, id); after != before {
		t.Errorf("caller's seed change moved the address from %s to %s", before, after)
	}
}
