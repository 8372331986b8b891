package projections

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/domain"
)

// TestMemberJSONIsJSONOf: the fold's direct encoding of a state member is
// the JSON value the projector's jsonOf sends, for every kind of value
// domain.PaymentChanges gives and a fallback one.
func TestMemberJSONIsJSONOf(t *testing.T) {
	for _, v := range []any{
		"Settled 1500 ZAR", `quote " back\slash <tag> & é`, "", true, false, 0, -42, int64(84167),
		decimal.RequireFromString("1800000.50"), decimal.RequireFromString("-0.00000001"),
		time.Date(2026, 11, 26, 6, 0, 0, 120e6, time.UTC), time.Date(2026, 11, 26, 8, 0, 0, 0, time.FixedZone("", 2*3600)),
		&domain.StatusLogEntry{Status: "success", Message: "Settled 1500 ZAR", At: time.Date(2026, 11, 26, 6, 0, 0, 1, time.UTC)},
		&domain.StatusLogEntry{Status: "failed", Message: "Payout refused: \"bad\\account\" <é>\n"},
		[]string{"fallback"},
	} {
		var got, want any
		if err := json.Unmarshal(memberJSON(v), &got); err != nil {
			t.Fatalf("%#v: memberJSON wrote %s: %v", v, memberJSON(v), err)
		}
		if err := json.Unmarshal([]byte(jsonOf(v)), &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%#v: memberJSON %s, jsonOf %s", v, memberJSON(v), jsonOf(v))
		}
	}
}

// BenchmarkStatusLogLine compares the fold's direct encoding of the line a
// status event adds to statusLogs with encoding/json's, which it replaced.
func BenchmarkStatusLogLine(b *testing.B) {
	line := &domain.StatusLogEntry{Status: "transferring", Message: "Converted; paying out 1500 ZAR by BANK",
		At: time.Date(2026, 10, 27, 9, 54, 1, 8e6, time.UTC)}
	b.Run("memberJSON", func(b *testing.B) {
		for b.Loop() {
			memberJSON(line)
		}
	})
	b.Run("jsonOf", func(b *testing.B) {
		for b.Loop() {
			_ = jsonOf(line)
		}
	})
}
