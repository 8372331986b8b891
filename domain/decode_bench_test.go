package domain

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
)

// settledPayment is the history of a payment paid out, as the store keeps
// it: created (every member filled), a partial deposit, the deposit that
// covers it, the conversion, the payout's success and a webhook attempt,
// each with the metadata a request or a worker writes.
func settledPayment(tb testing.TB) []Record {
	tb.Helper()
	at := time.Date(2026, 11, 26, 6, 0, 0, 123e6, time.UTC)
	postings := []Posting{
		{Account: AccountCustomerFunds, Currency: "sats", Side: Debit, Amount: decimal.RequireFromString("84167")},
		{Account: AccountConversion, Currency: "sats", Side: Credit, Amount: decimal.RequireFromString("84167")},
	}
	var created PaymentCreated
	n := 0
	fillExample(reflect.ValueOf(&created).Elem(), "", &n)
	code := 200
	events := []Event{
		created,
		PaymentDepositReceived{Amount: decimal.RequireFromString("40000"), Total: decimal.RequireFromString("40000"),
			Postings: postings[:1], Message: "Received 40000 sats", At: at},
		PaymentDeposited{Amount: decimal.RequireFromString("44167"), Total: decimal.RequireFromString("84167"),
			Postings: postings, Message: "Received 84167 sats; converting", At: at},
		PaymentTransferring{AmountSats: 84167, BTCPrice: decimal.RequireFromString("1800000.5"),
			ChangeRefundStatus: ChangeNone, PayoutAmount: decimal.RequireFromString("1500"), PayoutCurrency: "ZAR",
			PayoutRail: PayoutBank, IdempotencyKey: "01a21655-cd72-7a52-bf08-9d405cc2955d", Postings: postings,
			Message: "Converted; paying out 1500 ZAR by BANK", At: at},
		PaymentSucceeded{AmountSettled: decimal.RequireFromString("1500"), PayoutID: "sandbox-1", Postings: postings,
			Message: "Settled 1500 ZAR to the recipient", At: at},
		PaymentWebhookAttempted{EventID: uuid.MustParse("01a21655-cd56-7993-bb1c-e34d994233bf"), Type: "payment.success",
			Attempt: 1, StatusCode: &code, DurationMs: 40, Delivered: true, At: at},
	}
	meta := Metadata{Actor: "system:lifecycle", RequestID: "01a21655-cd56-7993-bb1c-e34d99420001",
		CorrelationID: "01a21655-cd56-7993-bb1c-e34d99420001", CausationID: "01a21655-cd56-7993-bb1c-e34d994233bf"}
	stream := StreamRef{TenantID: uuid.New(), Type: "payment", ID: uuid.New()}
	records := make([]Record, len(events))
	for i, e := range events {
		rec, err := NewRecord(stream, i+1, e, meta, uuid.New(), at)
		if err != nil {
			tb.Fatal(err)
		}
		records[i] = rec
	}
	return records
}

// BenchmarkDecodeSettledPayment decodes a settled payment's events and
// their metadata, as every worker load, replay and audit reads them: the
// whole history (ns/event its average), each event type, and metadata.
func BenchmarkDecodeSettledPayment(b *testing.B) {
	records := settledPayment(b)
	meta, err := json.Marshal(records[0].Meta)
	if err != nil {
		b.Fatal(err)
	}
	decode := func(b *testing.B, rec Record) {
		if _, err := rec.Decode(); err != nil {
			b.Fatal(err)
		}
		if _, err := DecodeMetadata(meta); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("history", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, rec := range records {
				decode(b, rec)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(records)), "ns/event")
	})
	for _, rec := range records {
		b.Run(rec.Type, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := rec.Decode(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("metadata", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := DecodeMetadata(meta); err != nil {
				b.Fatal(err)
			}
		}
	})
}
