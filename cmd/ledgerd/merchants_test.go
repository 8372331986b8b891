package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledger/ledger/eventstore/testenv"
)

const e2eLNURL = "LNURL1DP68GURN8GHJ7UM9WFMXJCM99E3K7MF0V9CXJ0M385EKVCENXC6R2C35XVUKXEFCV5MKVV34X5EKZD3EV56NYD3HXQURZEPEXEJXXEPNXSCRVWFNV9NXZCN9XQ6XYEFHVGCXXCMYXYMNSERXFQ5FNS"

// merchantJSON is the Merchant body (contract §5) with id and timestamps
// checked by shape; absent members are null.
func merchantJSON(fields map[string]any) map[string]any {
	m := map[string]any{"id": isUUIDv7, "bankName": nil, "accountNumber": nil, "phoneNumber": nil, "lnurl": nil,
		"createdAt": isTimestamp, "updatedAt": isTimestamp}
	for k, v := range fields {
		m[k] = v
	}
	return m
}

// TestCreateMerchant covers POST /merchants for every country of contract
// §5 with a tenant and a user token, its field rules, GET one and the
// merchant.created event.
func TestCreateMerchant(t *testing.T) {
	t.Parallel()
	s := startServer(t, nil)
	tn := s.createTenant(t, "Merchantco")
	tok := s.tenantToken(t, tn.APIKey, tn.APISecret)
	user := s.createUser(t, tok, "cashier@example.com", "Cashier")
	userTok := s.userToken(t, tok, user["userId"].(string))

	for _, tt := range []struct {
		name, body string
		want       map[string]any
	}{
		{"South African bank", `{"name":"Shoprite","country":"SouthAfrica","bankName":"capitec bank","accountNumber":"1234567890"}`,
			map[string]any{"name": "Shoprite", "country": "SouthAfrica", "currency": "ZAR", "payoutMethod": "BANK",
				"bankName": "Capitec Bank", "accountNumber": "1234567890"}},
		{"Kenyan bank", `{"name":"Java House","country":"Kenya","bankName":"EQUITY BANK KENYA","accountNumber":"0123456789012","phoneNumber":null}`,
			map[string]any{"name": "Java House", "country": "Kenya", "currency": "KES", "payoutMethod": "BANK",
				"bankName": "Equity Bank Kenya", "accountNumber": "0123456789012"}},
		{"Kenyan momo", `{"name":"Mama Mboga","country":"Kenya","phoneNumber":"+254712345678"}`,
			map[string]any{"name": "Mama Mboga", "country": "Kenya", "currency": "KES", "payoutMethod": "MOMO",
				"phoneNumber": "+254712345678"}},
		{"Nigerian bank", `{"name":"Jumia","country":"Nigeria","bankName":"Guaranty Trust Bank","accountNumber":"0123456789"}`,
			map[string]any{"name": "Jumia", "country": "Nigeria", "currency": "NGN", "payoutMethod": "BANK",
				"bankName": "Guaranty Trust Bank", "accountNumber": "0123456789"}},
		{"Lightning address", `{"name":"Bitrefill","country":"BTC","lnurl":"shop@bitrefill.com"}`,
			map[string]any{"name": "Bitrefill", "country": "BTC", "currency": "BTC", "payoutMethod": "LIGHTNING",
				"lnurl": "shop@bitrefill.com"}},
		{"bech32 LNURL", `{"name":"Service","country":"BTC","lnurl":"` + e2eLNURL + `"}`,
			map[string]any{"name": "Service", "country": "BTC", "currency": "BTC", "payoutMethod": "LIGHTNING",
				"lnurl": e2eLNURL}},
	} {
		for _, by := range []struct{ kind, tok string }{{"tenant", tok}, {"user", userTok}} {
			t.Run(tt.name+" by "+by.kind+" token", func(t *testing.T) {
				created := mustStatus(t, s.call(t, http.MethodPost, "/merchants", by.tok, tt.body), http.StatusCreated)
				checkJSON(t, "201 body", created, merchantJSON(tt.want))
				if created["createdAt"] != created["updatedAt"] {
					t.Errorf("updatedAt: got %v, want createdAt %v", created["updatedAt"], created["createdAt"])
				}
				id, _ := created["id"].(string)
				// Any token of the tenant reads it.
				for _, reader := range []string{tok, userTok} {
					checkJSON(t, "GET body", mustStatus(t, s.call(t, http.MethodGet, "/merchants/"+id, reader, ""), http.StatusOK), created)
				}
				evs := s.streamEvents(t, id)
				if len(evs) != 1 || evs[0].Type != "merchant.created" || evs[0].SchemaVersion != 1 {
					t.Fatalf("events: got %+v, want one merchant.created v1", evs)
				}
				var data map[string]any
				mustDecode(t, evs[0].Data, &data)
				if data["id"] != id || data["name"] != tt.want["name"] || data["payoutMethod"] != tt.want["payoutMethod"] {
					t.Errorf("stored data: got %v, want the merchant", data)
				}
			})
		}
	}
}

func TestCreateMerchantInvalid(t *testing.T) {
	t.Parallel()
	s := startServer(t, nil)
	tn := s.createTenant(t, "Badmerchants")
	tok := s.tenantToken(t, tn.APIKey, tn.APISecret)
	before := s.countEvents(t)
	badChecksum := e2eLNURL[:len(e2eLNURL)-1] + "T" // the last checksum character changed
	for _, tt := range []struct {
		name, body, code, field string
	}{
		{"empty object", `{}`, "validation_failed", "name"},
		{"no country", `{"name":"X"}`, "validation_failed", "country"},
		{"unknown country", `{"name":"X","country":"Ghana"}`, "validation_failed", "country"},
		{"ISO country", `{"name":"X","country":"ZAF","bankName":"Nedbank","accountNumber":"123456"}`, "validation_failed", "country"},
		{"long name", `{"name":"` + strings.Repeat("n", 201) + `","country":"BTC","lnurl":"a@b.com"}`, "validation_failed", "name"},
		{"no bank", `{"name":"X","country":"SouthAfrica","accountNumber":"123456"}`, "validation_failed", "bankName"},
		{"no account", `{"name":"X","country":"SouthAfrica","bankName":"Nedbank"}`, "validation_failed", "accountNumber"},
		{"short account", `{"name":"X","country":"SouthAfrica","bankName":"Nedbank","accountNumber":"12345"}`, "validation_failed", "accountNumber"},
		{"account with letters", `{"name":"X","country":"Nigeria","bankName":"Zenith Bank","accountNumber":"01234567AB"}`, "validation_failed", "accountNumber"},
		{"account as number", `{"name":"X","country":"Nigeria","bankName":"Zenith Bank","accountNumber":123456}`, "validation_failed", "accountNumber"},
		{"unknown bank", `{"name":"X","country":"SouthAfrica","bankName":"Bank of Nowhere","accountNumber":"123456"}`, "unknown_bank", "bankName"},
		{"bank of another country", `{"name":"X","country":"Nigeria","bankName":"Capitec Bank","accountNumber":"0123456789"}`, "unknown_bank", "bankName"},
		{"lnurl on a bank merchant", `{"name":"X","country":"SouthAfrica","bankName":"Nedbank","accountNumber":"123456","lnurl":"a@b.com"}`, "validation_failed", "lnurl"},
		{"phone on a South African merchant", `{"name":"X","country":"SouthAfrica","bankName":"Nedbank","accountNumber":"123456","phoneNumber":"+27821234567"}`, "validation_failed", "phoneNumber"},
		{"Kenya with nothing", `{"name":"X","country":"Kenya"}`, "validation_failed", "bankName"},
		{"Kenyan momo not Kenyan", `{"name":"X","country":"Kenya","phoneNumber":"+255712345678"}`, "validation_failed", "phoneNumber"},
		{"Kenyan momo with a bank", `{"name":"X","country":"Kenya","phoneNumber":"+254712345678","bankName":"Family Bank"}`, "validation_failed", "bankName"},
		{"BTC without lnurl", `{"name":"X","country":"BTC"}`, "validation_failed", "lnurl"},
		{"BTC upper-case address", `{"name":"X","country":"BTC","lnurl":"Alice@example.com"}`, "validation_failed", "lnurl"},
		{"BTC bad checksum", `{"name":"X","country":"BTC","lnurl":"` + badChecksum + `"}`, "validation_failed", "lnurl"},
		{"BTC plain URL", `{"name":"X","country":"BTC","lnurl":"https://example.com/lnurlp/x"}`, "validation_failed", "lnurl"},
		{"BTC with account", `{"name":"X","country":"BTC","lnurl":"a@b.com","accountNumber":"123456"}`, "validation_failed", "accountNumber"},
		{"unknown member", `{"name":"X","country":"BTC","lnurl":"a@b.com","currency":"BTC"}`, "", "currency"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := mustProblem(t, s.call(t, http.MethodPost, "/merchants", tok, tt.body), http.StatusBadRequest, tt.code)
			mustFieldError(t, p, tt.field)
		})
	}
	t.Cleanup(func() {
		if got := s.countEvents(t); got != before {
			t.Errorf("events after invalid requests: got %d, want %d", got, before)
		}
	})
}

func TestListMerchants(t *testing.T) {
	t.Parallel()
	s := startServer(t, nil)
	a := s.createTenant(t, "Listco")
	b := s.createTenant(t, "Otherco")
	tokA := s.tenantToken(t, a.APIKey, a.APISecret)
	tokB := s.tenantToken(t, b.APIKey, b.APISecret)
	userA := s.userToken(t, tokA, a.OwnerUserID)

	var ids []string
	for i := 0; i < 5; i++ {
		r := s.call(t, http.MethodPost, "/merchants", tokA, fmt.Sprintf(`{"name":"Shop %d","country":"BTC","lnurl":"shop%d@example.com"}`, i, i))
		ids = append(ids, mustStatus(t, r, http.StatusCreated)["id"].(string))
	}
	other := mustStatus(t, s.call(t, http.MethodPost, "/merchants", tokB, `{"name":"B","country":"BTC","lnurl":"b@example.com"}`), http.StatusCreated)
	slices.Reverse(ids) // newest first

	type pageBody struct {
		Items []struct {
			ID string `json:"id"`
		} `json:"items"`
		OffsetMarker *string `json:"offsetMarker"`
	}
	list := func(tok, query string) pageBody {
		t.Helper()
		r := s.call(t, http.MethodGet, "/merchants"+query, tok, "")
		mustStatus(t, r, http.StatusOK)
		var p pageBody
		mustDecode(t, r.Body, &p)
		return p
	}
	var got []string
	offset := ""
	for pages := 0; ; pages++ {
		p := list(userA, "?limit=2"+offset)
		for _, it := range p.Items {
			got = append(got, it.ID)
		}
		if p.OffsetMarker == nil {
			if pages != 2 {
				t.Errorf("pages: got %d, want 3", pages+1)
			}
			break
		}
		offset = "&offset=" + *p.OffsetMarker
	}
	if !slices.Equal(got, ids) {
		t.Errorf("paged ids: got %v, want %v", got, ids)
	}
	if all := list(tokA, ""); len(all.Items) != 5 || all.OffsetMarker != nil {
		t.Errorf("one page: got %d items, marker %v, want 5 and null", len(all.Items), all.OffsetMarker)
	}
	if bs := list(tokB, ""); len(bs.Items) != 1 || bs.Items[0].ID != other["id"] {
		t.Errorf("tenant B's list: got %+v, want only its merchant", bs.Items)
	}
	first := list(tokA, "?limit=1")
	mustFieldError(t, mustProblem(t, s.call(t, http.MethodGet, "/merchants?offset="+*first.OffsetMarker, tokB, ""), http.StatusBadRequest, "validation_failed"), "offset")
	mustFieldError(t, mustProblem(t, s.call(t, http.MethodGet, "/merchants?offset=garbage", tokA, ""), http.StatusBadRequest, "validation_failed"), "offset")
	for _, l := range []string{"0", "101", "x"} {
		mustFieldError(t, mustProblem(t, s.call(t, http.MethodGet, "/merchants?limit="+l, tokA, ""), http.StatusBadRequest, "validation_failed"), "limit")
	}

	// Another tenant's merchant, an unknown id and a non-UUID are 404.
	mustProblem(t, s.call(t, http.MethodGet, "/merchants/"+ids[0], tokB, ""), http.StatusNotFound, "not_found")
	mustProblem(t, s.call(t, http.MethodGet, "/merchants/"+other["id"].(string), userA, ""), http.StatusNotFound, "not_found")
	mustProblem(t, s.call(t, http.MethodGet, "/merchants/"+uuid.NewString(), tokA, ""), http.StatusNotFound, "not_found")
	mustProblem(t, s.call(t, http.MethodGet, "/merchants/not-a-uuid", tokA, ""), http.StatusNotFound, "not_found")
	mustProblem(t, s.call(t, http.MethodGet, "/merchants", "", ""), http.StatusUnauthorized, "")
}

func TestBanksUtility(t *testing.T) {
	t.Parallel()
	s := startServer(t, nil)
	tn := s.createTenant(t, "Bankco")
	tok := s.tenantToken(t, tn.APIKey, tn.APISecret)
	userTok := s.userToken(t, tok, tn.OwnerUserID)
	for _, tt := range []struct {
		country string
		want    map[string]string // some of the list: name -> code
	}{
		{"SouthAfrica", map[string]string{"ABSA Bank": "632005", "Capitec Bank": "470010", "First National Bank": "250655",
			"Nedbank": "198765", "Standard Bank": "051001"}},
		{"Kenya", map[string]string{"KCB Bank Kenya": "01", "Equity Bank Kenya": "68", "Co-operative Bank of Kenya": "11"}},
		{"Nigeria", map[string]string{"Access Bank": "044", "Zenith Bank": "057", "Guaranty Trust Bank": "058"}},
	} {
		for _, tk := range []string{tok, userTok} {
			r := s.call(t, http.MethodGet, "/utils/banks?country="+tt.country, tk, "")
			body := mustStatus(t, r, http.StatusOK)
			if keys := sortedKeys(body); !slices.Equal(keys, []string{"items"}) {
				t.Errorf("%s members: got %v, want [items]", tt.country, keys)
			}
			var list struct {
				Items []map[string]string `json:"items"`
			}
			mustDecode(t, r.Body, &list)
			got := map[string]string{}
			for _, it := range list.Items {
				if len(it) != 2 || it["name"] == "" || it["code"] == "" {
					t.Errorf("%s item: got %v, want name and code", tt.country, it)
				}
				got[it["name"]] = it["code"]
			}
			for name, code := range tt.want {
				if got[name] != code {
					t.Errorf("%s %s: got code %q, want %s", tt.country, name, got[name], code)
				}
			}
		}
	}
	for _, q := range []string{"", "?country=", "?country=BTC", "?country=Ghana", "?country=southafrica"} {
		mustFieldError(t, mustProblem(t, s.call(t, http.MethodGet, "/utils/banks"+q, tok, ""), http.StatusBadRequest, "validation_failed"), "country")
	}
	mustProblem(t, s.call(t, http.MethodGet, "/utils/banks?country=Kenya", "", ""), http.StatusUnauthorized, "")
}

// TestMerchantIdempotencyKey: POST /merchants with an Idempotency-Key
// replays the first 201 and creates one merchant.
func TestMerchantIdempotencyKey(t *testing.T) {
	t.Parallel()
	s := startServer(t, nil)
	tn := s.createTenant(t, "Idemco")
	tok := s.tenantToken(t, tn.APIKey, tn.APISecret)
	body := `{"name":"Once","country":"SouthAfrica","bankName":"Nedbank","accountNumber":"123456789"}`
	key := uuid.NewString()
	first := s.call(t, http.MethodPost, "/merchants", tok, body, "Idempotency-Key", key)
	created := mustStatus(t, first, http.StatusCreated)
	second := s.call(t, http.MethodPost, "/merchants", tok, body, "Idempotency-Key", key)
	if second.Status != http.StatusCreated || !bytes.Equal(second.Body, first.Body) {
		t.Errorf("replay: got %d %s, want %d %s", second.Status, second.Body, first.Status, first.Body)
	}
	if got := second.Header.Get("Idempotent-Replayed"); got != "true" {
		t.Errorf("replay Idempotent-Replayed: got %q, want true", got)
	}
	mustProblem(t, s.call(t, http.MethodPost, "/merchants", tok, strings.Replace(body, "Once", "Twice", 1), "Idempotency-Key", key),
		http.StatusUnprocessableEntity, "idempotency_key_reused")
	var n int
	s.queryRow(t, `SELECT count(*) FROM merchants WHERE tenant_id = $1`, []any{tn.TenantID}, &n)
	if n != 1 {
		t.Errorf("merchants: got %d, want 1", n)
	}
	// Without the key, the same body is a second merchant.
	again := mustStatus(t, s.call(t, http.MethodPost, "/merchants", tok, body), http.StatusCreated)
	if again["id"] == created["id"] {
		t.Errorf("without a key: got the same merchant, want a new one")
	}
}

// TestMerchantPublished: merchant.created is published on NATS without its
// private members (contract §9), which the store keeps.
func TestMerchantPublished(t *testing.T) {
	t.Parallel()
	s := startServer(t, nil)
	tn := s.createTenant(t, "Pubco")
	tok := s.tenantToken(t, tn.APIKey, tn.APISecret)
	js := testenv.JetStream(t)
	for _, body := range []string{
		`{"name":"Bank Shop","country":"Nigeria","bankName":"Wema Bank","accountNumber":"0123456789"}`,
		`{"name":"Momo Shop","country":"Kenya","phoneNumber":"+254712345678"}`,
		`{"name":"LN Shop","country":"BTC","lnurl":"ln@example.com"}`,
	} {
		id := mustStatus(t, s.call(t, http.MethodPost, "/merchants", tok, body), http.StatusCreated)["id"].(string)
		subject := s.Stream.SubjectPrefix + "." + tn.TenantID + ".merchant." + id + ".created"
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		var msg *jetstream.RawStreamMsg
		for msg == nil {
			stream, err := js.Stream(ctx, s.Stream.Name)
			if err == nil {
				msg, _ = stream.GetLastMsgForSubject(ctx, subject)
			}
			if msg != nil {
				break
			}
			select {
			case <-ctx.Done():
				cancel()
				t.Fatalf("%s: not published within 15 s", subject)
			case <-time.After(50 * time.Millisecond):
			}
		}
		cancel()
		var ce struct {
			Type    string         `json:"type"`
			Subject string         `json:"subject"`
			Data    map[string]any `json:"data"`
		}
		mustDecode(t, msg.Data, &ce)
		if ce.Type != "ledger.merchant.created.v1" || ce.Subject != "merchants/"+id {
			t.Errorf("published type, subject: got %s %s, want ledger.merchant.created.v1 merchants/%s", ce.Type, ce.Subject, id)
		}
		evs := s.streamEvents(t, id)
		var stored map[string]any
		mustDecode(t, evs[0].Data, &stored)
		private := []string{"accountNumber", "phoneNumber", "lnurl"}
		for _, f := range private {
			if _, ok := ce.Data[f]; ok {
				t.Errorf("published data: got %s = %v, want it left out", f, ce.Data[f])
			}
			if _, ok := stored[f]; !ok {
				t.Errorf("stored data: got no %s, want the store to keep it", f)
			}
		}
		for k, v := range stored {
			if _, ok := ce.Data[k]; !ok && !slices.Contains(private, k) {
				t.Errorf("published data: got no %s, want %v", k, v)
			}
		}
		raw, _ := json.Marshal(ce.Data)
		for _, secret := range []string{"0123456789", "+254712345678", "ln@example.com"} {
			if strings.Contains(string(raw), secret) {
				t.Errorf("published data %s: got %s in it, want it left out", raw, secret)
			}
		}
	}
}
