package mpesa

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/ledger/ledger/workers/rails/mpesa/mpesatest"
)

// FuzzDecodeSTKCallback: any body decodes or errs without panicking, and a
// paid result it accepts carries a positive amount, a receipt and a phone.
func FuzzDecodeSTKCallback(f *testing.F) {
	p := mpesatest.Prompt{CheckoutID: "ws_CO_1", MerchantID: "29115-1", Amount: 10, Phone: "254712345678", State: "paid", Receipt: "SKL1"}
	f.Add(mpesatest.STKCallback(p, time.Now()))
	p.State = "cancelled"
	f.Add(mpesatest.STKCallback(p, time.Now()))
	f.Add([]byte(`{"Body":{"stkCallback":{"CheckoutRequestID":"x","ResultCode":"0","CallbackMetadata":{"Item":[{"Name":"Amount","Value":1.5}]}}}}`))
	f.Add([]byte(`{"Body":{"stkCallback":null}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := DecodeSTKCallback(body)
		if err != nil {
			return
		}
		if !json.Valid(body) || r.CheckoutRequestID == "" {
			t.Fatalf("accepted %q as %+v", body, r)
		}
		if r.ResultCode == 0 && (r.Amount <= 0 || r.Receipt == "" || r.Phone == "") {
			t.Fatalf("accepted a paid result without its metadata: %q", body)
		}
	})
}

// FuzzDecodeResult: any body decodes or errs without panicking, and what
// it accepts names the request it answers.
func FuzzDecodeResult(f *testing.F) {
	pay := mpesatest.Payment{OriginatorID: "0193-ab", ConversationID: "AG_1", Amount: 100, Phone: "254722000111", Receipt: "TKB1"}
	f.Add(mpesatest.B2CResult(pay, 0))
	f.Add(mpesatest.B2CResult(pay, 2001))
	f.Add([]byte(`{"Result":{"ResultCode":0,"OriginatorConversationID":"a","ResultParameters":{"ResultParameter":{"Key":"Amount","Value":"1"}}}}`))
	f.Add([]byte(`{"Result":{"ResultCode":"x","OriginatorConversationID":"a"}}`))
	f.Add([]byte(`{"Result":null}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := DecodeResult(body)
		if err != nil {
			return
		}
		if !json.Valid(body) || r.OriginatorConversationID == "" || r.Params == nil {
			t.Fatalf("accepted %q as %+v", body, r)
		}
		if n, ok := r.amountParam("TransactionAmount"); ok && n <= 0 {
			t.Fatalf("accepted amount %d from %q", n, body)
		}
	})
}
