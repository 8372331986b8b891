package paystack

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzDecodeWebhook: any body decodes or errs without panicking, and a
// transfer event it accepts names a reference.
func FuzzDecodeWebhook(f *testing.F) {
	f.Add([]byte(`{"event":"transfer.success","data":{"reference":"0193-ab","status":"success"}}`))
	f.Add([]byte(`{"event":"transfer.reversed","data":{"reference":""}}`))
	f.Add([]byte(`{"event":"charge.success","data":null}`))
	f.Add([]byte(`{"event":1}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		w, err := DecodeWebhook(body)
		if err != nil {
			return
		}
		if !json.Valid(body) || w.Event == "" {
			t.Fatalf("accepted %q as %+v", body, w)
		}
		if strings.HasPrefix(w.Event, "transfer.") && w.Data.Reference == "" {
			t.Fatalf("accepted a transfer event without a reference: %q", body)
		}
	})
}
