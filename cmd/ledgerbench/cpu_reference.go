package main

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/domain"
)

// cpuReferenceMicros is how long one core takes, in µs, to encode a
// payment's state to JSON and decode it again: a fixed piece of work of
// the kind the service and a rebuild do, measured at the start of a run.
// The same code takes the same time on the same machine, so when two
// reports differ by as much as their references do, the machine's speed
// changed, not the code: a shared machine's speed changes from day to day
// (docs/performance.md, "Machines").
func cpuReferenceMicros() float64 {
	at := time.Date(2026, 10, 27, 11, 23, 17, 887e6, time.UTC)
	sats := int64(84167)
	p := domain.Payment{
		ID: uuid.MustParse("01a21798-77f6-77ee-8f1a-86173206c70d"), UserID: uuid.MustParse("01a21798-77f5-78cb-90a5-97d0f293db33"),
		MerchantID: uuid.MustParse("01a21798-77f5-7c7e-96df-d88d16dcb885"), Amount: 1500, Reference: "replay",
		FromCountry: "BTC", FromCurrency: "BTC", DestinationCountry: "SouthAfrica", DestinationCurrency: "ZAR",
		PayoutMethod: "BANK", PaymentType: "WRAPPED_INTERBANK_PAYMENT", Funding: domain.FundingLightning,
		IsInstantPayment: true, Status: domain.StatusSuccess, StatusLog: "Settled 1500 ZAR to the recipient",
		StatusLogs: []domain.StatusLogEntry{{Status: "created", Message: "Awaiting payment", At: at},
			{Status: domain.StatusSuccess, Message: "Settled 1500 ZAR to the recipient", At: at}},
		AmountSats: &sats, DepositCurrency: "sats", DepositDue: decimal.NewFromInt(sats), BTCPrice: decimal.NewFromInt(1800000),
		RecipientDetails: domain.RecipientDetails{Name: "Cape Shop", Country: "SouthAfrica", BankName: "Nedbank",
			Currency: "ZAR", PayoutMethod: "BANK", AccountNumber: "1234567890"},
		ValidityDuration: 600, ExpiresAt: at.Add(10 * time.Minute), CreatedAt: at, UpdatedAt: at,
	}
	var failed error
	r := testing.Benchmark(func(b *testing.B) {
		for b.Loop() {
			text, err := json.Marshal(p)
			if err == nil {
				var back domain.Payment
				err = json.Unmarshal(text, &back)
			}
			if err != nil {
				failed = err
				b.FailNow()
			}
		}
	})
	if failed != nil {
		return 0
	}
	return float64(r.NsPerOp()) / 1e3
}

// cpuReferenceFigure is the reference as the reports print it.
func (m machine) cpuReferenceFigure() string {
	if m.CPUReferenceUs <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f µs", m.CPUReferenceUs)
}
