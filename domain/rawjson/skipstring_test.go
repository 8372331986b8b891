package rawjson

import (
	"strings"
	"testing"
)

// skipStringByBytes is skipString as it was, a byte at a time: the
// reference the word-at-a-time walk must agree with.
func skipStringByBytes(b []byte, i int) (int, bool) {
	special := false
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '\\':
			special = true
			j++
		case c == '"':
			return j + 1, special
		case c >= 0x80:
			special = true
		}
	}
	return -1, false
}

// TestSkipString: a quote, a backslash, a byte beyond ASCII or the end of
// the input at every position of the first three words, behind plain
// bytes, is found where the byte-by-byte walk finds it.
func TestSkipString(t *testing.T) {
	t.Parallel()
	for n := range 26 {
		plain := strings.Repeat("a", n)
		for _, tail := range []string{``, `"`, `"xyz`, `\"`, `\"a"`, `\\"`, `\`, "\u00e9\"", "\xff\"", `\u0041"`, `"` + strings.Repeat("b", 9)} {
			for _, in := range []string{`"` + plain + tail, `"` + plain + tail + `"`} {
				end, special := skipString([]byte(in), 0)
				wantEnd, wantSpecial := skipStringByBytes([]byte(in), 0)
				if end != wantEnd || special != wantSpecial {
					t.Errorf("skipString(%q) = %d, %v; want %d, %v", in, end, special, wantEnd, wantSpecial)
				}
			}
		}
	}
}

// FuzzSkipString: on any input, from any start, skipString agrees with the
// byte-by-byte walk.
func FuzzSkipString(f *testing.F) {
	for _, s := range []string{`"abc"`, `"abcdefghij\"klmnop"`, "\"0123456\u00e9789\"", `"\\\\\\\\\\\\\\\\"`, `"unterminated`} {
		f.Add([]byte(s), 0)
	}
	f.Fuzz(func(t *testing.T, b []byte, start int) {
		if start < 0 || start >= len(b) {
			return
		}
		end, special := skipString(b, start)
		wantEnd, wantSpecial := skipStringByBytes(b, start)
		if end != wantEnd || special != wantSpecial {
			t.Errorf("skipString(%q, %d) = %d, %v; want %d, %v", b, start, end, special, wantEnd, wantSpecial)
		}
	})
}

// BenchmarkSkipString walks the strings of a payment's state: ids, times,
// messages and an invoice.
func BenchmarkSkipString(b *testing.B) {
	strs := []string{`"01a21983-2d37-7432-97e1-d9d4cd9e85fe"`, `"2026-10-27T20:19:16.931Z"`, `"success"`,
		`"Settled 1500 ZAR to the recipient"`, `"WRAPPED_INTERBANK_PAYMENT"`,
		`"lnbc7cf52cf1ce4d278a02e62dfad6e08144155066c06a665a66ad2af5bc5145458a5427b54f2c5b2b52"`, `"amountSats"`}
	in := make([][]byte, len(strs))
	for i, s := range strs {
		in[i] = []byte(s)
	}
	for b.Loop() {
		for _, s := range in {
			if end, _ := skipString(s, 0); end != len(s) {
				b.Fatal(end)
			}
		}
	}
}

// BenchmarkObjectState walks the members of a payment.created event's data,
// a payment's state: short names, ids, times, amounts and an invoice.
func BenchmarkObjectState(b *testing.B) {
	state := []byte(paymentCreated)
	for b.Loop() {
		n := 0
		if err := Object(state, func(_, _, _ []byte) error { n++; return nil }); err != nil || n == 0 {
			b.Fatal(n, err)
		}
	}
}

// paymentCreated is the data of a payment.created event of ledgerbench's
// replay history.
var paymentCreated = `{"id":"01a21983-2d36-7ddf-a795-2c360cc8e1c5","userId":"01a21983-2d36-747a-bfb1-5ce6efaf9787","merchantId":"01a21983-2d36-7cb1-a3fb-57a620943382","amount":1500,"reference":"replay","fromCountry":"BTC","fromCurrency":"BTC","destinationCountry":"Nigeria","destinationCurrency":"NGN","payoutMethod":"BANK","paymentType":"WRAPPED_INTERBANK_PAYMENT","funding":"LIGHTNING","isInstantPayment":true,"bufferRate":"0","webhookSecret":"","meta":null,"status":"created","statusLog":"Awaiting payment of the Lightning invoice for 1010 sats","statusLogs":[{"status":"created","message":"Awaiting payment of the Lightning invoice for 1010 sats","at":"2026-10-27T20:19:16.926Z"}],"destinationAmount":"1500","payoutAmount":"0","depositDue":"1010","depositCurrency":"sats","amountDeposited":"0","heldForDocuments":false,"amountSats":1010,"btcPrice":"150000000","otcFees":"15","bufferAmountSats":0,"lightningInvoice":{"paymentRequest":"lnbc49b6063bf2e5a98acb24ce2e7df72720df7084806743bb0d637224a2e214bec76bd83ce84f964ae7","paymentHash":"","amountSats":1010,"expiresAt":"0001-01-01T00:00:00Z"},"recipientDetails":{"name":"Lagos Shop","country":"Nigeria","currency":"NGN","payoutMethod":"BANK","bankName":"First Bank of Nigeria","accountNumber":"0123456789"},"validityDuration":600,"expiresAt":"2026-10-27T20:29:16.926Z","documents":0,"createdAt":"2026-10-27T20:19:16.926Z","updatedAt":"2026-10-27T20:19:16.926Z"}`
