package projections

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/domain/rawjson"
)

// jsonObject is a jsonb object by its top-level members, as the
// projection's || and jsonb_set merge them: a list, not a map, because a
// payment's state has some forty members and a map of them cost a fifth
// of the rebuild's allocations. Names are unique.
type jsonObject struct {
	members []jsonMember
}

type jsonMember struct {
	name  string
	value json.RawMessage
}

// parseObject splits a JSON object into its top-level members, without
// decoding their values (which stay slices of raw). raw is Postgres's text
// of a jsonb value, or encoding/json's output: valid JSON (rawjson).
// Anything else hands the stream to the projector. A repeated name keeps
// its last value, as jsonb does.
func parseObject(raw []byte) (jsonObject, error) {
	o := jsonObject{members: make([]jsonMember, 0, 48)}
	err := rawjson.Object(raw, func(rawName, _, value []byte) error {
		name := domain.Intern(rawName)
		// Postgres writes a jsonb object's names in its key order (shorter
		// first, then bytewise), each once: a name after the last one in
		// that order is new, and only another needs a look for a repeat.
		if n := len(o.members); n == 0 || jsonbKeyBefore(o.members[n-1].name, name) {
			o.members = append(o.members, jsonMember{name, value})
		} else {
			o.set(name, value)
		}
		return nil
	})
	if err != nil {
		return jsonObject{}, errUnfoldable
	}
	return o, nil
}

// jsonbKeyBefore reports whether a sorts before b in jsonb's key order.
func jsonbKeyBefore(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

// get returns the value of member name.
func (o *jsonObject) get(name string) (json.RawMessage, bool) {
	for _, m := range o.members {
		if m.name == name {
			return m.value, true
		}
	}
	return nil, false
}

// set gives member name value, adding it when it is new.
func (o *jsonObject) set(name string, value json.RawMessage) {
	for i := range o.members {
		if o.members[i].name == name {
			o.members[i].value = value
			return
		}
	}
	o.members = append(o.members, jsonMember{name, value})
}

// text encodes o for a jsonb column. Its members are valid JSON already
// (parsed from Postgres, or encoded by encoding/json), so they are written
// as they are, in no particular order: Postgres normalises member order
// and spacing, as it does for the projector's parameters.
func (o *jsonObject) text() []byte {
	n := 2
	for _, m := range o.members {
		n += len(m.name) + len(m.value) + 4
	}
	b := make([]byte, 1, n)
	b[0] = '{'
	for _, m := range o.members {
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = appendJSONString(b, m.name)
		b = append(b, ':')
		b = append(b, m.value...)
	}
	return append(b, '}')
}

// appendJSONString appends s as a JSON string.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// merge is `o || jsonOf(changes)`.
func (o *jsonObject) merge(changes map[string]any) {
	for k, v := range changes {
		o.set(k, memberJSON(v))
	}
}

// memberJSON is v in JSON, written directly for the types of
// domain.PaymentChanges' values and status-log lines (encoding/json's
// reflection was a twentieth of a rebuild's Go time, and the lines alone
// another twentieth), the same value as jsonOf(v) gives.
func memberJSON(v any) json.RawMessage {
	switch v := v.(type) {
	case string:
		return appendJSONString(nil, v)
	case bool:
		return strconv.AppendBool(nil, v)
	case int:
		return strconv.AppendInt(nil, int64(v), 10)
	case int64:
		return strconv.AppendInt(nil, v, 10)
	case decimal.Decimal:
		if b, err := v.MarshalJSON(); err == nil {
			return b
		}
	case time.Time:
		if b, err := v.MarshalJSON(); err == nil {
			return b
		}
	case *domain.StatusLogEntry: // the line a status event adds to statusLogs
		if at, err := v.At.MarshalJSON(); err == nil {
			b := make([]byte, 0, len(v.Status)+len(v.Message)+len(at)+36)
			b = appendJSONString(append(b, `{"status":`...), v.Status)
			b = appendJSONString(append(b, `,"message":`...), v.Message)
			return append(append(append(b, `,"at":`...), at...), '}')
		}
	}
	return json.RawMessage(jsonOf(v))
}
