package paystack

import (
	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/workers/rails/payout"
)

// A transfer Paystack holds pending (one awaiting an OTP the integration
// should not require, or the balance) is verified by every sweep and ends
// when Paystack ends it. When the operator has ended it on Paystack's
// dashboard instead, or sees it will not be made, its outcome is recorded
// here: a later webhook that disagrees is a contradiction alert.

// Transfers is the transfers table as the operator works it; a transfer's
// key is its reference, and a paid one's receipt is its transfer code
// (kept when the operator gives none).
var Transfers = payout.Table{
	Noun:       "Paystack transfer",
	Name:       "paystack_transfers",
	Key:        "reference",
	Columns:    `reference, tenant_id, payment_id, amount, currency, transfer_code, status, reason, created_at, updated_at`,
	SetReceipt: "transfer_code = coalesce(nullif($3, ''), transfer_code)",
	Scan:       scanStuck,
}

func scanStuck(row pgx.Row) (payout.Stuck, error) {
	s := payout.Stuck{Provider: "paystack"}
	var amount int64
	err := row.Scan(&s.Reference, &s.TenantID, &s.PaymentID, &amount, &s.Currency, &s.ProviderID, &s.Status, &s.Reason,
		&s.AskedAt, &s.UpdatedAt)
	s.Amount, s.Acknowledged = decimal.NewFromInt(amount).Shift(-2), s.ProviderID != "" // subunits, as subunits() makes them
	if s.Status == "success" {
		s.Receipt = s.ProviderID
	}
	return s, err
}
