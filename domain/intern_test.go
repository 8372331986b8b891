package domain

import (
	"encoding/json"
	"reflect"
	"testing"
	"unsafe"

	"github.com/ledger/ledger/domain/rawjson"
)

// TestIntern: every member name of a payment's state and of a settled
// payment's events is interned, and read without allocating; any other bytes
// come back as the same string.
func TestIntern(t *testing.T) {
	for _, doc := range internSamples(t) {
		data, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		err = rawjson.Object(data, func(name, _, _ []byte) error {
			if _, ok := interned[string(name)]; !ok {
				t.Errorf("%T: member %q is not interned", doc, name)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []string{"statusLogs", StatusTransferring, AccountPayoutPayable, "sats", "not a domain string", ""} {
		if got := Intern([]byte(s)); got != s {
			t.Errorf("Intern(%q) = %q", s, got)
		}
	}
	for s := range interned { // the table finds every one, and gives its shared copy
		if got := Intern([]byte(s)); got != s || unsafe.StringData(got) != unsafe.StringData(s) {
			t.Errorf("Intern(%q) is not the interned copy", s)
		}
	}
	name := []byte("amountSettled")
	if allocs := testing.AllocsPerRun(100, func() { _ = Intern(name) }); allocs != 0 {
		t.Errorf("Intern of an interned name allocated %.0f times", allocs)
	}
}

// internSamples are a payment's state, each member filled, and a settled
// payment's events: what a rebuild interns the names and values of.
func internSamples(tb testing.TB) []any {
	var p Payment
	n := 0
	fillExample(reflect.ValueOf(&p).Elem(), "", &n)
	docs := []any{p}
	for _, rec := range settledPayment(tb)[1:] { // payment.created's members are p's
		docs = append(docs, rec.Data)
	}
	return docs
}
