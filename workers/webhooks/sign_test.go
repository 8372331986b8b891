package webhooks

import (
	"bytes"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The Standard Webhooks reference vector, from TestWebhookSign in
// github.com/standard-webhooks/standard-webhooks, libraries/go/webhook_test.go
// (also in that repository's other libraries' tests). A round trip through our
// own Verify would pass with the delimiter or key decoding wrong; reproducing
// this exact value is what says receivers' libraries accept our signatures.
const (
	vectorSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	vectorID     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	vectorUnix   = 1614265330
	vectorBody   = `{"test": 2432232314}`
	vectorSig    = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
	// rawSig is the same message signed with the key "not-base64 secret!" as
	// bytes, computed independently with Python's hmac module.
	rawSecret = "not-base64 secret!"
	rawSig    = "v1,+Q/klKWoprg4Tt/RA7wvo2cVw96JzC07foTANjKM2zI="
)

func TestSignMatchesReferenceVectors(t *testing.T) {
	for _, tc := range []struct{ secret, want string }{
		{vectorSecret, vectorSig},
		{rawSecret, rawSig}, // no whsec_ prefix: the secret's bytes are the key (contract §8)
	} {
		got, err := Sign(tc.secret, vectorID, time.Unix(vectorUnix, 0), []byte(vectorBody))
		if err != nil || got != tc.want {
			t.Errorf("Sign(%q) = %q, %v; want %q", tc.secret, got, err, tc.want)
		}
	}
}

func TestSignRefusesUnusableInput(t *testing.T) {
	for _, tc := range []struct{ name, secret, msgID string }{
		{"invalid whsec_ base64", "whsec_not*base64", vectorID},
		{"empty whsec_ key", "whsec_", vectorID},
		{"empty secret", "", vectorID},
		{"empty message id", vectorSecret, ""},
	} {
		if sig, err := Sign(tc.secret, tc.msgID, time.Unix(vectorUnix, 0), nil); err == nil {
			t.Errorf("%s: Sign = %q, want an error", tc.name, sig)
		}
	}
}

func vectorHeaders(sig string) http.Header {
	h := http.Header{}
	h.Set(HeaderID, vectorID)
	h.Set(HeaderTimestamp, strconv.Itoa(vectorUnix))
	h.Set(HeaderSignature, sig)
	return h
}

func TestVerify(t *testing.T) {
	at := time.Unix(vectorUnix, 0)
	wrong := "v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc="
	for _, tc := range []struct {
		name    string
		secret  string
		headers func(http.Header)
		body    string
		now     time.Time
		want    error // nil: verifies; otherwise errors.Is target, or errAny
	}{
		{name: "reference vector", now: at.Add(time.Minute)},
		{name: "raw secret", secret: rawSecret, headers: func(h http.Header) { h.Set(HeaderSignature, rawSig) }, now: at},
		{name: "valid one among several (key rotation)", now: at, headers: func(h http.Header) {
			h.Set(HeaderSignature, wrong+" v2,"+vectorSig[3:]+" "+vectorSig+" "+wrong)
		}},
		{name: "only a v2 with the right value", now: at, want: ErrSignature, headers: func(h http.Header) {
			h.Set(HeaderSignature, "v2,"+vectorSig[3:])
		}},
		{name: "wrong signature", now: at, want: ErrSignature, headers: func(h http.Header) { h.Set(HeaderSignature, wrong) }},
		{name: "wrong secret", secret: rawSecret, now: at, want: ErrSignature},
		{name: "altered body", body: `{"test": 2432232315}`, now: at, want: ErrSignature},
		{name: "other message id", now: at, want: ErrSignature, headers: func(h http.Header) { h.Set(HeaderID, "msg_other") }},
		{name: "stale: older than tolerance", now: at.Add(5*time.Minute + time.Second), want: ErrTimestamp},
		{name: "stale: newer than tolerance", now: at.Add(-5*time.Minute - time.Second), want: ErrTimestamp},
		{name: "edge of tolerance", now: at.Add(5 * time.Minute)},
		{name: "non-canonical timestamp", now: at, want: ErrTimestamp, headers: func(h http.Header) {
			h.Set(HeaderTimestamp, "+"+strconv.Itoa(vectorUnix))
		}},
		{name: "timestamp in milliseconds", now: at, want: ErrTimestamp, headers: func(h http.Header) {
			h.Set(HeaderTimestamp, strconv.Itoa(vectorUnix*1000))
		}},
		{name: "missing id", now: at, want: ErrMissingHeader, headers: func(h http.Header) { h.Del(HeaderID) }},
		{name: "missing timestamp", now: at, want: ErrMissingHeader, headers: func(h http.Header) { h.Del(HeaderTimestamp) }},
		{name: "missing signature", now: at, want: ErrMissingHeader, headers: func(h http.Header) { h.Del(HeaderSignature) }},
		{name: "invalid whsec_ secret", secret: "whsec_!!", now: at, want: errAny},
	} {
		t.Run(tc.name, func(t *testing.T) {
			secret, body := vectorSecret, vectorBody
			if tc.secret != "" {
				secret = tc.secret
			}
			if tc.body != "" {
				body = tc.body
			}
			h := vectorHeaders(vectorSig)
			if tc.headers != nil {
				tc.headers(h)
			}
			err := Verify(secret, h, []byte(body), 5*time.Minute, tc.now)
			switch {
			case tc.want == nil && err != nil:
				t.Fatalf("Verify = %v, want nil", err)
			case tc.want == errAny && err == nil:
				t.Fatal("Verify = nil, want an error")
			case tc.want != nil && tc.want != errAny && !errors.Is(err, tc.want):
				t.Fatalf("Verify = %v, want %v", err, tc.want)
			}
		})
	}
}

var errAny = errors.New("any error")

// FuzzVerify: Verify never panics on hostile headers, always accepts what Sign
// produced (even among junk signatures), and never accepts other body bytes.
func FuzzVerify(f *testing.F) {
	f.Add(vectorSecret, vectorID, []byte(vectorBody), []byte(`{"test": 2432232315}`), "v1,junk")
	f.Add(rawSecret, "evt_1", []byte{}, []byte{0}, "")
	f.Add("whsec_", "x", []byte("a"), []byte("a "), "v1, v1,, ,")
	f.Fuzz(func(t *testing.T, secret, msgID string, body, other []byte, junk string) {
		now := time.Unix(vectorUnix, 0)
		h := http.Header{}
		h.Set(HeaderID, msgID)
		h.Set(HeaderTimestamp, strconv.Itoa(vectorUnix))
		h.Set(HeaderSignature, junk)
		_ = Verify(secret, h, body, time.Minute, now) // must not panic

		sig, err := Sign(secret, msgID, now, body)
		if err != nil {
			return
		}
		h.Set(HeaderSignature, strings.Join([]string{junk, sig, junk}, " "))
		if err := Verify(secret, h, body, time.Minute, now); err != nil {
			t.Fatalf("Verify rejected its own signature: %v", err)
		}
		if !bytes.Equal(body, other) && Verify(secret, h, other, time.Minute, now) == nil {
			t.Fatalf("Verify accepted altered body %q (signed %q)", other, body)
		}
	})
}
