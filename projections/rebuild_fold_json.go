package projections

import (
	"encoding/json"

	"github.com/ledger/ledger/domain/rawjson"
)

// jsonObject is a jsonb object by its top-level members, as the
// projection's || and jsonb_set merge them.
type jsonObject map[string]json.RawMessage

// parseObject splits a JSON object into its top-level members, without
// decoding their values (which stay slices of raw). raw is Postgres's text
// of a jsonb value, or encoding/json's output: valid JSON (rawjson).
// Anything else hands the stream to the projector.
func parseObject(raw []byte) (jsonObject, error) {
	o := make(jsonObject, 64)
	err := rawjson.Object(raw, func(name string, _, value []byte) error {
		o[name] = value
		return nil
	})
	if err != nil {
		return nil, errUnfoldable
	}
	return o, nil
}

// text encodes o for a jsonb column. Its members are valid JSON already
// (parsed from Postgres, or encoded by encoding/json), so they are written
// as they are, in no particular order: Postgres normalises member order
// and spacing, as it does for the projector's parameters.
func (o jsonObject) text() []byte {
	n := 2
	for k, v := range o {
		n += len(k) + len(v) + 4
	}
	b := make([]byte, 1, n)
	b[0] = '{'
	for k, v := range o {
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = appendJSONString(b, k)
		b = append(b, ':')
		b = append(b, v...)
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
func (o jsonObject) merge(changes map[string]any) {
	for k, v := range changes {
		o[k] = json.RawMessage(jsonOf(v))
	}
}
