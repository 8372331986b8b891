// Package lightning issues BOLT #11 invoices for Lightning deposits. The
// service talks to a Node; SandboxNode signs invoices itself, and a
// production adapter (an LND REST client, say) replaces it behind the same
// interface.
package lightning

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// InvoiceRequest asks a node for an invoice paying one payment's deposit.
type InvoiceRequest struct {
	PaymentID   uuid.UUID
	AmountSats  int64
	Description string
	CreatedAt   time.Time
	Expiry      time.Duration // the payment's validity: whole seconds, as BOLT #11 states it
}

// MaxInvoiceExpiry is the longest expiry lnd gives an invoice (its
// AddInvoice refuses more than a year).
const MaxInvoiceExpiry = 365 * 24 * time.Hour

// Invoice is the node's answer: what the payer pays and how we recognise it.
type Invoice struct {
	PaymentRequest string // BOLT #11, lower case
	PaymentHash    string // lowercase hex; settles the deposit when paid
	AmountSats     int64
	ExpiresAt      time.Time // as the invoice states it: its timestamp plus its expiry
}

// Node creates invoices. Implementations must be idempotent per PaymentID:
// workers retry, and several ledgerd processes may ask for the same payment.
type Node interface {
	CreateInvoice(ctx context.Context, r InvoiceRequest) (Invoice, error)
}
