package lightning

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/google/uuid"
)

// SandboxKeyPhrase is public on purpose: the sandbox node's private key is
// its SHA-256, like a published test key. Every ledgerd instance signs with
// it, on regtest only, so invoices never carry value.
const SandboxKeyPhrase = "ledger sandbox lightning node v1"

// maxSats is every bitcoin there will be; it also keeps msat within uint64.
const maxSats = 21_000_000 * 100_000_000

// sandboxMinFinalCLTV is lnd's default; BOLT #11 says a writer MUST include `c`.
const sandboxMinFinalCLTV = 80

// SandboxNode is a regtest Node with no state: the preimage, payment hash and
// payment secret derive from the payment id under the node key, so every
// process and every retry returns the same invoice for the same request.
type SandboxNode struct {
	key *secp256k1.PrivateKey
}

// NewSandboxNode returns the node whose key is SHA-256(SandboxKeyPhrase).
func NewSandboxNode() *SandboxNode {
	seed := sha256.Sum256([]byte(SandboxKeyPhrase))
	return &SandboxNode{key: secp256k1.PrivKeyFromBytes(seed[:])}
}

// PubKey returns the node id: the compressed public key in hex.
func (n *SandboxNode) PubKey() string {
	return hex.EncodeToString(n.key.PubKey().SerializeCompressed())
}

// Preimage returns the secret whose SHA-256 is the payment hash of the
// payment's invoice; the sandbox deposit helper reveals it to settle.
func (n *SandboxNode) Preimage(paymentID uuid.UUID) [32]byte {
	return n.derive("preimage", paymentID)
}

// CreateInvoice signs a regtest invoice for r.
func (n *SandboxNode) CreateInvoice(_ context.Context, r InvoiceRequest) (Invoice, error) {
	if r.AmountSats <= 0 || r.AmountSats > maxSats {
		return Invoice{}, fmt.Errorf("sandbox invoice: amount %d sats out of range", r.AmountSats)
	}
	if r.Expiry < time.Second {
		return Invoice{}, errors.New("sandbox invoice: expiry under a second")
	}
	preimage := n.Preimage(r.PaymentID)
	secret := n.derive("secret", r.PaymentID)
	b := Bolt11{
		Network:            Regtest,
		AmountMsat:         uint64(r.AmountSats) * 1000,
		Timestamp:          r.CreatedAt,
		PaymentHash:        sha256.Sum256(preimage[:]),
		PaymentSecret:      &secret,
		Description:        r.Description,
		Expiry:             r.Expiry,
		MinFinalCLTVExpiry: sandboxMinFinalCLTV,
		Features:           []int{FeatureVarOnionOptin, FeaturePaymentSecret},
	}
	if len(r.Description) > MaxDescriptionLen {
		hash := sha256.Sum256([]byte(r.Description))
		b.Description, b.DescriptionHash = "", &hash
	}
	pr, err := Encode(b, n.key)
	if err != nil {
		return Invoice{}, fmt.Errorf("sandbox invoice: %w", err)
	}
	return Invoice{
		PaymentRequest: pr,
		PaymentHash:    hex.EncodeToString(b.PaymentHash[:]),
		AmountSats:     r.AmountSats,
		ExpiresAt:      r.CreatedAt.Truncate(time.Second).Add(r.Expiry.Truncate(time.Second)),
	}, nil
}

// derive is HMAC-SHA256(node key, label || payment id): fixed per payment,
// and distinct per label so the payment secret is not the preimage.
func (n *SandboxNode) derive(label string, paymentID uuid.UUID) [32]byte {
	mac := hmac.New(sha256.New, n.key.Serialize())
	mac.Write([]byte(label))
	mac.Write(paymentID[:])
	var out [32]byte
	mac.Sum(out[:0])
	return out
}
