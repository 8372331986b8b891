package domain

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
)

var saTime = func() *time.Location {
	loc, err := time.LoadLocation("Africa/Johannesburg")
	if err != nil {
		panic(err)
	}
	return loc
}()

// A Tuesday at 10:00 SAST (business hours) and a Saturday at 10:00 SAST.
var (
	businessHours   = time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)
	restrictedHours = time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC)
)

func testMerchant(country, payout string) Merchant {
	m := Merchant{ID: uuid.New(), Name: "Shop", Country: country, Currency: merchantCurrency[country], PayoutMethod: payout}
	switch payout {
	case PayoutBank:
		m.BankName, m.AccountNumber = "Nedbank", "1234567890"
	case PayoutMomo:
		m.PhoneNumber = "+254712345678"
	case PayoutLightning:
		m.LNURL = "shop@example.com"
	}
	return m
}

func payerWithMomo() User {
	id := uuid.New()
	return User{ID: uuid.New(), MomoAccounts: []MomoAccount{{ID: id, PhoneNumber: "+254712345678"}}, DefaultMomoAccountID: &id}
}

func order(t *testing.T, body string) PaymentOrder {
	t.Helper()
	var r struct {
		MerchantID    string
		Amount        json.RawMessage
		Reference     string
		Tag           string
		Type          string
		FromCountry   string
		IsSlowPayment bool
		BufferRate    json.RawMessage
		WebhookURL    string
		WebhookSecret string
		Meta          json.RawMessage
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatal(err)
	}
	o, err := ValidatePaymentRequest(PaymentRequest(r), true)
	if err != nil {
		t.Fatalf("ValidatePaymentRequest(%s): %v", body, err)
	}
	return o
}

func TestValidatePaymentRequestRejects(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		req    PaymentRequest
		secure bool
		fields []string
	}{
		{"nothing", PaymentRequest{}, false, []string{"merchantId", "amount"}},
		{"amount 10", PaymentRequest{MerchantID: "m", Amount: json.RawMessage("10")}, false, []string{"amount"}},
		{"amount fraction", PaymentRequest{MerchantID: "m", Amount: json.RawMessage("11.5")}, false, []string{"amount"}},
		{"amount string", PaymentRequest{MerchantID: "m", Amount: json.RawMessage(`"100"`)}, false, []string{"amount"}},
		{"amount negative", PaymentRequest{MerchantID: "m", Amount: json.RawMessage("-100")}, false, []string{"amount"}},
		{"amount huge", PaymentRequest{MerchantID: "m", Amount: json.RawMessage("1e30")}, false, []string{"amount"}},
		{"reference symbols", PaymentRequest{MerchantID: "m", Amount: json.RawMessage("100"), Reference: "inv-1"}, false, []string{"reference"}},
		{"reference 21", PaymentRequest{MerchantID: "m", Amount: json.RawMessage("100"), Reference: strings.Repeat("a", 21)}, false, []string{"reference"}},
		{"type", PaymentRequest{MerchantID: "m", Amount: json.RawMessage("100"), Type: "GIFT"}, false, []string{"type"}},
		{"fromCountry", PaymentRequest{MerchantID: "m", Amount: json.RawMessage("100"), FromCountry: "Ghana"}, false, []string{"fromCountry"}},
		{"bufferRate above", PaymentRequest{MerchantID: "m", Amount: json.RawMessage("100"), BufferRate: json.RawMessage("0.1000001")}, false, []string{"bufferRate"}},
		{"bufferRate negative", PaymentRequest{MerchantID: "m", Amount: json.RawMessage("100"), BufferRate: json.RawMessage("-0.01")}, false, []string{"bufferRate"}},
		{"bufferRate string", PaymentRequest{MerchantID: "m", Amount: json.RawMessage("100"), BufferRate: json.RawMessage(`"0.05"`)}, false, []string{"bufferRate"}},
		{"bufferRate with USDT", PaymentRequest{MerchantID: "m", Amount: json.RawMessage("100"), FromCountry: "USDT", BufferRate: json.RawMessage("0.05")}, false, []string{"bufferRate"}},
		{"slow from fiat", PaymentRequest{MerchantID: "m", Amount: json.RawMessage("100"), FromCountry: "UK", IsSlowPayment: true}, false, []string{"isSlowPayment"}},
		{"webhook http in production", PaymentRequest{MerchantID: "m", Amount: json.RawMessage("100"), WebhookURL: "http://example.com/h"}, true, []string{"webhookUrl"}},
		{"webhook relative", PaymentRequest{MerchantID: "m", Amount: json.RawMessage("100"), WebhookURL: "/hooks"}, false, []string{"webhookUrl"}},
		{"webhook credentials", PaymentRequest{MerchantID: "m", Amount: json.RawMessage("100"), WebhookURL: "https://u:p@example.com/"}, false, []string{"webhookUrl"}},
		{"secret without url", PaymentRequest{MerchantID: "m", Amount: json.RawMessage("100"), WebhookSecret: "s"}, false, []string{"webhookSecret"}},
		{"bufferRate with 10,000 decimal places", PaymentRequest{MerchantID: "m", Amount: json.RawMessage("100"), BufferRate: json.RawMessage("1e-10000")}, false, []string{"bufferRate"}},
		{"bufferRate with 9 decimal places", PaymentRequest{MerchantID: "m", Amount: json.RawMessage("100"), BufferRate: json.RawMessage("0.050000001")}, false, []string{"bufferRate"}},
		{"whsec_ secret not base64", PaymentRequest{MerchantID: "m", Amount: json.RawMessage("100"), WebhookURL: "https://partner.example/hook",
			WebhookSecret: "whsec_not base64!"}, true, []string{"webhookSecret"}},
		{"whsec_ secret with no key", PaymentRequest{MerchantID: "m", Amount: json.RawMessage("100"), WebhookURL: "https://partner.example/hook",
			WebhookSecret: "whsec_"}, true, []string{"webhookSecret"}},
		{"meta array", PaymentRequest{MerchantID: "m", Amount: json.RawMessage("100"), Meta: json.RawMessage("[1]")}, false, []string{"meta"}},
		{"meta string not object", PaymentRequest{MerchantID: "m", Amount: json.RawMessage("100"), Meta: json.RawMessage(`"hello"`)}, false, []string{"meta"}},
		{"collection method", PaymentRequest{MerchantID: "m", Amount: json.RawMessage("100"), FromCountry: "Kenya", Meta: json.RawMessage(`{"collectionMethod":"CARD"}`)}, false, []string{"meta.collectionMethod"}},
		{"collection method not Kenya", PaymentRequest{MerchantID: "m", Amount: json.RawMessage("100"), Meta: json.RawMessage(`{"collectionMethod":"MOMO"}`)}, false, []string{"meta.collectionMethod"}},
		{"meta too big", PaymentRequest{MerchantID: "m", Amount: json.RawMessage("100"), Meta: json.RawMessage(`{"x":"` + strings.Repeat("a", 9000) + `"}`)}, false, []string{"meta"}},
		// What the sequencer's RFC 8785 canonicalisation or jsonb would
		// refuse: stored, it would stop sequencing for every tenant.
		{"meta duplicate names", PaymentRequest{MerchantID: "m", Amount: json.RawMessage("100"), Meta: json.RawMessage(`{"a":1,"a":2}`)}, false, []string{"meta"}},
		{"meta number beyond a double", PaymentRequest{MerchantID: "m", Amount: json.RawMessage("100"), Meta: json.RawMessage(`{"a":1e309}`)}, false, []string{"meta"}},
		{"meta number below a double", PaymentRequest{MerchantID: "m", Amount: json.RawMessage("100"), Meta: json.RawMessage(`{"a":1e-999999}`)}, false, []string{"meta"}},
		{"meta NUL", PaymentRequest{MerchantID: "m", Amount: json.RawMessage("100"), Meta: json.RawMessage(`{"a":"x\u0000y"}`)}, false, []string{"meta"}},
		{"meta NUL in a name", PaymentRequest{MerchantID: "m", Amount: json.RawMessage("100"), Meta: json.RawMessage(`{"\u0000":1}`)}, false, []string{"meta"}},
		{"meta lone surrogate", PaymentRequest{MerchantID: "m", Amount: json.RawMessage("100"), Meta: json.RawMessage(`{"\ud800":"x"}`)}, false, []string{"meta"}},
		{"meta string with duplicate names", PaymentRequest{MerchantID: "m", Amount: json.RawMessage("100"), Meta: json.RawMessage(`"{\"a\":1,\"a\":2}"`)}, false, []string{"meta"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := ValidatePaymentRequest(tt.req, !tt.secure)
			wantError(t, err, Invalid, "validation_failed", tt.fields...)
		})
	}
}

func TestValidatePaymentRequestAccepts(t *testing.T) {
	t.Parallel()
	o := order(t, `{"MerchantID":"m","Amount":11,"Reference":"Invoice 12","FromCountry":"KE","BufferRate":0.10,
		"Meta":"{\"collectionMethod\": \"BANK_TRANSFER\", \"a\": 1}","WebhookURL":"http://127.0.0.1:9/h","WebhookSecret":"whsec_eA=="}`)
	if o.Amount != 11 || o.FromCurrency != "KES" || o.CollectionMethod != CollectBankTransfer ||
		o.BufferRate == nil || !o.BufferRate.Equal(decimal.RequireFromString("0.1")) || string(o.Meta) != `{"collectionMethod":"BANK_TRANSFER","a":1}` {
		t.Fatalf("got %+v", o)
	}
	if o := order(t, `{"MerchantID":"m","Amount":1000.0}`); o.Amount != 1000 || o.FromCountry != "BTC" || o.FromCurrency != "BTC" {
		t.Fatalf("defaults: got %+v", o)
	}
	if o := order(t, `{"MerchantID":"m","Amount":500,"FromCountry":"Kenya"}`); o.CollectionMethod != CollectMomo {
		t.Fatalf("Kenyan funding collects by MOMO by default, got %q", o.CollectionMethod)
	}
}

func TestPlanPaymentCorridors(t *testing.T) {
	t.Parallel()
	za, keBank, keMomo := testMerchant(CountrySouthAfrica, PayoutBank), testMerchant(CountryKenya, PayoutBank), testMerchant(CountryKenya, PayoutMomo)
	ng, btc := testMerchant(CountryNigeria, PayoutBank), testMerchant(CountryBTC, PayoutLightning)
	for _, tt := range []struct {
		from, meta  string
		m           Merchant
		amount      int64
		paymentType string // "" when the corridor does not exist
		funding     string
	}{
		{"BTC", "", za, 1000, TypeWrappedInterbank, FundingLightning},
		{"BTC", "", keBank, 1000, TypeWrappedInterbank, FundingLightning},
		{"BTC", "", keMomo, 1000, TypeWrappedMomo, FundingLightning},
		{"BTC", "", ng, 5000, TypeWrappedInterbank, FundingLightning},
		{"BTC", "", btc, 5000, "", ""},
		{"Europe", "", btc, 5000, TypeOnramp, FundingBankTransfer},
		{"UK", "", btc, 5000, TypeOnramp, FundingBankTransfer},
		{"Nigeria", "", btc, 5000, TypeOnramp, FundingBankTransfer},
		{"Kenya", `{"collectionMethod":"BANK_TRANSFER"}`, btc, 5000, "", ""},
		{"Kenya", "", btc, 5000, "", ""},
		{"Nigeria", "", za, 1000, TypeFiatInterbank, FundingBankTransfer},
		{"Nigeria", "", ng, 5000, "", ""},
		{"Nigeria", "", keMomo, 1000, "", ""},
		{"UK", "", keBank, 1000, TypeFiatInterbank, FundingBankTransfer},
		{"Europe", "", ng, 5000, TypeFiatInterbank, FundingBankTransfer},
		{"Kenya", `{"collectionMethod":"BANK_TRANSFER"}`, za, 1000, TypeFiatInterbank, FundingBankTransfer},
		{"Kenya", `{"collectionMethod":"BANK_TRANSFER"}`, keBank, 1000, "", ""},
		{"Kenya", "", za, 1000, TypeMomoCollection, FundingMomo},
		{"KES", "", keMomo, 1000, TypeMomoCollection, FundingMomo},
		{"KE", "", ng, 5000, TypeMomoCollection, FundingMomo},
		{"USDT", "", za, 100000, TypeStablecoinFiat, FundingUSDT},
		{"USDT", "", keMomo, 100000, TypeStablecoinFiat, FundingUSDT},
		{"USDT", "", btc, 100000, TypeStablecoinLN, FundingUSDT},
	} {
		t.Run(tt.from+" to "+tt.m.Country+" "+tt.m.PayoutMethod+" "+tt.meta, func(t *testing.T) {
			t.Parallel()
			body := `{"MerchantID":"m","Amount":` + decimal.NewFromInt(tt.amount).String() + `,"Reference":"r","FromCountry":"` + tt.from + `"`
			if tt.meta != "" {
				body += `,"Meta":` + tt.meta
			}
			plan, err := PlanPayment(order(t, body+"}"), tt.m, payerWithMomo(), DefaultValidity, businessHours, saTime)
			if tt.paymentType == "" {
				wantError(t, err, Invalid, "unsupported_corridor")
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if plan.PaymentType != tt.paymentType || plan.Funding != tt.funding {
				t.Fatalf("got %s by %s, want %s by %s", plan.PaymentType, plan.Funding, tt.paymentType, tt.funding)
			}
		})
	}
}

func TestPlanPaymentRules(t *testing.T) {
	t.Parallel()
	za := testMerchant(CountrySouthAfrica, PayoutBank)
	_, err := PlanPayment(order(t, `{"MerchantID":"m","Amount":100}`), za, User{}, DefaultValidity, businessHours, saTime)
	wantError(t, err, Invalid, "validation_failed", "reference")

	_, err = PlanPayment(order(t, `{"MerchantID":"m","Amount":1000,"Reference":"r","FromCountry":"Kenya"}`), za, User{}, DefaultValidity, businessHours, saTime)
	wantError(t, err, Invalid, "no_default_momo_account", "meta.collectionMethod")

	v := Validity{Lightning: time.Minute, Slow: time.Hour, Momo: 2 * time.Minute, Bank: 3 * time.Hour, USDT: 4 * time.Hour}
	for body, want := range map[string]time.Duration{
		`{"MerchantID":"m","Amount":100,"Reference":"r"}`:                                                                   time.Minute,
		`{"MerchantID":"m","Amount":100,"Reference":"r","IsSlowPayment":true}`:                                              time.Hour,
		`{"MerchantID":"m","Amount":100,"Reference":"r","FromCountry":"Kenya"}`:                                             2 * time.Minute,
		`{"MerchantID":"m","Amount":100,"Reference":"r","FromCountry":"UK"}`:                                                3 * time.Hour,
		`{"MerchantID":"m","Amount":100,"Reference":"r","FromCountry":"USDT"}`:                                              4 * time.Hour,
		`{"MerchantID":"m","Amount":100,"Reference":"r","FromCountry":"Kenya","Meta":{"collectionMethod":"BANK_TRANSFER"}}`: 3 * time.Hour,
	} {
		plan, err := PlanPayment(order(t, body), za, payerWithMomo(), v, businessHours, saTime)
		if err != nil || plan.Validity != want {
			t.Errorf("%s: got %v, %v; want validity %v", body, plan.Validity, err, want)
		}
	}
}

func TestPlanPaymentLimits(t *testing.T) {
	t.Parallel()
	za, keBank, keMomo := testMerchant(CountrySouthAfrica, PayoutBank), testMerchant(CountryKenya, PayoutBank), testMerchant(CountryKenya, PayoutMomo)
	for _, tt := range []struct {
		m      Merchant
		now    time.Time
		amount int64
		ok     bool
	}{
		{za, businessHours, 11, true},
		{za, businessHours, 1_000_000, true},
		{za, businessHours, 1_000_001, false},
		{za, restrictedHours, 250_000, true},
		{za, restrictedHours, 250_001, false},
		{keMomo, businessHours, 149, false},
		{keMomo, businessHours, 150, true},
		{keMomo, businessHours, 250_000, true},
		{keMomo, businessHours, 250_001, false},
		{keBank, businessHours, 1_600_000, true},
		{keBank, businessHours, 1_600_001, false},
	} {
		body := `{"MerchantID":"m","Reference":"r","Amount":` + decimal.NewFromInt(tt.amount).String() + `}`
		_, err := PlanPayment(order(t, body), tt.m, User{}, DefaultValidity, tt.now, saTime)
		if tt.ok && err != nil {
			t.Errorf("%s %d at %v: %v", tt.m.Country, tt.amount, tt.now, err)
		}
		if !tt.ok {
			wantError(t, err, Invalid, "amount_out_of_range", "amount")
		}
	}
}

func planned(t *testing.T, body string, m Merchant) PaymentPlan {
	t.Helper()
	plan, err := PlanPayment(order(t, body), m, payerWithMomo(), DefaultValidity, businessHours, saTime)
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

func TestDecideCreatePaymentFundingDetails(t *testing.T) {
	t.Parallel()
	za := testMerchant(CountrySouthAfrica, PayoutBank)
	id := uuid.Must(uuid.NewV7())
	inv := &LightningInvoice{PaymentRequest: "lnbcrt1...", PaymentHash: strings.Repeat("ab", 32), AmountSats: 5000,
		ExpiresAt: businessHours.Add(10 * time.Minute)}
	for _, tt := range []struct {
		name    string
		plan    PaymentPlan
		quote   Quote
		funding PaymentFunding
		deposit string // depositDetails JSON, "" for none
	}{
		{"lightning", planned(t, `{"MerchantID":"m","Amount":100,"Reference":"r"}`, za),
			Quote{AmountSats: 5000, BTCPrice: decimal.NewFromInt(2_000_000)}, PaymentFunding{Invoice: inv}, ""},
		{"bank transfer", planned(t, `{"MerchantID":"m","Amount":100,"Reference":"r","FromCountry":"UK"}`, za),
			Quote{SourceAmountMinor: 15800}, PaymentFunding{Collection: CollectionAccount{Name: "Ledger UK", Number: "12345678"}},
			`{"accountName":"Ledger UK","accountNumber":"12345678","reference":"` + DepositReference(id) + `","amount":15800,"currency":"GBP"}`},
		{"momo push", planned(t, `{"MerchantID":"m","Amount":100,"Reference":"r","FromCountry":"Kenya"}`, za),
			Quote{SourceAmountMinor: 71001}, PaymentFunding{PayerMomoPhone: "+254712345678"},
			`{"instructions":"Approve the M-Pesa prompt sent to +254 *** *** 678 to pay KES 711 before 2026-11-24T08:03:00.000Z","amount":711,"currency":"KES","expiry":"2026-11-24T08:03:00.000Z"}`},
		{"usdt", planned(t, `{"MerchantID":"m","Amount":15100,"Reference":"r","FromCountry":"USDT"}`, za),
			Quote{SourceAmountMinor: 15100, DestinationAmount: decimal.NewFromInt(2700)}, PaymentFunding{USDTAddress: "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1bEAed"},
			`{"network":"ethereum","token":"USDT","standard":"ERC-20","address":"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1bEAed","amount":15100,"expiry":"2026-11-24T09:00:00.000Z"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			events, err := DecideCreatePayment(Payment{}, CreatePayment{PaymentID: id, UserID: uuid.New(), Plan: tt.plan,
				Quote: tt.quote, Funding: tt.funding, Now: businessHours})
			wantTypes(t, events, err, "payment.created")
			p := ApplyPayment(Payment{}, events[0])
			if p.ID != id || p.Status != StatusCreated || !p.AmountDeposited.IsZero() || len(p.StatusLogs) != 1 ||
				p.StatusLogs[0].Message != p.StatusLog || p.StatusLog == "" {
				t.Fatalf("got %+v", p)
			}
			if string(p.DepositDetails) != tt.deposit {
				t.Fatalf("depositDetails: got %s\nwant %s", p.DepositDetails, tt.deposit)
			}
			if (p.LightningInvoice != nil) != (tt.plan.Funding == FundingLightning) || (p.AmountSats != nil) != (p.LightningInvoice != nil) {
				t.Fatalf("invoice and amountSats only for Lightning funding: got %+v", p)
			}
			again := roundTrip(t, events[0]).(PaymentCreated)
			a, _ := json.Marshal(again.Payment)
			b, _ := json.Marshal(p)
			if string(a) != string(b) {
				t.Fatalf("stored event decodes differently:\n%s\n%s", a, b)
			}
		})
	}
}

func TestDecideCreatePaymentChecksUSDTValueAgainstTheLimit(t *testing.T) {
	t.Parallel()
	plan := planned(t, `{"MerchantID":"m","Amount":100000000,"Reference":"r","FromCountry":"USDT"}`, testMerchant(CountrySouthAfrica, PayoutBank))
	_, err := DecideCreatePayment(Payment{}, CreatePayment{PaymentID: uuid.New(), Plan: plan, Now: businessHours,
		Quote: Quote{SourceAmountMinor: 100000000, DestinationAmount: decimal.NewFromInt(1_000_001)}})
	wantError(t, err, Invalid, "amount_out_of_range", "amount")
	// Cents past the maximum are past it: not truncated into range.
	_, err = DecideCreatePayment(Payment{}, CreatePayment{PaymentID: uuid.New(), Plan: plan, Now: businessHours,
		Quote: Quote{SourceAmountMinor: 100000000, DestinationAmount: decimal.RequireFromString("1000000.70")}})
	wantError(t, err, Invalid, "amount_out_of_range", "amount")
}

func TestDepositReferenceIsAValidReference(t *testing.T) {
	t.Parallel()
	a, b := DepositReference(uuid.New()), DepositReference(uuid.New())
	if a == b || !referencePattern.MatchString(a) || len(a) != 15 {
		t.Fatalf("got %q and %q", a, b)
	}
}

func TestPublicMetaStripsInternalKeys(t *testing.T) {
	t.Parallel()
	got := PublicMeta(json.RawMessage(`{"refundConfig":{"a":1},"_x":2,"memberName":"Ann","collectionMethod":"MOMO"}`))
	if got != `{"collectionMethod":"MOMO","memberName":"Ann"}` {
		t.Fatalf("got %s", got)
	}
	if PublicMeta(nil) != "" || PublicMeta(json.RawMessage("null")) != "" {
		t.Fatal("no meta is no string")
	}
}

func TestPaymentDocumentsOnlyForSouthAfrica(t *testing.T) {
	t.Parallel()
	p := Payment{ID: uuid.New(), DestinationCountry: CountryKenya}
	_, err := DecideAttachPaymentDocument(p, AttachPaymentDocument{DocumentID: uuid.New()})
	wantError(t, err, Invalid, "documents_not_supported")
	p.DestinationCountry = CountrySouthAfrica
	events, err := DecideAttachPaymentDocument(p, AttachPaymentDocument{DocumentID: uuid.New()})
	wantTypes(t, events, err, "payment.document_attached")
	p = ApplyPayment(p, events[0])
	events, err = DecideAttachPaymentDocument(p, AttachPaymentDocument{DocumentID: uuid.New()})
	wantTypes(t, events, err, "payment.document_attached")
	if ApplyPayment(p, events[0]).Documents != 2 {
		t.Fatal("documents add up")
	}
}

func TestValidatePaymentRequestKeepsBufferRateAsSent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		body string
		want string // "" for not sent
	}{
		{`{"MerchantID":"m","Amount":100}`, ""},
		{`{"MerchantID":"m","Amount":100,"BufferRate":null}`, ""},
		{`{"MerchantID":"m","Amount":100,"BufferRate":0}`, "0"},
		{`{"MerchantID":"m","Amount":100,"BufferRate":0.05}`, "0.05"},
	} {
		o := order(t, tc.body)
		switch {
		case tc.want == "" && o.BufferRate != nil:
			t.Errorf("%s: got bufferRate %s, want none", tc.body, o.BufferRate)
		case tc.want != "" && (o.BufferRate == nil || !o.BufferRate.Equal(decimal.RequireFromString(tc.want))):
			t.Errorf("%s: got bufferRate %v, want %s", tc.body, o.BufferRate, tc.want)
		}
	}
}
