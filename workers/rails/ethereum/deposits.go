package ethereum

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/google/uuid"
)

// Deposits hands out the address a payer sends a payment's ether or tokens
// to. Each payment gets its own, so an incoming transfer names its payment.
type Deposits interface {
	DepositAddress(ctx context.Context, tenantID, paymentID uuid.UUID) (string, error)
}

// SandboxDeposits derives each payment's key from a seed with no state, so
// every ledgerd instance gives the same address for a payment and distinct
// payments get distinct addresses. Production keeps keys out of the
// ledger: XPubDeposits derives addresses from an account's public key.
type SandboxDeposits struct {
	seed []byte
}

// NewSandboxDeposits returns deposits derived from seed, which should be 32
// random bytes shared by every instance.
func NewSandboxDeposits(seed []byte) *SandboxDeposits {
	return &SandboxDeposits{seed: append([]byte(nil), seed...)}
}

// DepositAddress returns the checksummed address of the payment's key.
func (d *SandboxDeposits) DepositAddress(_ context.Context, _, paymentID uuid.UUID) (string, error) {
	return ChecksumAddress(AddressFromPublicKey(d.key(paymentID).PubKey())), nil
}

// key is HMAC-SHA256(seed, payment id) reduced mod n. A result of 0, the one
// invalid key, has probability 2^-256.
func (d *SandboxDeposits) key(paymentID uuid.UUID) *secp256k1.PrivateKey {
	mac := hmac.New(sha256.New, d.seed)
	mac.Write(paymentID[:])
	return secp256k1.PrivKeyFromBytes(mac.Sum(nil))
}
