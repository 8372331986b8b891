package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/lightningnetwork/lnd/zpay32"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/workers/rails/ethereum"
	"github.com/ledger/ledger/workers/rails/lightning"
)

// paymentSetup is a server with a tenant, its token, a user with a default
// momo account and its token, the tenant's merchants of every kind, and
// another tenant with a merchant of its own.
type paymentSetup struct {
	s                                 *testServer
	tok, utok, otherTok               string
	userID                            string
	za, keBank, keMomo, ng, btc, zaOf string // merchant ids; zaOf is the other tenant's
}

func newPaymentSetup(t *testing.T, env map[string]string) paymentSetup {
	t.Helper()
	s := startServer(t, env)
	a, b := s.createTenant(t, "Payco"), s.createTenant(t, "Otherpay")
	p := paymentSetup{s: s, tok: s.tenantToken(t, a.APIKey, a.APISecret), otherTok: s.tenantToken(t, b.APIKey, b.APISecret)}
	p.userID = s.createUser(t, p.tok, "payer@example.com", "Payer")["userId"].(string)
	p.utok = s.userToken(t, p.tok, p.userID)
	mustStatus(t, s.call(t, http.MethodPost, "/profile/momo", p.utok, momoBody("+254712345678")), http.StatusCreated)
	merchant := func(tok, body string) string {
		return mustStatus(t, s.call(t, http.MethodPost, "/merchants", tok, body), http.StatusCreated)["id"].(string)
	}
	p.za = merchant(p.tok, `{"name":"Shoprite","country":"SouthAfrica","bankName":"Capitec Bank","accountNumber":"1234567890"}`)
	p.keBank = merchant(p.tok, `{"name":"Java House","country":"Kenya","bankName":"Equity Bank Kenya","accountNumber":"0123456789012"}`)
	p.keMomo = merchant(p.tok, `{"name":"Mama Mboga","country":"Kenya","phoneNumber":"+254722000111"}`)
	p.ng = merchant(p.tok, `{"name":"Jumia","country":"Nigeria","bankName":"Zenith Bank","accountNumber":"0123456789"}`)
	p.btc = merchant(p.tok, `{"name":"Bitrefill","country":"BTC","lnurl":"shop@bitrefill.com"}`)
	p.zaOf = merchant(p.otherTok, `{"name":"Elsewhere","country":"SouthAfrica","bankName":"Nedbank","accountNumber":"1234567890"}`)
	return p
}

// pay posts a payment and returns its 201 body.
func (p paymentSetup) pay(t *testing.T, tok, body string) map[string]any {
	t.Helper()
	return mustStatus(t, p.s.call(t, http.MethodPost, "/payments", tok, body), http.StatusCreated)
}

// paymentMembers are the members of every Payment (spec §2.9, contract §6)
// but isSlowPayment and statusLogs.
var paymentMembers = strings.Fields(`id merchantId amount reference tag type fromCountry bufferRate webhookUrl status
	statusLog amountSettled amountDeposited amountBtc btcPrice fromCurrency destinationCountry destinationCurrency
	paymentType lightningInvoice depositBankDetails recipientBankDetails isInstantPayment validityDuration otcFees
	bufferAmountSats changeRefundAmount changeRefundStatus meta date createdAt updatedAt`)

// checkPaymentShape checks what every new payment has.
func checkPaymentShape(t *testing.T, p map[string]any, slow bool) {
	t.Helper()
	want := len(paymentMembers)
	if slow {
		want++
		if p["isSlowPayment"] != true {
			t.Errorf("isSlowPayment: got %v, want true", p["isSlowPayment"])
		}
	}
	for _, k := range paymentMembers {
		if _, ok := p[k]; !ok {
			t.Errorf("member %s missing", k)
		}
	}
	if len(p) != want {
		t.Errorf("got %d members %v, want %d", len(p), sortedKeys(p), want)
	}
	if _, ok := p["webhookSecret"]; ok {
		t.Error("webhookSecret is never returned")
	}
	checks := map[string]check{"id": isUUIDv7, "date": isTimestamp, "createdAt": isTimestamp, "updatedAt": isTimestamp}
	for k, c := range checks {
		if msg := c(p[k]); msg != "" {
			t.Errorf("%s: got %v, %s", k, p[k], msg)
		}
	}
	if p["status"] != "created" || p["amountDeposited"] != 0.0 || p["amountSettled"] != nil || p["date"] != p["createdAt"] ||
		p["updatedAt"] != p["createdAt"] {
		t.Errorf("a new payment: got status %v, amountDeposited %v, amountSettled %v", p["status"], p["amountDeposited"], p["amountSettled"])
	}
	if s, _ := p["statusLog"].(string); s == "" {
		t.Error("statusLog is empty")
	}
	if s, ok := p["btcPrice"].(string); !ok || !regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`).MatchString(s) {
		t.Errorf("btcPrice: got %v, want a decimal string", p["btcPrice"])
	}
	if _, ok := p["otcFees"].(float64); !ok {
		t.Errorf("otcFees: got %v, want a number", p["otcFees"])
	}
	var recipient map[string]any
	jsonMember(t, p, "recipientBankDetails", &recipient)
}

// jsonMember decodes a member that is a string holding JSON into v.
func jsonMember(t *testing.T, p map[string]any, name string, v any) {
	t.Helper()
	s, ok := p[name].(string)
	if !ok {
		t.Fatalf("%s: got %v, want a string holding JSON", name, p[name])
	}
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatalf("%s: %v in %s", name, err, s)
	}
}

var (
	hex64     = regexp.MustCompile(`^[0-9a-f]{64}$`)
	depositRf = regexp.MustCompile(`^LDG[A-Z2-7]{12}$`)
)

// TestCreatePaymentLightning covers the Lightning variant (spec §4.6) with
// both token kinds: the invoice, the quote's figures and the event.
func TestCreatePaymentLightning(t *testing.T) {
	t.Parallel()
	p := newPaymentSetup(t, nil)
	for _, by := range []struct{ kind, tok string }{{"tenant", p.tok}, {"user", p.utok}} {
		t.Run(by.kind, func(t *testing.T) {
			body := fmt.Sprintf(`{"merchantId":%q,"amount":1500,"reference":"Invoice 42","tag":"order-7","type":"PURCHASE",
				"bufferRate":0.05,"webhookUrl":"http://127.0.0.1:9/hook","webhookSecret":"whsec_c2VjcmV0",
				"meta":{"orderId":"7","refundConfig":{"to":"x"}}}`, p.za)
			got := p.pay(t, by.tok, body)
			checkPaymentShape(t, got, false)
			for k, want := range map[string]any{"merchantId": p.za, "amount": 1500.0, "reference": "Invoice 42", "tag": "order-7",
				"type": "PURCHASE", "fromCountry": "BTC", "fromCurrency": "BTC", "bufferRate": 0.05,
				"webhookUrl": "http://127.0.0.1:9/hook", "destinationCountry": "SouthAfrica", "destinationCurrency": "ZAR",
				"paymentType": "WRAPPED_INTERBANK_PAYMENT", "isInstantPayment": true, "validityDuration": 600.0,
				"depositBankDetails": nil, "changeRefundAmount": nil, "changeRefundStatus": nil, "meta": `{"orderId":"7"}`} {
				if fmt.Sprint(got[k]) != fmt.Sprint(want) {
					t.Errorf("%s: got %v, want %v", k, got[k], want)
				}
			}
			var inv struct {
				PaymentRequest string `json:"paymentRequest"`
				PaymentHash    string `json:"paymentHash"`
				AmountSats     int64  `json:"amountSats"`
				ExpiresAt      string `json:"expiresAt"`
			}
			jsonMember(t, got, "lightningInvoice", &inv)
			sats, err := strconv.ParseInt(got["amountBtc"].(string), 10, 64)
			if err != nil || sats != inv.AmountSats || sats <= 0 {
				t.Fatalf("amountBtc %v must be the invoice's %d sats", got["amountBtc"], inv.AmountSats)
			}
			if buf := int64(got["bufferAmountSats"].(float64)); buf <= 0 || buf >= sats {
				t.Errorf("bufferAmountSats: got %d of %d", buf, sats)
			}
			if !strings.HasPrefix(inv.PaymentRequest, "lnbcrt") || !hex64.MatchString(inv.PaymentHash) {
				t.Errorf("invoice: got %+v, want a regtest invoice and a hex payment hash", inv)
			}
			created, _ := time.Parse(domain.TimeFormat, got["createdAt"].(string))
			expires, _ := time.Parse(domain.TimeFormat, inv.ExpiresAt)
			if d := expires.Sub(created); d < 599*time.Second || d > 600*time.Second {
				t.Errorf("invoice expires %v after creation, want validityDuration 600 s", d)
			}
			checkInvoice(t, inv.PaymentRequest, inv.PaymentHash, inv.AmountSats, expires)
			var recipient map[string]any
			jsonMember(t, got, "recipientBankDetails", &recipient)
			if recipient["bankName"] != "Capitec Bank" || recipient["accountNumber"] != "1234567890" {
				t.Errorf("recipientBankDetails: got %v", recipient)
			}

			id := got["id"].(string)
			checkJSON(t, "GET", mustStatus(t, p.s.call(t, http.MethodGet, "/payments/"+id, by.tok, ""), http.StatusOK), got)
			withLog := mustStatus(t, p.s.call(t, http.MethodGet, "/payments/"+id+"?includeStatusLog=true", by.tok, ""), http.StatusOK)
			logs, _ := withLog["statusLogs"].([]any)
			if len(logs) != 1 {
				t.Fatalf("statusLogs: got %v, want the created entry", withLog["statusLogs"])
			}
			entry := logs[0].(map[string]any)
			if entry["status"] != "created" || entry["message"] != got["statusLog"] || entry["at"] != got["createdAt"] {
				t.Errorf("statusLogs[0]: got %v", entry)
			}
			evs := p.s.streamEvents(t, id)
			// Its webhook's attempts (nothing listens on port 9) are no events.
			if len(evs) != 1 || evs[0].Type != "payment.created" || evs[0].SchemaVersion != 1 {
				t.Fatalf("events: got %+v, want payment.created v1 alone", evs)
			}
			public, err := domain.PublicData(domain.Record{Type: evs[0].Type, Data: evs[0].Data})
			if err != nil {
				t.Fatal(err)
			}
			for _, personal := range []string{"1234567890", "refundConfig"} {
				if !strings.Contains(string(evs[0].Data), personal) || strings.Contains(string(public), personal) {
					t.Errorf("%s must be stored and left out of the published event", personal)
				}
			}
			// The webhook secret is stored sealed (TestWebhookSecretIsStoredSealed), and not published at all.
			if stored := string(evs[0].Data); strings.Contains(stored, "whsec_c2VjcmV0") || !strings.Contains(stored, `"webhookSecret":"sealed:v1:`) {
				t.Errorf("stored payment.created: want webhookSecret sealed, got %s", stored)
			}
			if strings.Contains(string(public), "webhookSecret") {
				t.Errorf("published payment.created: want no webhookSecret, got %s", public)
			}
		})
	}
	t.Run("slow payment", func(t *testing.T) {
		got := p.pay(t, p.tok, fmt.Sprintf(`{"merchantId":%q,"amount":200,"reference":"slow","isSlowPayment":true}`, p.za))
		checkPaymentShape(t, got, true)
		if got["validityDuration"] != 86400.0 || got["bufferRate"] != nil || got["bufferAmountSats"] != 0.0 {
			t.Errorf("got validityDuration %v bufferRate %v bufferAmountSats %v", got["validityDuration"], got["bufferRate"], got["bufferAmountSats"])
		}
	})
	t.Run("bufferRate is echoed as sent, 0 included", func(t *testing.T) {
		for body, want := range map[string]any{`,"bufferRate":0`: 0.0, `,"bufferRate":0.05`: 0.05, `,"bufferRate":null`: nil, ``: nil} {
			created := p.pay(t, p.tok, fmt.Sprintf(`{"merchantId":%q,"amount":200,"reference":"buf"%s}`, p.za, body))
			got := mustStatus(t, p.s.call(t, http.MethodGet, "/payments/"+created["id"].(string), p.tok, ""), http.StatusOK)
			if created["bufferRate"] != want || got["bufferRate"] != want {
				t.Errorf("sent {%s}: got bufferRate %v on create and %v on GET, want %v", body, created["bufferRate"], got["bufferRate"], want)
			}
		}
	})
	t.Run("isSlowPayment false is not returned", func(t *testing.T) {
		got := p.pay(t, p.tok, fmt.Sprintf(`{"merchantId":%q,"amount":200,"reference":"fast","isSlowPayment":false}`, p.za))
		checkPaymentShape(t, got, false)
	})
	t.Run("to Kenyan momo and Nigerian bank merchants", func(t *testing.T) {
		momo := p.pay(t, p.tok, fmt.Sprintf(`{"merchantId":%q,"amount":1000}`, p.keMomo))
		ng := p.pay(t, p.tok, fmt.Sprintf(`{"merchantId":%q,"amount":5000}`, p.ng))
		if momo["paymentType"] != "WRAPPED_MOBILE_MONEY_PAYMENT" || ng["paymentType"] != "WRAPPED_INTERBANK_PAYMENT" ||
			momo["destinationCurrency"] != "KES" || ng["destinationCurrency"] != "NGN" {
			t.Errorf("got %v/%v and %v/%v", momo["paymentType"], momo["destinationCurrency"], ng["paymentType"], ng["destinationCurrency"])
		}
	})
}

// TestCreatePaymentFiatAndUSDT covers the deposit-details variants (spec
// §2.9, §4.6; contract §6).
func TestCreatePaymentFiatAndUSDT(t *testing.T) {
	t.Parallel()
	p := newPaymentSetup(t, nil)
	type bankDeposit struct {
		AccountName, AccountNumber, Reference, Currency string
		Amount                                          int64
	}
	bank := func(t *testing.T, got map[string]any, currency string) bankDeposit {
		t.Helper()
		var d bankDeposit
		jsonMember(t, got, "depositBankDetails", &d)
		if d.AccountName == "" || d.AccountNumber == "" || !depositRf.MatchString(d.Reference) || d.Currency != currency || d.Amount <= 0 {
			t.Errorf("depositBankDetails: got %+v, want a %s account, an LDG reference and an amount in cents", d, currency)
		}
		if got["lightningInvoice"] != nil || got["amountBtc"] != nil || got["isInstantPayment"] != false || got["validityDuration"] != 259200.0 {
			t.Errorf("bank transfer: got lightningInvoice %v amountBtc %v isInstantPayment %v validityDuration %v",
				got["lightningInvoice"], got["amountBtc"], got["isInstantPayment"], got["validityDuration"])
		}
		return d
	}
	t.Run("onramp from the UK to a Lightning merchant", func(t *testing.T) {
		got := p.pay(t, p.tok, fmt.Sprintf(`{"merchantId":%q,"amount":50000,"fromCountry":"UK"}`, p.btc))
		checkPaymentShape(t, got, false)
		d := bank(t, got, "GBP")
		if got["paymentType"] != "ONRAMP" || got["fromCurrency"] != "GBP" || got["destinationCurrency"] != "BTC" {
			t.Errorf("got %v %v %v", got["paymentType"], got["fromCurrency"], got["destinationCurrency"])
		}
		if !strings.Contains(got["statusLog"].(string), d.Reference) {
			t.Errorf("statusLog %q must quote the reference", got["statusLog"])
		}
	})
	t.Run("Nigeria to a South African merchant", func(t *testing.T) {
		got := p.pay(t, p.tok, fmt.Sprintf(`{"merchantId":%q,"amount":1000,"reference":"Rent","fromCountry":"Nigeria"}`, p.za))
		bank(t, got, "NGN")
		if got["paymentType"] != "FIAT_INTERBANK_PAYMENT" {
			t.Errorf("paymentType: got %v", got["paymentType"])
		}
	})
	t.Run("Kenya by bank transfer", func(t *testing.T) {
		got := p.pay(t, p.tok, fmt.Sprintf(`{"merchantId":%q,"amount":1000,"reference":"x","fromCountry":"Kenya","meta":"{\"collectionMethod\":\"BANK_TRANSFER\"}"}`, p.za))
		bank(t, got, "KES")
		if got["meta"] != `{"collectionMethod":"BANK_TRANSFER"}` {
			t.Errorf("meta: got %v", got["meta"])
		}
	})
	t.Run("Kenya by momo push", func(t *testing.T) {
		got := p.pay(t, p.utok, fmt.Sprintf(`{"merchantId":%q,"amount":1000,"reference":"x","fromCountry":"Kenya"}`, p.za))
		checkPaymentShape(t, got, false)
		var d struct {
			Instructions, Currency, Expiry string
			Amount                         int64
		}
		jsonMember(t, got, "depositBankDetails", &d)
		if d.Currency != "KES" || d.Amount <= 0 || !strings.Contains(d.Instructions, "678") || strings.Contains(d.Instructions, "712345678") ||
			isTimestamp(d.Expiry) != "" || got["paymentType"] != "MOMO_COLLECTION_PAYMENT" || got["validityDuration"] != 180.0 {
			t.Errorf("push: got %+v, paymentType %v, validityDuration %v", d, got["paymentType"], got["validityDuration"])
		}
	})
	t.Run("Kenya by momo push needs a default momo account", func(t *testing.T) {
		// A tenant token pays as the owner, who has no momo account.
		r := p.s.call(t, http.MethodPost, "/payments", p.tok, fmt.Sprintf(`{"merchantId":%q,"amount":1000,"reference":"x","fromCountry":"KE"}`, p.za))
		mustFieldError(t, mustProblem(t, r, http.StatusBadRequest, "no_default_momo_account"), "meta.collectionMethod")
	})
	t.Run("USDT", func(t *testing.T) {
		var addrs []string
		for _, m := range []string{p.keMomo, p.btc} {
			got := p.pay(t, p.tok, fmt.Sprintf(`{"merchantId":%q,"amount":151000,"fromCountry":"USDT"}`, m))
			checkPaymentShape(t, got, false)
			var d struct {
				Network, Token, Standard, Address, Expiry string
				Amount                                    int64
			}
			jsonMember(t, got, "depositBankDetails", &d)
			if d.Network != "ethereum" || d.Token != "USDT" || d.Standard != "ERC-20" || !ethereum.ValidChecksumAddress(d.Address) ||
				d.Amount != 151000 || isTimestamp(d.Expiry) != "" || got["validityDuration"] != 3600.0 {
				t.Errorf("USDT deposit: got %+v", d)
			}
			addrs = append(addrs, d.Address)
		}
		if addrs[0] == addrs[1] {
			t.Errorf("two payments share the deposit address %s", addrs[0])
		}
	})
}

// TestCreatePaymentErrors covers the request rules, corridors and limits
// (spec §2.9, §8; contract §6): each is a problem naming what is wrong, and
// none appends an event.
func TestCreatePaymentErrors(t *testing.T) {
	t.Parallel()
	p := newPaymentSetup(t, nil)
	before := p.s.countEvents(t)
	for _, tt := range []struct {
		name, body, code string
		field            string
	}{
		{"amount 10", `{"merchantId":%q,"amount":10,"reference":"r"}`, "validation_failed", "amount"},
		{"amount fraction", `{"merchantId":%q,"amount":100.5,"reference":"r"}`, "validation_failed", "amount"},
		{"amount string", `{"merchantId":%q,"amount":"100","reference":"r"}`, "validation_failed", "amount"},
		{"no reference for South Africa", `{"merchantId":%q,"amount":100}`, "validation_failed", "reference"},
		{"reference pattern", `{"merchantId":%q,"amount":100,"reference":"inv-1"}`, "validation_failed", "reference"},
		{"reference too long", `{"merchantId":%q,"amount":100,"reference":"abcdefghijklmnopqrstu"}`, "validation_failed", "reference"},
		{"type", `{"merchantId":%q,"amount":100,"reference":"r","type":"GIFT"}`, "validation_failed", "type"},
		{"fromCountry", `{"merchantId":%q,"amount":100,"reference":"r","fromCountry":"Ghana"}`, "validation_failed", "fromCountry"},
		{"bufferRate", `{"merchantId":%q,"amount":100,"reference":"r","bufferRate":0.11}`, "validation_failed", "bufferRate"},
		{"webhookUrl", `{"merchantId":%q,"amount":100,"reference":"r","webhookUrl":"ftp://x"}`, "validation_failed", "webhookUrl"},
		{"meta", `{"merchantId":%q,"amount":100,"reference":"r","meta":[1]}`, "validation_failed", "meta"},
		// Stored, these would stop the sequencer for every tenant: it could not hash them (RFC 8785).
		// A name twice is refused for every JSON body, meta's included (I-JSON).
		{"meta with a name twice", `{"merchantId":%q,"amount":100,"reference":"r","meta":{"a":1,"a":2}}`, "malformed_json", "meta.a"},
		{"meta number beyond a double", `{"merchantId":%q,"amount":100,"reference":"r","meta":{"a":1e309}}`, "validation_failed", "meta"},
		{"meta with NUL", `{"merchantId":%q,"amount":100,"reference":"r","meta":{"a":"\u0000"}}`, "validation_failed", "meta"},
		{"meta not UTF-8", "{\"merchantId\":%q,\"amount\":100,\"reference\":\"r\",\"meta\":{\"a\":\"Caf\xc3\"}}", "malformed_json", ""},
		{"unknown field", `{"merchantId":%q,"amount":100,"reference":"r","currency":"ZAR"}`, "unknown_field", "currency"},
		{"Lightning to Lightning", `{"merchantId":"BTC","amount":5000}`, "unsupported_corridor", ""},
		{"Nigeria to Nigeria", `{"merchantId":"NG","amount":5000,"fromCountry":"Nigeria"}`, "unsupported_corridor", ""},
		{"Kenya bank transfer to a Kenyan bank", `{"merchantId":"KE","amount":5000,"fromCountry":"Kenya","meta":{"collectionMethod":"BANK_TRANSFER"}}`, "unsupported_corridor", ""},
		{"Kenyan momo below 150", `{"merchantId":"KEMOMO","amount":149}`, "amount_out_of_range", "amount"},
		{"Kenyan momo above 250,000", `{"merchantId":"KEMOMO","amount":250001}`, "amount_out_of_range", "amount"},
		{"Kenyan bank above 1,600,000", `{"merchantId":"KE","amount":1600001}`, "amount_out_of_range", "amount"},
		{"another tenant's merchant", `{"merchantId":"OTHER","amount":100,"reference":"r"}`, "validation_failed", "merchantId"},
		{"no such merchant", `{"merchantId":"01936f41-2b3c-7d4e-8f5a-6b7c8d9e0f1a","amount":100,"reference":"r"}`, "validation_failed", "merchantId"},
		{"merchantId not a UUID", `{"merchantId":"shop","amount":100,"reference":"r"}`, "validation_failed", "merchantId"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			body := strings.NewReplacer(`"BTC"`, `"`+p.btc+`"`, `"NG"`, `"`+p.ng+`"`, `"KEMOMO"`, `"`+p.keMomo+`"`,
				`"KE"`, `"`+p.keBank+`"`, `"OTHER"`, `"`+p.zaOf+`"`).Replace(tt.body)
			if strings.Contains(body, "%q") {
				body = fmt.Sprintf(body, p.za)
			}
			pr := mustProblem(t, p.s.call(t, http.MethodPost, "/payments", p.tok, body), http.StatusBadRequest, tt.code)
			if tt.field != "" {
				mustFieldError(t, pr, tt.field)
			}
		})
	}
	t.Run("accepted at the limits", func(t *testing.T) {
		for _, body := range []string{`{"merchantId":%q,"amount":150}`, `{"merchantId":%q,"amount":250000}`} {
			p.pay(t, p.tok, fmt.Sprintf(body, p.keMomo))
		}
		p.pay(t, p.tok, fmt.Sprintf(`{"merchantId":%q,"amount":1600000}`, p.keBank))
		p.pay(t, p.tok, fmt.Sprintf(`{"merchantId":%q,"amount":11,"reference":"r"}`, p.za))
		before += 4
	})
	t.Run("South African limit of the hour", func(t *testing.T) {
		// Both sides of the band in force now (the other band is covered by
		// the domain's table tests); a band change mid-test skips.
		now := time.Now()
		limit := domain.PaymentAmountLimit(domain.CountrySouthAfrica, domain.PayoutBank, now, johannesburg)
		ok := p.s.call(t, http.MethodPost, "/payments", p.tok, fmt.Sprintf(`{"merchantId":%q,"amount":%d,"reference":"r"}`, p.za, limit.Max))
		over := p.s.call(t, http.MethodPost, "/payments", p.tok, fmt.Sprintf(`{"merchantId":%q,"amount":%d,"reference":"r"}`, p.za, limit.Max+1))
		if domain.PaymentAmountLimit(domain.CountrySouthAfrica, domain.PayoutBank, time.Now(), johannesburg) != limit {
			t.Skip("the business-hours band changed during the test")
		}
		mustStatus(t, ok, http.StatusCreated)
		mustFieldError(t, mustProblem(t, over, http.StatusBadRequest, "amount_out_of_range"), "amount")
		before++
	})
	t.Run("not JSON", func(t *testing.T) {
		r := p.s.call(t, http.MethodPost, "/payments", p.tok, "")
		mustProblem(t, r, http.StatusUnsupportedMediaType, "unsupported_media_type")
	})
	if got := p.s.countEvents(t); got != before {
		t.Errorf("events: got %d, want %d (refused requests append nothing)", got, before)
	}
}

// TestListAndGetPayments covers GET /payments and GET /payments/{id}: token
// scope, filters, pages and markers, and other tenants' payments.
func TestListAndGetPayments(t *testing.T) {
	t.Parallel()
	p := newPaymentSetup(t, nil)
	var mine, owners []string
	for i := range 3 {
		mine = append(mine, p.pay(t, p.utok, fmt.Sprintf(`{"merchantId":%q,"amount":%d,"reference":"u"}`, p.za, 100+i))["id"].(string))
		owners = append(owners, p.pay(t, p.tok, fmt.Sprintf(`{"merchantId":%q,"amount":%d}`, p.keBank, 1000+i))["id"].(string))
	}
	other := mustStatus(t, p.s.call(t, http.MethodPost, "/payments", p.otherTok,
		fmt.Sprintf(`{"merchantId":%q,"amount":100,"reference":"o"}`, p.zaOf)), http.StatusCreated)["id"].(string)

	ids := func(tok, query string) []string {
		t.Helper()
		var all []string
		offset := ""
		for range 10 {
			page := mustStatus(t, p.s.call(t, http.MethodGet, "/payments?limit=2"+query+offset, tok, ""), http.StatusOK)
			for _, it := range page["items"].([]any) {
				all = append(all, it.(map[string]any)["id"].(string))
			}
			next, _ := page["offsetMarker"].(string)
			if next == "" {
				return all
			}
			offset = "&offset=" + next
		}
		t.Fatal("more pages than payments")
		return nil
	}
	reversed := func(s []string) []string {
		out := make([]string, len(s))
		for i, v := range s {
			out[len(s)-1-i] = v
		}
		return out
	}
	if got, want := ids(p.utok, ""), reversed(mine); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("user token: got %v, want its own payments newest first %v", got, want)
	}
	if got := ids(p.tok, ""); len(got) != 6 {
		t.Errorf("tenant token: got %v, want all 6 of its tenant's payments", got)
	}
	if got, want := ids(p.tok, "&merchantId="+p.keBank), reversed(owners); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("merchant filter: got %v, want %v", got, want)
	}
	if got := ids(p.tok, "&status=created"); len(got) != 6 {
		t.Errorf("status created: got %d", len(got))
	}
	if got := ids(p.tok, "&status=success"); len(got) != 0 {
		t.Errorf("status success: got %v", got)
	}
	if got := ids(p.otherTok, ""); fmt.Sprint(got) != fmt.Sprint([]string{other}) {
		t.Errorf("other tenant: got %v", got)
	}
	page := mustStatus(t, p.s.call(t, http.MethodGet, "/payments?limit=1", p.tok, ""), http.StatusOK)
	marker := page["offsetMarker"].(string)
	for _, q := range []string{"?status=paid", "?merchantId=x", "?limit=0", "?limit=101", "?offset=garbage",
		"?status=created&offset=" + marker} {
		mustProblem(t, p.s.call(t, http.MethodGet, "/payments"+q, p.tok, ""), http.StatusBadRequest, "validation_failed")
	}
	mustProblem(t, p.s.call(t, http.MethodGet, "/payments?offset="+marker, p.otherTok, ""), http.StatusBadRequest, "validation_failed")

	// One payment: the tenant reads all of its own, a user only its own.
	for _, tt := range []struct {
		tok, id string
		status  int
	}{
		{p.tok, mine[0], http.StatusOK}, {p.tok, owners[0], http.StatusOK}, {p.utok, mine[0], http.StatusOK},
		{p.utok, owners[0], http.StatusNotFound}, {p.otherTok, mine[0], http.StatusNotFound},
		{p.tok, other, http.StatusNotFound}, {p.tok, "not-a-uuid", http.StatusNotFound},
	} {
		r := p.s.call(t, http.MethodGet, "/payments/"+tt.id, tt.tok, "")
		if r.Status != tt.status {
			t.Errorf("GET %s: got %d, want %d", tt.id, r.Status, tt.status)
		}
	}
	mustProblem(t, p.s.call(t, http.MethodGet, "/payments/"+mine[0]+"?includeStatusLog=yes", p.tok, ""),
		http.StatusBadRequest, "validation_failed")
	mustProblem(t, p.s.call(t, http.MethodGet, "/payments", "", ""), http.StatusUnauthorized, "invalid_token")
}

// TestCreatePaymentIdempotency: the same Idempotency-Key and body replay
// the first 201; another body is 422; one payment exists.
func TestCreatePaymentIdempotency(t *testing.T) {
	t.Parallel()
	p := newPaymentSetup(t, nil)
	body := fmt.Sprintf(`{"merchantId":%q,"amount":500,"reference":"idem"}`, p.za)
	first := p.s.call(t, http.MethodPost, "/payments", p.tok, body, "Idempotency-Key", "pay-1")
	again := p.s.call(t, http.MethodPost, "/payments", p.tok, body, "Idempotency-Key", "pay-1")
	a, b := mustStatus(t, first, http.StatusCreated), mustStatus(t, again, http.StatusCreated)
	if a["id"] != b["id"] || again.Header.Get("Idempotent-Replayed") != "true" || a["lightningInvoice"] != b["lightningInvoice"] {
		t.Fatalf("replay: got %v and %v (Idempotent-Replayed %q)", a["id"], b["id"], again.Header.Get("Idempotent-Replayed"))
	}
	changed := strings.Replace(body, "500", "501", 1)
	mustProblem(t, p.s.call(t, http.MethodPost, "/payments", p.tok, changed, "Idempotency-Key", "pay-1"),
		http.StatusUnprocessableEntity, "idempotency_key_reused")
	page := mustStatus(t, p.s.call(t, http.MethodGet, "/payments", p.tok, ""), http.StatusOK)
	if n := len(page["items"].([]any)); n != 1 {
		t.Fatalf("payments: got %d, want 1", n)
	}
}

// checkInvoice decodes a BOLT11 invoice with lnd's zpay32 (the reference
// decoder, which verifies the checksum and recovers the signer) and checks
// it is a regtest invoice for sats, with the payment hash, expiring at
// expires, signed by the sandbox node.
func checkInvoice(t *testing.T, pr, hash string, sats int64, expires time.Time) {
	t.Helper()
	inv, err := zpay32.Decode(pr, &chaincfg.RegressionNetParams)
	if err != nil {
		t.Fatalf("zpay32 decode %s: %v", pr, err)
	}
	node, _ := hex.DecodeString(lightning.NewSandboxNode().PubKey())
	switch {
	case inv.MilliSat == nil || int64(*inv.MilliSat) != sats*1000:
		t.Errorf("amount: got %v msat, want %d sats", inv.MilliSat, sats)
	case inv.PaymentHash == nil || hex.EncodeToString(inv.PaymentHash[:]) != hash:
		t.Errorf("payment hash: got %x, want %s", inv.PaymentHash, hash)
	case !inv.Timestamp.Add(inv.Expiry()).Equal(expires.Truncate(time.Second)):
		t.Errorf("expiry: got %v + %v, want %v", inv.Timestamp, inv.Expiry(), expires)
	case !bytes.Equal(inv.Destination.SerializeCompressed(), node):
		t.Errorf("signer: got %x, want the sandbox node %x", inv.Destination.SerializeCompressed(), node)
	}
}
