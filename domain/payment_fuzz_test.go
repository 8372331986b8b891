package domain

import (
	"encoding/json"
	"testing"

	"github.com/google/uuid"
	"github.com/gowebpki/jcs"
	"github.com/shopspring/decimal"
)

// FuzzPaymentRequest decodes any body into a payment request as the HTTP
// layer does, then validates, routes and decides it against every kind of
// merchant: no panic, every refusal is a caller error, and whatever passes
// obeys spec §2.9's rules and makes one payment.created that stores and
// decodes to itself.
func FuzzPaymentRequest(f *testing.F) {
	for _, seed := range []string{
		`{"merchantId":"m","amount":1500,"reference":"Invoice 42","bufferRate":0.05}`,
		`{"merchantId":"m","amount":11,"fromCountry":"Kenya","meta":"{\"collectionMethod\":\"BANK_TRANSFER\"}"}`,
		`{"merchantId":"m","amount":1e3,"fromCountry":"USDT","webhookUrl":"https://x.example/h","webhookSecret":"s"}`,
		`{"merchantId":"m","amount":250001,"fromCountry":"UK","isSlowPayment":true,"type":"LOAN","tag":"t"}`,
		`{"amount":"12","bufferRate":"0.1","meta":[1]}`,
		`{"merchantId":"m","amount":-0,"meta":{"_x":1,"refundConfig":{}}}`,
		`{"merchantId":"m","amount":1500,"meta":{"a":1,"a":2}}`,
	} {
		f.Add(seed)
	}
	merchants := []Merchant{testMerchant(CountrySouthAfrica, PayoutBank), testMerchant(CountryKenya, PayoutBank),
		testMerchant(CountryKenya, PayoutMomo), testMerchant(CountryNigeria, PayoutBank), testMerchant(CountryBTC, PayoutLightning)}
	prices := BTCPrices{"ZAR": decimal.NewFromInt(1_800_000), "KES": decimal.NewFromInt(12_900_000),
		"NGN": decimal.NewFromInt(150_000_000), "GBP": decimal.NewFromInt(76_000), "EUR": decimal.NewFromInt(87_000),
		"USD": decimal.NewFromInt(100_000)}
	f.Fuzz(func(t *testing.T, body string) {
		var r struct {
			MerchantID    string          `json:"merchantId"`
			Amount        json.RawMessage `json:"amount"`
			Reference     string          `json:"reference"`
			Tag           string          `json:"tag"`
			Type          string          `json:"type"`
			FromCountry   string          `json:"fromCountry"`
			IsSlowPayment bool            `json:"isSlowPayment"`
			BufferRate    json.RawMessage `json:"bufferRate"`
			WebhookURL    string          `json:"webhookUrl"`
			WebhookSecret string          `json:"webhookSecret"`
			Meta          json.RawMessage `json:"meta"`
		}
		if json.Unmarshal([]byte(body), &r) != nil {
			return
		}
		o, err := ValidatePaymentRequest(PaymentRequest(r), false)
		if err != nil {
			checkCallerError(t, err)
			return
		}
		if o.Amount <= 10 || o.BufferRateOrZero().IsNegative() || o.BufferRateOrZero().GreaterThan(decimal.RequireFromString("0.1")) ||
			(o.Reference != "" && !referencePattern.MatchString(o.Reference)) || o.FromCurrency == "" ||
			(len(o.Meta) > 0 && o.Meta[0] != '{') || !canonicalisable(o.Meta) {
			t.Fatalf("accepted an order that breaks the rules: %+v", o)
		}
		for _, m := range merchants {
			plan, err := PlanPayment(o, m, User{}, DefaultValidity, businessHours, saTime)
			if err != nil {
				checkCallerError(t, err)
				continue
			}
			q, err := QuotePayment(QuoteInput{FromCurrency: o.FromCurrency, DestinationCurrency: m.Currency,
				Amount: o.Amount, BufferRate: o.BufferRateOrZero(), OTCFeeRate: decimal.RequireFromString("0.01"), Prices: prices})
			if err != nil {
				if ErrorKind(err) == Internal {
					t.Fatalf("quote of a planned payment: %v", err)
				}
				continue
			}
			funding := PaymentFunding{USDTAddress: "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
				Collection: CollectionAccount{Name: "n", Number: "1"}, PayerMomoPhone: "+254712345678",
				Invoice: &LightningInvoice{PaymentRequest: "lnbcrt1", AmountSats: q.AmountSats}}
			events, err := DecideCreatePayment(Payment{}, CreatePayment{PaymentID: uuid.New(), UserID: uuid.New(),
				Plan: plan, Quote: q, Funding: funding, Now: businessHours})
			if err != nil {
				checkCallerError(t, err)
				continue
			}
			wantTypes(t, events, err, "payment.created")
			stored := roundTrip(t, events[0]).(PaymentCreated)
			a, _ := json.Marshal(stored.Payment)
			b, _ := json.Marshal(events[0].(PaymentCreated).Payment)
			if string(a) != string(b) {
				t.Fatalf("stored payment differs:\n%s\n%s", a, b)
			}
		}
	})
}

// canonicalisable says the sequencer can hash an event holding meta: its
// RFC 8785 form exists (nil: no meta).
func canonicalisable(meta json.RawMessage) bool {
	if meta == nil {
		return true
	}
	_, err := jcs.Transform(meta)
	return err == nil
}
