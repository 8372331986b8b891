package domain

import (
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/domain/rawjson"
)

// Fast decoding of the most frequent events. A settled payment's history is
// mostly lifecycle events and webhook attempts, small objects of strings,
// numbers, times and postings, which every rebuild, audit and worker load
// decodes, and encoding/json's reflection was a large part of a rebuild's
// Go time (docs/performance.md, "Replay"). Each decoder here reads its
// event member by member and accepts only the plainest form of each value:
// a string without escapes or bytes outside printable ASCII, an integer
// without fraction or exponent, a decimal as a quoted string, null only
// where the field is a pointer or a slice, and no member it does not know
// (encoding/json also matches names case-insensitively). Anything else
// gives false, and the caller decodes with encoding/json, so whatever a
// fast decoder accepts, encoding/json decodes to the same value
// (FuzzFastDecode checks it).
var fastDecoders = map[string]func(data []byte) (Event, bool){
	PaymentWebhookAttempted{}.EventType(): decodeWebhookAttempted,
	PaymentDepositReceived{}.EventType():  decodeDepositReceived,
	PaymentDeposited{}.EventType():        decodeDeposited,
	PaymentTransferring{}.EventType():     decodeTransferring,
	PaymentSucceeded{}.EventType():        decodeSucceeded,
	PaymentFailed{}.EventType():           decodeFailed,
	PaymentExpired{}.EventType():          decodeExpired,
}

var errNotFast = errors.New("not for the fast decoder")

// DecodeMetadata decodes an event's stored metadata, as json.Unmarshal
// into a Metadata does; every read of an event row (the relay's sequencer
// among them) decodes one.
func DecodeMetadata(data []byte) (Metadata, error) {
	if m, ok := fastMetadata(data); ok {
		return m, nil
	}
	var m Metadata
	err := json.Unmarshal(data, &m)
	return m, err
}

func fastMetadata(data []byte) (Metadata, bool) {
	var m Metadata
	ok := fastMembers(data, func(name, v []byte) (ok bool) {
		switch string(name) {
		case "actor":
			m.Actor, ok = fastString(v)
		case "requestId":
			m.RequestID, ok = fastString(v)
		case "correlationId":
			m.CorrelationID, ok = fastString(v)
		case "causationId":
			m.CausationID, ok = fastString(v)
		}
		return ok
	})
	return m, ok
}

// fastMembers calls set with each member of the object data; false when data
// is not an object or set refuses a member. set compares the name as
// string(name) in a switch, which makes no string.
func fastMembers(data []byte, set func(name, v []byte) bool) bool {
	return rawjson.Object(data, func(name, _, v []byte) error {
		if !set(name, v) {
			return errNotFast
		}
		return nil
	}) == nil
}

func decodeWebhookAttempted(data []byte) (Event, bool) {
	var e PaymentWebhookAttempted
	ok := fastMembers(data, func(name, v []byte) (ok bool) {
		switch string(name) {
		case "eventId":
			e.EventID, ok = fastUUID(v)
		case "type":
			e.Type, ok = fastString(v)
		case "attempt":
			var n int64
			n, ok = fastInt(v)
			e.Attempt = int(n)
		case "statusCode":
			if fastNull(v) {
				e.StatusCode, ok = nil, true
				break
			}
			var n int64
			n, ok = fastInt(v)
			code := int(n)
			e.StatusCode = &code
		case "durationMs":
			e.DurationMs, ok = fastInt(v)
		case "error":
			if fastNull(v) {
				e.Error, ok = nil, true
				break
			}
			var s string
			s, ok = fastString(v)
			e.Error = &s
		case "delivered":
			e.Delivered, ok = fastBool(v)
		case "nextAttemptAt":
			if fastNull(v) {
				e.NextAttemptAt, ok = nil, true
				break
			}
			var t time.Time
			t, ok = fastTime(v)
			e.NextAttemptAt = &t
		case "at":
			e.At, ok = fastTime(v)
		}
		return ok
	})
	return e, ok
}

func decodeDepositReceived(data []byte) (Event, bool) {
	var e PaymentDepositReceived
	ok := fastMembers(data, func(name, v []byte) (ok bool) {
		switch string(name) {
		case "amount":
			e.Amount, ok = fastDecimal(v)
		case "total":
			e.Total, ok = fastDecimal(v)
		default:
			ok = lifecycleFields(name, v, &e.Postings, &e.Message, &e.At)
		}
		return ok
	})
	return e, ok
}

func decodeDeposited(data []byte) (Event, bool) {
	var e PaymentDeposited
	ok := fastMembers(data, func(name, v []byte) (ok bool) {
		switch string(name) {
		case "amount":
			e.Amount, ok = fastDecimal(v)
		case "total":
			e.Total, ok = fastDecimal(v)
		case "held":
			e.Held, ok = fastBool(v)
		default:
			ok = lifecycleFields(name, v, &e.Postings, &e.Message, &e.At)
		}
		return ok
	})
	return e, ok
}

func decodeTransferring(data []byte) (Event, bool) {
	var e PaymentTransferring
	ok := fastMembers(data, func(name, v []byte) (ok bool) {
		switch string(name) {
		case "amountSats":
			e.AmountSats, ok = fastInt(v)
		case "btcPrice":
			e.BTCPrice, ok = fastDecimal(v)
		case "changeRefundSats":
			e.ChangeRefundSats, ok = fastInt(v)
		case "changeRefundStatus":
			e.ChangeRefundStatus, ok = fastString(v)
		case "payoutAmount":
			e.PayoutAmount, ok = fastDecimal(v)
		case "payoutCurrency":
			e.PayoutCurrency, ok = fastString(v)
		case "payoutRail":
			e.PayoutRail, ok = fastString(v)
		case "idempotencyKey":
			e.IdempotencyKey, ok = fastString(v)
		default:
			ok = lifecycleFields(name, v, &e.Postings, &e.Message, &e.At)
		}
		return ok
	})
	return e, ok
}

func decodeSucceeded(data []byte) (Event, bool) {
	var e PaymentSucceeded
	ok := fastMembers(data, func(name, v []byte) (ok bool) {
		switch string(name) {
		case "amountSettled":
			e.AmountSettled, ok = fastDecimal(v)
		case "payoutId":
			e.PayoutID, ok = fastString(v)
		default:
			ok = lifecycleFields(name, v, &e.Postings, &e.Message, &e.At)
		}
		return ok
	})
	return e, ok
}

func decodeFailed(data []byte) (Event, bool) {
	var e PaymentFailed
	ok := fastMembers(data, func(name, v []byte) (ok bool) {
		switch string(name) {
		case "reason":
			e.Reason, ok = fastString(v)
		default:
			ok = lifecycleFields(name, v, &e.Postings, &e.Message, &e.At)
		}
		return ok
	})
	return e, ok
}

func decodeExpired(data []byte) (Event, bool) {
	var e PaymentExpired
	ok := fastMembers(data, func(name, v []byte) bool {
		return lifecycleFields(name, v, &e.Postings, &e.Message, &e.At)
	})
	return e, ok
}

// lifecycleFields reads the members every lifecycle event has.
func lifecycleFields(name, v []byte, postings *[]Posting, message *string, at *time.Time) (ok bool) {
	switch string(name) {
	case "postings":
		*postings, ok = fastPostings(v)
	case "message":
		*message, ok = fastString(v)
	case "at":
		*at, ok = fastTime(v)
	}
	return ok
}

// fastPostings reads null (nil) or an array of postings (never nil, as
// encoding/json gives an empty array).
func fastPostings(v []byte) ([]Posting, bool) {
	if fastNull(v) {
		return nil, true
	}
	postings := make([]Posting, 0, 6)
	err := rawjson.Array(v, func(elem []byte) error {
		var p Posting
		ok := fastMembers(elem, func(name, v []byte) (ok bool) {
			switch string(name) {
			case "account":
				p.Account, ok = fastString(v)
			case "currency":
				p.Currency, ok = fastString(v)
			case "side":
				p.Side, ok = fastString(v)
			case "amount":
				p.Amount, ok = fastDecimal(v)
			}
			return ok
		})
		if !ok {
			return errNotFast
		}
		postings = append(postings, p)
		return nil
	})
	return postings, err == nil
}

func fastNull(v []byte) bool { return string(v) == "null" }

// PlainJSONString is the content of v, a JSON string of printable ASCII
// without escapes, as a slice of v: what encoding/json would decode it to,
// without decoding. false for any other JSON value.
func PlainJSONString(v []byte) ([]byte, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return nil, false
	}
	for _, c := range v[1 : len(v)-1] {
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return nil, false
		}
	}
	return v[1 : len(v)-1], true
}

// fastString reads a string of printable ASCII without escapes.
func fastString(v []byte) (string, bool) {
	b, ok := PlainJSONString(v)
	if !ok {
		return "", false
	}
	return Intern(b), true
}

// fastInt reads an integer: JSON's digits, without fraction or exponent.
func fastInt(v []byte) (int64, bool) {
	digits := v
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || (digits[0] == '0' && len(digits) > 1) {
		return 0, false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	return n, err == nil
}

func fastBool(v []byte) (bool, bool) {
	switch string(v) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// fastTime reads a time as time.Time's UnmarshalJSON does (RFC 3339).
func fastTime(v []byte) (time.Time, bool) {
	b, ok := PlainJSONString(v)
	if !ok {
		return time.Time{}, false
	}
	var t time.Time
	if t.UnmarshalText(b) != nil {
		return time.Time{}, false
	}
	return t, true
}

// fastUUID reads a uuid as its UnmarshalText does.
func fastUUID(v []byte) (uuid.UUID, bool) {
	b, ok := PlainJSONString(v)
	if !ok {
		return uuid.Nil, false
	}
	id, err := uuid.ParseBytes(b)
	return id, err == nil
}

// fastDecimal reads a decimal written as a non-empty string, as
// decimal.Decimal's UnmarshalJSON does.
func fastDecimal(v []byte) (decimal.Decimal, bool) {
	b, ok := PlainJSONString(v)
	if !ok || len(b) == 0 {
		return decimal.Decimal{}, false
	}
	if d, ok := plainDecimal(b); ok {
		return d, true
	}
	d, err := decimal.NewFromString(string(b))
	return d, err == nil
}

// plainDecimal reads the plainest decimals, every amount the domain
// writes: a sign, digits, at most one point between digits, 18 characters
// at most besides the point. NewFromString builds those from an int64 of
// their digits, as this does, but wants a string: an allocation for each
// of a rebuild's two million amounts. false for any other form.
func plainDecimal(b []byte) (decimal.Decimal, bool) {
	n := len(b)
	digits := b
	if digits[0] == '-' {
		digits = digits[1:]
	}
	var c int64
	point := -1
	for i, ch := range digits {
		switch {
		case ch >= '0' && ch <= '9':
			c = c*10 + int64(ch-'0')
		case ch == '.' && point < 0 && i > 0 && i < len(digits)-1:
			point, n = i, n-1
		default:
			return decimal.Decimal{}, false
		}
	}
	if len(digits) == 0 || n > 18 {
		return decimal.Decimal{}, false
	}
	exp := 0
	if point >= 0 {
		exp = point + 1 - len(digits)
	}
	if b[0] == '-' {
		c = -c
	}
	return decimal.New(c, int32(exp)), true
}
