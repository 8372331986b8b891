package domain

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
)

// Payment statuses (spec §3.1, contract §6).
const (
	StatusCreated      = "created"
	StatusDeposited    = "deposited"
	StatusTransferring = "transferring"
	StatusSuccess      = "success"
	StatusExpired      = "expired"
	StatusFailed       = "failed"
)

// PaymentStatuses lists every status, in lifecycle order.
var PaymentStatuses = []string{StatusCreated, StatusDeposited, StatusTransferring, StatusSuccess, StatusExpired, StatusFailed}

// Funding rails: how the payer pays in.
const (
	FundingLightning    = "LIGHTNING"     // a BOLT11 invoice
	FundingBankTransfer = "BANK_TRANSFER" // a deposit quoting our reference
	FundingMomo         = "MOMO"          // a push prompt to the payer's default momo account
	FundingUSDT         = "USDT"          // an ERC-20 transfer to a one-time address
)

// Payment is the state of one payment's stream: what was asked, how it is
// funded and priced, and where it is in its lifecycle. Amounts not known
// yet are nil. The JSON form is the payments read model's row.
type Payment struct {
	ID                  uuid.UUID         `json:"id"`
	UserID              uuid.UUID         `json:"userId"` // whose payment: the token's user, or the tenant's owner
	MerchantID          uuid.UUID         `json:"merchantId"`
	Amount              int64             `json:"amount"`
	Reference           string            `json:"reference,omitempty"`
	Tag                 string            `json:"tag,omitempty"`
	Type                string            `json:"type,omitempty"`
	FromCountry         string            `json:"fromCountry"`
	FromCurrency        string            `json:"fromCurrency"`
	DestinationCountry  string            `json:"destinationCountry"`
	DestinationCurrency string            `json:"destinationCurrency"`
	PayoutMethod        string            `json:"payoutMethod"`
	PaymentType         string            `json:"paymentType"`
	Funding             string            `json:"funding"`
	IsSlowPayment       bool              `json:"isSlowPayment,omitempty"`
	IsInstantPayment    bool              `json:"isInstantPayment"`
	BufferRate          *decimal.Decimal  `json:"bufferRate,omitempty"` // as the partner sent it; nil when not sent
	WebhookURL          string            `json:"webhookUrl,omitempty"`
	WebhookSecret       string            `json:"webhookSecret" ledger:"secret"`
	Meta                json.RawMessage   `json:"meta" ledger:"personal"` // an object, as sent (internal keys are stripped on output)
	Status              string            `json:"status"`
	StatusLog           string            `json:"statusLog"`
	StatusLogs          []StatusLogEntry  `json:"statusLogs"`
	DestinationAmount   decimal.Decimal   `json:"destinationAmount"` // what the merchant is due: amount, or for USDT funding the estimate at creation
	PayoutAmount        decimal.Decimal   `json:"payoutAmount"`      // what the payout pays, fixed at conversion
	DepositDue          decimal.Decimal   `json:"depositDue"`        // what the payer must deposit, in DepositCurrency
	DepositCurrency     string            `json:"depositCurrency"`   // sats for Lightning, else the source currency
	AmountDeposited     decimal.Decimal   `json:"amountDeposited"`   // in DepositCurrency
	HeldForDocuments    bool              `json:"heldForDocuments"`
	AmountSettled       *decimal.Decimal  `json:"amountSettled,omitempty"`
	AmountSats          *int64            `json:"amountSats,omitempty"` // amountBtc
	BTCPrice            decimal.Decimal   `json:"btcPrice"`
	OTCFees             decimal.Decimal   `json:"otcFees"`
	BufferAmountSats    int64             `json:"bufferAmountSats"`
	ChangeRefundSats    *int64            `json:"changeRefundSats,omitempty"`
	ChangeRefundStatus  string            `json:"changeRefundStatus,omitempty"`
	ChangeDue           *decimal.Decimal  `json:"changeDue,omitempty"`     // the change in DepositCurrency, as booked to change_payable
	ChangeRefund        *PayerRefund      `json:"changeRefund,omitempty"`  // how the change is paid back (change_refund.go)
	Payer               *Payer            `json:"payer" ledger:"personal"` // as the funding rail reported them; nil when it did not
	LightningInvoice    *LightningInvoice `json:"lightningInvoice,omitempty"`
	DepositDetails      json.RawMessage   `json:"depositDetails,omitempty"`
	RecipientDetails    RecipientDetails  `json:"recipientDetails" ledger:"personal"`
	ValidityDuration    int64             `json:"validityDuration"` // seconds
	ExpiresAt           time.Time         `json:"expiresAt"`
	Documents           int               `json:"documents"`
	PayoutReversedAt    *time.Time        `json:"payoutReversedAt,omitempty"` // a confirmed payout came back (payment.payout_reversed)
	CreatedAt           time.Time         `json:"createdAt"`
	UpdatedAt           time.Time         `json:"updatedAt"` // the time of the latest event, as its decision gave it

	// DepositRefs are the provider ids of the transfers (RecordDeposit.Ref) already
	// counted in AmountDeposited. Kept in the read model's state, which
	// decisions are made on, and not served by the API.
	DepositRefs []string `json:"depositRefs,omitempty"`
}

// StatusLogEntry is one line of a payment's status history
// (includeStatusLog=true, contract §6).
type StatusLogEntry struct {
	Status  string    `json:"status"`
	Message string    `json:"message"`
	At      time.Time `json:"at"`
}

// LightningInvoice is the funding details of a Lightning-funded payment
// (contract §6): a BOLT11 invoice for exactly AmountSats.
type LightningInvoice struct {
	PaymentRequest string    `json:"paymentRequest"`
	PaymentHash    string    `json:"paymentHash"`
	AmountSats     int64     `json:"amountSats"`
	ExpiresAt      time.Time `json:"expiresAt"`
}

// RecipientDetails is where the payout goes (recipientBankDetails), copied
// from the merchant when the payment is created so a payment's history
// says where its money went. Members a payout method does not use are empty.
// The account number, phone number and Lightning address are personal
// wherever a RecipientDetails appears; Name is the merchant's trading name
// (published in merchant.created). payment.created withholds the whole
// object all the same (the ledger tag on Payment): who a payer paid is for
// auditors, not for the stream.
type RecipientDetails struct {
	Name          string `json:"name"`
	Country       string `json:"country"`
	Currency      string `json:"currency"`
	PayoutMethod  string `json:"payoutMethod"`
	BankName      string `json:"bankName,omitempty"`
	AccountNumber string `json:"accountNumber,omitempty" ledger:"personal"`
	PhoneNumber   string `json:"phoneNumber,omitempty" ledger:"personal"`
	LNURL         string `json:"lnurl,omitempty" ledger:"personal"`
}

// BankDeposit is depositBankDetails for a bank-transfer payment (spec §2.9):
// Amount is in cents of Currency.
type BankDeposit struct {
	AccountName   string `json:"accountName"`
	AccountNumber string `json:"accountNumber"`
	Reference     string `json:"reference"`
	Amount        int64  `json:"amount"`
	Currency      string `json:"currency"`
}

// PushDeposit is depositBankDetails for a momo push (spec §2.9): Amount is
// in whole units of Currency.
type PushDeposit struct {
	Instructions string `json:"instructions"`
	Amount       int64  `json:"amount"`
	Currency     string `json:"currency"`
	Expiry       string `json:"expiry"`
}

// USDTDeposit is depositBankDetails for a USDT payment (contract §6):
// Amount is in USDT cents.
type USDTDeposit struct {
	Network  string `json:"network"`
	Token    string `json:"token"`
	Standard string `json:"standard"`
	Address  string `json:"address"`
	Amount   int64  `json:"amount"`
	Expiry   string `json:"expiry"`
}

// PaymentCreated opens a payment's stream with everything POST /payments
// decided: the request, the route, the quote and the funding details.
// The webhook secret, the recipient's details and meta (free-form, may name
// people: memberName) are withheld from the NATS publication by their
// ledger tags on Payment. depositDetails is published: it holds our
// collection account, a masked payer phone or a one-time USDT address.
type PaymentCreated struct {
	Payment // embedded: the event's data is the payment's members at the top level
}

// PaymentDocumentAttached records POST /payments/{id}/document: a supporting
// document (spec §2.12) now in the document store. Its file name is personal
// data, as a KYC upload's is: file names name people ("ann-invoice.pdf").
type PaymentDocumentAttached struct {
	DocumentID  uuid.UUID `json:"documentId"`
	FileName    string    `json:"fileName" ledger:"personal"`
	ContentType string    `json:"contentType"`
	Size        int64     `json:"size"`
	SHA256      string    `json:"sha256"`
	Documents   int       `json:"documents"` // the payment's documents with this one
	At          time.Time `json:"at"`
}

func (PaymentCreated) EventType() string          { return "payment.created" }
func (PaymentDocumentAttached) EventType() string { return "payment.document_attached" }

var (
	_ = register(EventDef{Type: "payment.created", Version: 1, New: func() Event { return new(PaymentCreated) },
		Doc: "A payment was created (status created): the request, its route, quote and funding details."})
	_ = register(EventDef{Type: "payment.document_attached", Version: 1, New: func() Event { return new(PaymentDocumentAttached) },
		Doc: "A supporting document was attached to a payment (South African destinations)."})
)

// ApplyPayment folds one event into p. It cannot fail: events are facts.
func ApplyPayment(p Payment, e Event) Payment {
	switch e := e.(type) {
	case PaymentCreated:
		p = e.Payment
	case PaymentDocumentAttached:
		p.Documents, p.UpdatedAt = e.Documents, e.At
	case PaymentChangeRefundSent, PaymentChangeRefunded, PaymentChangeRefundQueued:
		p = applyChangeRefund(p, e)
	default:
		p = applyLifecycle(p, e)
	}
	return p
}
