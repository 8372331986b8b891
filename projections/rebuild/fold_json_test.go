package rebuild

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/projections"
)

// TestMemberJSONIsJSONOf: the fold's direct encoding of a state member
// (stateChanges) and of a status line is the JSON value the projector's
// projections.JSONOf sends, for every kind of value domain.WritePaymentChanges gives.
func TestMemberJSONIsJSONOf(t *testing.T) {
	s := &streamFold{payment: &paymentRow{}, values: &jsonArena{}}
	c := &stateChanges{s: s}
	for _, v := range []any{
		"Settled 1500 ZAR", `quote " back\slash <tag> & é`, "", true, false, int64(0), int64(-42), int64(84167),
		decimal.RequireFromString("1800000.50"), decimal.RequireFromString("-0.00000001"),
		time.Date(2026, 11, 26, 6, 0, 0, 120e6, time.UTC), time.Date(2026, 11, 26, 8, 0, 0, 0, time.FixedZone("", 2*3600)),
		time.Date(2026, 11, 26, 8, 0, 0, 123456789, time.FixedZone("", -(3*3600+1800))), time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		domain.StatusLogEntry{Status: "success", Message: "Settled 1500 ZAR", At: time.Date(2026, 11, 26, 6, 0, 0, 1, time.UTC)},
		domain.StatusLogEntry{Status: "failed", Message: "Payout refused: \"bad\\account\" <é>\n"},
	} {
		var member []byte
		switch v := v.(type) {
		case string:
			c.String("m", v)
		case bool:
			c.Bool("m", v)
		case int64:
			c.Int("m", v)
		case decimal.Decimal:
			c.Decimal("m", v)
		case time.Time:
			c.Time("m", v)
		case domain.StatusLogEntry:
			logs := s.values.withLine([]byte("[]"), v)
			member = logs[1 : len(logs)-1]
		}
		if member == nil {
			member, _ = s.payment.state.get("m")
		}
		var got, want any
		if err := json.Unmarshal(member, &got); err != nil {
			t.Fatalf("%#v: the fold wrote %s: %v", v, member, err)
		}
		if err := json.Unmarshal([]byte(projections.JSONOf(v)), &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%#v: the fold wrote %s, JSONOf %s", v, member, projections.JSONOf(v))
		}
	}
}

// BenchmarkStatusLogLine compares the fold's direct encoding of the line a
// status event adds to statusLogs with encoding/json's, which it replaced.
func BenchmarkStatusLogLine(b *testing.B) {
	line := domain.StatusLogEntry{Status: "transferring", Message: "Converted; paying out 1500 ZAR by BANK",
		At: time.Date(2026, 10, 27, 9, 54, 1, 8e6, time.UTC)}
	b.Run("appendStatusLine", func(b *testing.B) {
		buf := make([]byte, 0, 256)
		for b.Loop() {
			appendStatusLine(buf, line)
		}
	})
	b.Run("JSONOf", func(b *testing.B) {
		for b.Loop() {
			_ = projections.JSONOf(line)
		}
	})
}

// TestJSONObjectKeepsKeyOrder: an object's members are in jsonb's key
// order (shorter names first, then bytewise) whatever order its text gave
// them in, a repeated name keeps its last value, and set keeps the order.
func TestJSONObjectKeepsKeyOrder(t *testing.T) {
	const want = `{"a":4,"b":5,"bb":3,"ccc":{"z":1,"y":2},"zeta":6}`
	for _, text := range []string{
		`{"zeta":1,"a":2,"bb":3,"a":4,"ccc":{"z":1,"y":2}}`,
		`{"zeta":1,"a":2,"bb":3,"a":4,"ccc":{"z":1,"y":2}}`, // the same order again: a permutation kept
		`{"ccc":{"z":1,"y":2},"a":2,"zeta":1,"bb":3,"a":4}`,
		`{"a":2,"a":4,"bb":3,"ccc":{"z":1,"y":2},"zeta":1}`, // Postgres's order, and a repeat
	} {
		o, err := parseObject([]byte(text))
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		o.set("b", json.RawMessage(`5`))
		o.set("zeta", json.RawMessage(`6`))
		if got := string(o.text()); got != want {
			t.Errorf("%s: text %s, want %s", text, got, want)
		}
		if v, ok := o.get("bb"); !ok || string(v) != "3" {
			t.Errorf("%s: get bb = %s, %v", text, v, ok)
		}
		if _, ok := o.get("c"); ok {
			t.Errorf("%s: get c found a member", text)
		}
	}
}

// BenchmarkPaymentState is the fold's work on a settled payment's state:
// the created event's JSON split into members, the lifecycle's changes
// merged in, and the text written for COPY.
func BenchmarkPaymentState(b *testing.B) {
	at := time.Date(2026, 10, 27, 11, 23, 17, 887e6, time.UTC)
	sats := int64(84167)
	created, err := json.Marshal(domain.Payment{
		ID: uuid.New(), UserID: uuid.New(), MerchantID: uuid.New(), Amount: 1500, Reference: "replay",
		FromCountry: "BTC", FromCurrency: "BTC", DestinationCountry: "SouthAfrica", DestinationCurrency: "ZAR",
		PayoutMethod: "BANK", PaymentType: "WRAPPED_INTERBANK_PAYMENT", Funding: domain.FundingLightning,
		IsInstantPayment: true, WebhookURL: "https://partner.example/hooks", Status: "created",
		StatusLog:  "Awaiting payment of the Lightning invoice for 84167 sats",
		StatusLogs: []domain.StatusLogEntry{{Status: "created", Message: "Awaiting payment", At: at}},
		AmountSats: &sats, DepositCurrency: "sats", DepositDue: decimal.NewFromInt(sats),
		LightningInvoice: &domain.LightningInvoice{AmountSats: sats, PaymentRequest: "lnbc3cb5e2b2ce3240745aacc66e4d4949bca6aa8647e65750ab39cb72da8dbdd85185ab6c1b9d80032f"},
		RecipientDetails: domain.RecipientDetails{Name: "Cape Shop", Country: "SouthAfrica", BankName: "Nedbank", Currency: "ZAR",
			PayoutMethod: "BANK", AccountNumber: "1234567890"},
		ValidityDuration: 600, ExpiresAt: at.Add(10 * time.Minute), CreatedAt: at, UpdatedAt: at,
	})
	if err != nil {
		b.Fatal(err)
	}
	events := []domain.Event{
		domain.PaymentDeposited{Amount: decimal.NewFromInt(sats), Total: decimal.NewFromInt(sats), Message: "Received 84167 sats; converting", At: at},
		domain.PaymentTransferring{AmountSats: sats, BTCPrice: decimal.NewFromInt(1800000), PayoutAmount: decimal.NewFromInt(1500),
			ChangeRefundStatus: "none", Message: "Converted; paying out 1500 ZAR by BANK", At: at},
		domain.PaymentSucceeded{AmountSettled: decimal.NewFromInt(1500), Message: "Settled 1500 ZAR to the recipient", At: at},
	}
	var values jsonArena
	for b.Loop() {
		o, err := parseObject(created)
		if err != nil {
			b.Fatal(err)
		}
		s := &streamFold{payment: &paymentRow{state: o}, values: &values}
		for _, e := range events {
			domain.WritePaymentChanges(e, &stateChanges{s: s})
		}
		s.payment.state.text()
	}
}

// FuzzParseObject: for any JSON object, parseObject keeps each name once,
// in jsonb's key order, and its text holds the members jsonb would (a
// repeated name's last value, as encoding/json keeps too); any other JSON
// value is refused. Its input is valid JSON by contract (the events' json
// column and encoding/json check it), so other input is not tried.
func FuzzParseObject(f *testing.F) {
	for _, seed := range []string{
		`{"zeta":1,"a":2,"bb":3,"a":4,"ccc":{"z":1,"y":2}}`, `{}`, `{"a":[1,{"b":null}],"é":"\u00e9","":true}`,
		`[1]`, `"a"`, `null`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return
		}
		var want map[string]any
		wantErr := json.Unmarshal(raw, &want) != nil || want == nil
		o, err := parseObject(raw)
		if err != nil {
			if !wantErr {
				t.Fatalf("%q: refused: %v", raw, err)
			}
			return
		}
		if wantErr {
			t.Fatalf("%q: not a JSON object, parsed as %s", raw, o.text())
		}
		for i := 1; i < len(o.members); i++ {
			if jsonbKeyCompare(o.members[i-1].name, o.members[i].name) >= 0 {
				t.Fatalf("%q: members %q then %q", raw, o.members[i-1].name, o.members[i].name)
			}
		}
		var got map[string]any
		if err := json.Unmarshal(o.text(), &got); err != nil {
			t.Fatalf("%q: text %s: %v", raw, o.text(), err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: text %s", raw, o.text())
		}
	})
}

// TestJSONArena: a status line goes into an array with or without lines
// before it, as jsonb's || puts it, and a value handed out keeps its bytes
// whatever is written after it, in its chunk or in the next.
func TestJSONArena(t *testing.T) {
	var a jsonArena
	line := domain.StatusLogEntry{Status: "success", Message: "Settled", At: time.Date(2026, 11, 28, 7, 0, 0, 0, time.UTC)}
	const text = `{"status":"success","message":"Settled","at":"2026-11-28T07:00:00Z"}`
	for logs, want := range map[string]string{`[]`: `[` + text + `]`, `[ ]`: `[ ` + text + `]`, `[{"a":1}]`: `[{"a":1},` + text + `]`} {
		if got := a.withLine([]byte(logs), line); string(got) != want {
			t.Errorf("withLine(%s) = %s, want %s", logs, got, want)
		}
	}
	member := func(v int64) json.RawMessage {
		at := a.begin(20)
		a.chunk = strconv.AppendInt(a.chunk, v, 10)
		return a.since(at)
	}
	first := member(-1)
	long := `[` + strings.Repeat(`1,`, jsonArenaChunk) + `1]` // larger than a chunk
	grown := a.withLine([]byte(long), line)
	var later []json.RawMessage
	for i := range 4 * jsonArenaChunk {
		later = append(later, member(int64(i)))
	}
	if string(first) != "-1" || string(grown) != long[:len(long)-1]+","+text+"]" {
		t.Errorf("values changed after later ones: %s, %s...", first, grown[:80])
	}
	for i, v := range later {
		if string(v) != strconv.Itoa(i) {
			t.Fatalf("value %d is %s", i, v)
		}
	}
}
