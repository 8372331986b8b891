package lightning

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/google/uuid"
	"github.com/lightningnetwork/lnd/lnwire"
	"github.com/lightningnetwork/lnd/zpay32"
)

var _ Node = (*SandboxNode)(nil)

// sandboxPubKey pins the documented key: changing it would orphan every
// sandbox invoice already handed out.
const sandboxPubKey = "0207d59ed1518f25401ab18c9c439308ae11616d878286fcd97c2e06504449b164"

func sandboxRequest() InvoiceRequest {
	return InvoiceRequest{
		PaymentID:   uuid.MustParse("7c9e6679-7425-40de-944b-e07fc1f90ae7"),
		AmountSats:  250_000,
		Description: "Payment 7c9e6679 to Acme",
		CreatedAt:   time.Date(2025, 3, 1, 12, 0, 0, 750_000_000, time.UTC),
		Expiry:      15 * time.Minute,
	}
}

func mustInvoice(t *testing.T, n *SandboxNode, r InvoiceRequest) Invoice {
	t.Helper()
	inv, err := n.CreateInvoice(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

func TestSandboxPubKey(t *testing.T) {
	t.Parallel()
	if got := NewSandboxNode().PubKey(); got != sandboxPubKey {
		t.Errorf("got %s, want %s", got, sandboxPubKey)
	}
}

// TestSandboxInvoiceDecodes reads the invoice with lnd's zpay32, not ours.
func TestSandboxInvoiceDecodes(t *testing.T) {
	t.Parallel()
	n, r := NewSandboxNode(), sandboxRequest()
	inv := mustInvoice(t, n, r)

	if !strings.HasPrefix(inv.PaymentRequest, "lnbcrt2500u1") {
		t.Errorf("payment request %s, want prefix lnbcrt2500u1", inv.PaymentRequest)
	}
	if want := time.Date(2025, 3, 1, 12, 15, 0, 0, time.UTC); !inv.ExpiresAt.Equal(want) {
		t.Errorf("expires at: got %v, want %v", inv.ExpiresAt, want)
	}
	if inv.AmountSats != r.AmountSats {
		t.Errorf("amount: got %d, want %d", inv.AmountSats, r.AmountSats)
	}
	preimage := n.Preimage(r.PaymentID)
	if hash := sha256.Sum256(preimage[:]); inv.PaymentHash != hex.EncodeToString(hash[:]) {
		t.Errorf("payment hash %s is not SHA-256 of the preimage %x", inv.PaymentHash, preimage)
	}

	d, err := zpay32.Decode(inv.PaymentRequest, &chaincfg.RegressionNetParams)
	if err != nil {
		t.Fatal(err)
	}
	if got := hex.EncodeToString(d.Destination.SerializeCompressed()); got != sandboxPubKey {
		t.Errorf("signature recovers %s, want %s", got, sandboxPubKey)
	}
	if d.MilliSat == nil || *d.MilliSat != 250_000_000 {
		t.Errorf("amount: got %v msat, want 250000000", d.MilliSat)
	}
	if got := d.Timestamp.Unix(); got != r.CreatedAt.Unix() {
		t.Errorf("timestamp: got %d, want %d", got, r.CreatedAt.Unix())
	}
	if got := d.Timestamp.Add(d.Expiry()); !got.Equal(inv.ExpiresAt) {
		t.Errorf("decoded expiry: got %v, want %v", got, inv.ExpiresAt)
	}
	if got := hex.EncodeToString(d.PaymentHash[:]); got != inv.PaymentHash {
		t.Errorf("payment hash: got %s, want %s", got, inv.PaymentHash)
	}
	if d.Description == nil || *d.Description != r.Description {
		t.Errorf("description: got %v, want %q", d.Description, r.Description)
	}
	if d.PaymentAddr.UnwrapOr([32]byte{}) != n.derive("secret", r.PaymentID) {
		t.Errorf("payment secret: got %v, want the derived one", d.PaymentAddr)
	}
	if d.MinFinalCLTVExpiry() != sandboxMinFinalCLTV {
		t.Errorf("min final cltv: got %d, want %d", d.MinFinalCLTVExpiry(), sandboxMinFinalCLTV)
	}
	for _, bit := range []lnwire.FeatureBit{lnwire.TLVOnionPayloadRequired, lnwire.PaymentAddrRequired} {
		if !d.Features.RequiresFeature(bit) {
			t.Errorf("feature %d not required", bit)
		}
	}
}

func TestSandboxDeterministic(t *testing.T) {
	t.Parallel()
	r := sandboxRequest()
	first := mustInvoice(t, NewSandboxNode(), r)
	if again := mustInvoice(t, NewSandboxNode(), r); again != first {
		t.Errorf("same request: got %+v, want %+v", again, first)
	}
	r.PaymentID = uuid.MustParse("2d8f0f4e-6b3a-4c1e-9d7a-5b6c7d8e9f00")
	if other := mustInvoice(t, NewSandboxNode(), r); other.PaymentHash == first.PaymentHash {
		t.Errorf("two payments share payment hash %s", first.PaymentHash)
	}
}

func TestSandboxLongDescriptionIsHashed(t *testing.T) {
	t.Parallel()
	r := sandboxRequest()
	r.Description = strings.Repeat("a", MaxDescriptionLen+1)
	d, err := zpay32.Decode(mustInvoice(t, NewSandboxNode(), r).PaymentRequest, &chaincfg.RegressionNetParams)
	if err != nil {
		t.Fatal(err)
	}
	if want := sha256.Sum256([]byte(r.Description)); d.DescriptionHash == nil || *d.DescriptionHash != want {
		t.Errorf("description hash: got %v, want %x", d.DescriptionHash, want)
	}
}

func TestSandboxRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		edit func(*InvoiceRequest)
	}{
		{"zero amount", func(r *InvoiceRequest) { r.AmountSats = 0 }},
		{"more than 21 million bitcoin", func(r *InvoiceRequest) { r.AmountSats = maxSats + 1 }},
		{"no expiry", func(r *InvoiceRequest) { r.Expiry = 0 }},
		{"no creation time", func(r *InvoiceRequest) { r.CreatedAt = time.Time{} }},
	}
	for _, tt := range tests {
		r := sandboxRequest()
		tt.edit(&r)
		if got, err := NewSandboxNode().CreateInvoice(context.Background(), r); err == nil {
			t.Errorf("%s: got %+v, want an error", tt.name, got)
		}
	}
}
