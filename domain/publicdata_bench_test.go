package domain

import (
	"encoding/json"
	"reflect"
	"testing"
)

// BenchmarkPublicData: leaving the withheld members out of a
// payment.created (the relay does it to every event it publishes).
func BenchmarkPublicData(b *testing.B) {
	def := eventTypes["payment.created"]
	e := def.New()
	n := 0
	fillExample(reflect.ValueOf(e).Elem(), "", &n)
	data, err := json.Marshal(e)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := def.publicData(def.Version, data); err != nil {
			b.Fatal(err)
		}
	}
}
