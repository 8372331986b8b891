package domain

import (
	"bytes"
	"encoding/json"
)

// Optional is one field of a PATCH body (contract §3, §4: "send only fields to
// change"). It tells three cases apart: absent (Set false), explicitly null
// (Set and Null: clear the field) and a value (Set, Value).
type Optional[T any] struct {
	Set   bool
	Null  bool
	Value T
}

// Some is a present, non-null field.
func Some[T any](v T) Optional[T] { return Optional[T]{Set: true, Value: v} }

// Null is a field sent as JSON null.
func Null[T any]() Optional[T] { return Optional[T]{Set: true, Null: true} }

// UnmarshalJSON records that the field was present. A value is decoded as
// strictly as the request body itself (contract §1): an unknown member of a
// nested object is an error, because the json decoder's DisallowUnknownFields
// does not reach into a custom unmarshaler.
func (o *Optional[T]) UnmarshalJSON(data []byte) error {
	var zero T
	o.Set, o.Null, o.Value = true, false, zero
	if string(bytes.TrimSpace(data)) == "null" {
		o.Null = true
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(&o.Value)
}

// MarshalJSON writes the value, or null when the field is absent or null.
func (o Optional[T]) MarshalJSON() ([]byte, error) {
	if !o.Set || o.Null {
		return []byte("null"), nil
	}
	return json.Marshal(o.Value)
}

// IsZero reports an absent field, so `json:",omitzero"` leaves it out.
func (o Optional[T]) IsZero() bool { return !o.Set }
