package projections

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// TestMemberJSONIsJSONOf: the fold's direct encoding of a state member is
// the JSON value the projector's jsonOf sends, for every kind of value
// domain.PaymentChanges gives and a fallback one.
func TestMemberJSONIsJSONOf(t *testing.T) {
	for _, v := range []any{
		"Settled 1500 ZAR", `quote " back\slash <tag> & é`, "", true, false, 0, -42, int64(84167),
		decimal.RequireFromString("1800000.50"), decimal.RequireFromString("-0.00000001"),
		time.Date(2026, 11, 26, 6, 0, 0, 120e6, time.UTC), time.Date(2026, 11, 26, 8, 0, 0, 0, time.FixedZone("", 2*3600)),
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
