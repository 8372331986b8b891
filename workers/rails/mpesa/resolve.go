package mpesa

import (
	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/workers/rails/payout"
)

// Daraja's B2C documentation describes OriginatorConversationID as the
// request's tracking id and promises no de-duplication by it, so a payout
// whose request may have reached M-Pesa is never sent again: one that
// Transaction Status cannot find (the lost alert) is the operator's, who
// checks the B2C shortcode's statement and records what it shows here.

// Payouts is the B2C payouts table as the operator works it; a payout's
// key is its OriginatorConversationID.
var Payouts = payout.Table{
	Noun:       "M-Pesa payout",
	Name:       "mpesa_payouts",
	Key:        "originator_id",
	Columns:    `originator_id, tenant_id, payment_id, amount, conversation_id, status, receipt, reason, created_at, updated_at`,
	SetReceipt: "receipt = $3",
	Scan:       scanStuck,
}

func scanStuck(row pgx.Row) (payout.Stuck, error) {
	s := payout.Stuck{Provider: "mpesa", Currency: "KES"}
	var amount int64
	err := row.Scan(&s.Reference, &s.TenantID, &s.PaymentID, &amount, &s.ProviderID, &s.Status, &s.Receipt, &s.Reason,
		&s.AskedAt, &s.UpdatedAt)
	s.Amount, s.Acknowledged = decimal.NewFromInt(amount), s.ProviderID != ""
	return s, err
}
