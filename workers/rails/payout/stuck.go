package payout

import (
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
)

// Stuck is a payout asked of its provider that the provider has not
// ended: its payment stays transferring (a refund, a payout under its own
// key, stays sending). Most end by themselves (a
// result, a webhook, the stalled-payment sweep's query); one the provider
// cannot account for (a request whose answer was lost and that it does
// not know, a transfer held for an OTP) waits for an operator, who checks
// the provider's own statement and resolves it (Resolution).
type Stuck struct {
	Provider  string    `json:"provider"`  // mpesa or paystack
	PaymentID uuid.UUID `json:"paymentId"` // a return's: the unmatched funds' id
	TenantID  uuid.UUID `json:"tenantId"`
	// Reference is the payout's key, as the provider knows it
	// (OriginatorConversationID, transfer reference): the payment id, or a
	// refund's own, change-<payment id> or return-<unmatched funds id>.
	Reference    string          `json:"reference"`
	Amount       decimal.Decimal `json:"amount"`
	Currency     string          `json:"currency"`
	Acknowledged bool            `json:"acknowledged"`         // the provider answered the request (M-Pesa's ConversationID, Paystack's transfer code)
	ProviderID   string          `json:"providerId,omitempty"` // that answer's id
	Status       string          `json:"status"`               // pending, or the outcome an operator recorded
	Receipt      string          `json:"receipt,omitempty"`    // the provider's receipt of a payout made
	Reason       string          `json:"reason,omitempty"`     // why a payout was not made
	AskedAt      time.Time       `json:"askedAt"`              // when the payout was first asked for
	UpdatedAt    time.Time       `json:"updatedAt"`
}

// Resolution is an operator's outcome for a stuck payout, recorded on the
// rail's row before its payment is ended: a result the provider sends
// later is then compared with it (and alerted on when it disagrees),
// never taken as a second outcome.
type Resolution struct {
	Paid    bool
	Receipt string // the provider's receipt, when paid
	Reason  string // why not, when not paid
}

// ErrNotStuck is returned for a payout its rail does not hold pending:
// there is none under the key, it was never asked for, or it has an
// outcome already (other than the one being recorded).
var ErrNotStuck = errors.New("no pending payout under this key at the provider")
