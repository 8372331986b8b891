package domain

import (
	"encoding/json"
	"testing"

	"github.com/ledger/ledger/domain/rawjson"
)

// internSink keeps Intern's result alive, as its callers do.
var internSink string

// BenchmarkIntern interns what a rebuild does: every member name and
// string value of a payment's state and of a settled payment's events, most
// of the names interned and most of the values not.
func BenchmarkIntern(b *testing.B) {
	var inputs [][]byte
	for _, doc := range internSamples(b) {
		data, err := json.Marshal(doc)
		if err != nil {
			b.Fatal(err)
		}
		err = rawjson.Object(data, func(name, _, value []byte) error {
			inputs = append(inputs, name)
			if s, ok := PlainJSONString(value); ok {
				inputs = append(inputs, s)
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, in := range inputs {
			internSink = Intern(in)
		}
	}
}
