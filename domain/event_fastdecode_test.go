package domain

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
)

// fastSamples are events of every fast-decoded type as the domain writes
// them, null and empty members included.
func fastSamples() []Event {
	at := time.Date(2026, 11, 26, 6, 0, 0, 123e6, time.UTC)
	next := at.Add(time.Minute)
	code, errText := 503, "receiver answered 503"
	postings := []Posting{
		{Account: "customer_funds", Currency: "sats", Side: Debit, Amount: decimal.RequireFromString("84167")},
		{Account: "conversion", Currency: "sats", Side: Credit, Amount: decimal.RequireFromString("84167")},
	}
	return []Event{
		PaymentWebhookAttempted{EventID: uuid.MustParse("01a21655-cd56-7993-bb1c-e34d994233bf"), Type: "payment.created",
			Attempt: 1, StatusCode: &code, DurationMs: 40, Error: &errText, NextAttemptAt: &next, At: at},
		PaymentWebhookAttempted{EventID: uuid.MustParse("01a21655-cd56-7993-bb1c-e34d994233bf"), Type: "payment.success",
			Attempt: 3, DurationMs: 10000, Delivered: true, At: at},
		PaymentDepositReceived{Amount: decimal.RequireFromString("0.5"), Total: decimal.RequireFromString("0.5"), Message: "Received 0.5", At: at},
		PaymentDeposited{Amount: decimal.RequireFromString("12.25"), Total: decimal.RequireFromString("84167"), Held: true,
			Postings: postings, Message: "Received 84167 sats; converting", At: at},
		PaymentTransferring{AmountSats: 84167, BTCPrice: decimal.RequireFromString("1800000.5"), ChangeRefundSats: 0,
			ChangeRefundStatus: ChangeNone, PayoutAmount: decimal.RequireFromString("1500"), PayoutCurrency: "ZAR",
			PayoutRail: "BANK", IdempotencyKey: "01a21655-cd72-7a52-bf08-9d405cc2955d", Postings: postings,
			Message: "Converted; paying out 1500 ZAR by BANK", At: at},
		PaymentSucceeded{AmountSettled: decimal.RequireFromString("1500"), PayoutID: "sandbox-1", Postings: postings,
			Message: "Settled 1500 ZAR to the recipient", At: at},
		PaymentFailed{Reason: "account closed", Postings: []Posting{}, Message: "Payout rejected: account closed", At: at},
		PaymentExpired{Message: "Expired", At: at},
	}
}

// TestFastDecodersTakeWhatTheDomainWrites checks that the fast path is
// the one taken for the events as they are stored (Postgres's jsonb text
// of them, with its spacing and member order, and encoding/json's), and
// that it gives back the event encoding/json decodes.
func TestFastDecodersTakeWhatTheDomainWrites(t *testing.T) {
	covered := map[string]bool{}
	for _, e := range fastSamples() {
		covered[e.EventType()] = true
		data, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		for _, form := range [][]byte{data, jsonbText(t, data)} {
			got, ok := fastDecoders[e.EventType()](form)
			if !ok {
				t.Fatalf("%s: the fast decoder refused %s", e.EventType(), form)
			}
			if want := decodeWithJSON(t, e.EventType(), form); !reflect.DeepEqual(got, want) {
				t.Errorf("%s: fast %+v, encoding/json %+v", e.EventType(), got, want)
			}
		}
	}
	for typ := range fastDecoders {
		if !covered[typ] {
			t.Errorf("no sample of %s", typ)
		}
	}
	meta := Metadata{Actor: "apikey:lk_1", RequestID: "r-1", CorrelationID: "c-1", CausationID: "01a21655-cd56-7993-bb1c-e34d994233bf"}
	data, err := json.Marshal(meta)
	if err != nil {
		t.Fatal(err)
	}
	for _, form := range [][]byte{data, jsonbText(t, data), []byte(`{}`)} {
		if _, ok := fastMetadata(form); !ok {
			t.Errorf("the fast decoder refused metadata %s", form)
		}
	}
	if got, err := DecodeMetadata(jsonbText(t, data)); err != nil || got != meta {
		t.Errorf("metadata %+v (%v), want %+v", got, err, meta)
	}
}

// TestFastDecodersRefuseWhatTheyDoNotKnow: each of these must go to
// encoding/json, which decodes some of them (to a different value than a
// careless fast path would) and refuses the others.
func TestFastDecodersRefuseWhatTheyDoNotKnow(t *testing.T) {
	for _, data := range []string{
		`{"Attempt":2}`,                    // encoding/json matches names case-insensitively
		`{"attempt":2,"extra":1}`,          // an unknown member
		`{"type":"payment.\u0063reated"}`,  // an escape
		`{"type":"caf` + "\xc3\xa9" + `"}`, // beyond ASCII
		`{"attempt":2.0}`,                  // a fraction
		`{"attempt":1e2}`,                  // an exponent
		`{"attempt":012}`,                  // a leading zero
		`{"attempt":null}`,                 // null into an int
		`{"attempt":"2"}`,                  // a string into an int
		`{"delivered":nul}`,                // a misspelt literal
		`{"at":"2026-11-26 06:00:00Z"}`,    // not RFC 3339
		`{"eventId":"not-a-uuid"}`,         // not a uuid
		`{"attempt":99999999999999999999}`, // overflow
		`{"attempt":2`,                     // unterminated
		`[{"attempt":2}]`,                  // not an object
		`{"attempt":2,}`,                   // a trailing comma
	} {
		if e, ok := decodeWebhookAttempted([]byte(data)); ok {
			t.Errorf("%s: fast decoder took it as %+v", data, e)
		}
	}
	for _, data := range []string{
		`{"amount":1500}`, // a decimal as a number
		`{"amount":""}`,   // an empty decimal
		`{"amount":null}`, // null into a decimal
		`{"postings":[{"amount":"1","extra":1}]}`, // an unknown member of a posting
		`{"postings":[null]}`,                     // a null posting
		`{"postings":{}}`,                         // not an array
	} {
		if e, ok := decodeDeposited([]byte(data)); ok {
			t.Errorf("%s: fast decoder took it as %+v", data, e)
		}
	}
}

// FuzzFastDecode: whatever a fast decoder accepts, encoding/json decodes
// to the same value.
func FuzzFastDecode(f *testing.F) {
	for _, e := range fastSamples() {
		data, err := json.Marshal(e)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"postings":[],"message":"","at":"2026-11-26T06:00:00+02:00"}`))
	f.Add([]byte(`{"statusCode":null,"error":null,"nextAttemptAt":null,"attempt":-0}`))
	f.Add([]byte(`{"actor":"apikey:lk_1","requestId":"r-1","correlationId":"c","causationId":""}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, ok := fastMetadata(data); ok {
			var want Metadata
			if err := json.Unmarshal(data, &want); err != nil || got != want {
				t.Fatalf("metadata %q: fast %+v, encoding/json %+v (%v)", data, got, want, err)
			}
		}
		for typ, fast := range fastDecoders {
			got, ok := fast(data)
			if !ok {
				continue
			}
			def, _ := LookupEvent(typ)
			want := def.New()
			if err := json.Unmarshal(data, want); err != nil {
				t.Fatalf("%s: fast decoder took %q, which encoding/json refuses: %v", typ, data, err)
			}
			if !reflect.DeepEqual(got, derefEvent(want)) {
				t.Fatalf("%s: %q decodes to %+v fast, %+v with encoding/json", typ, data, got, derefEvent(want))
			}
		}
	})
}

func decodeWithJSON(t *testing.T, typ string, data []byte) Event {
	t.Helper()
	def, _ := LookupEvent(typ)
	e := def.New()
	if err := json.Unmarshal(data, e); err != nil {
		t.Fatal(err)
	}
	return derefEvent(e)
}

// jsonbText is data as Postgres prints a jsonb value: members sorted
// (shorter names first), ", " and ": " between them.
func jsonbText(t *testing.T, data []byte) []byte {
	t.Helper()
	var members map[string]json.RawMessage
	if err := json.Unmarshal(data, &members); err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(members))
	for name := range members {
		names = append(names, name)
	}
	for i := range names { // insertion sort by jsonb's key order
		for j := i; j > 0 && (len(names[j]) < len(names[j-1]) || len(names[j]) == len(names[j-1]) && names[j] < names[j-1]); j-- {
			names[j], names[j-1] = names[j-1], names[j]
		}
	}
	out := []byte{'{'}
	for i, name := range names {
		if i > 0 {
			out = append(out, ", "...)
		}
		out = append(out, '"')
		out = append(out, name...)
		out = append(out, `": `...)
		out = append(out, members[name]...)
	}
	return append(out, '}')
}

// FuzzPlainDecimal: a decimal plainDecimal reads is the one
// decimal.NewFromString makes of the same text, to the bit (its
// coefficient's representation and its exponent).
func FuzzPlainDecimal(f *testing.F) {
	for _, s := range []string{"0", "-0", "1500", "1.50", "0.001", "-12.5", "007", "123456789012345678",
		"-12345678901234567", "1234567890123456.78", "1234567890123456789", "-123456789012345678",
		".5", "5.", "1..2", "1.2.3", "-", "+1", "1e3", "１", "9223372036854775807"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if s == "" {
			return
		}
		got, ok := plainDecimal([]byte(s))
		if !ok {
			return
		}
		want, err := decimal.NewFromString(s)
		if err != nil {
			t.Fatalf("plainDecimal(%q) = %v, NewFromString refuses it: %v", s, got, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("plainDecimal(%q) = %#v, NewFromString %#v", s, got, want)
		}
	})
}
