package webhooks

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ledger/ledger/domain"
)

// Header names fixed by the Standard Webhooks specification.
const (
	HeaderID        = "webhook-id"        // the event id, the same on every retry: receivers de-duplicate on it
	HeaderTimestamp = "webhook-timestamp" // unix seconds of this attempt, signed, so replays go stale
	HeaderSignature = "webhook-signature" // "v1,<base64>", several space-separated during key rotation
)

// Errors Verify returns (wrapped with detail), for receivers that answer
// differently to a stale message than to a forged one.
var (
	ErrMissingHeader = errors.New("webhooks: missing webhook-id, webhook-timestamp or webhook-signature header")
	ErrTimestamp     = errors.New("webhooks: webhook-timestamp invalid or outside tolerance")
	ErrSignature     = errors.New("webhooks: no matching v1 signature")
)

// signingKey returns the HMAC key a secret stands for.
func signingKey(secret string) ([]byte, error) {
	key, err := domain.WebhookSigningKey(secret)
	if err != nil {
		return nil, fmt.Errorf("webhooks: %w", err)
	}
	return key, nil
}

// mac is base64(HMAC-SHA256(key, msgID "." unixSeconds "." body)).
func mac(key []byte, msgID string, unix int64, body []byte) string {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(msgID + "." + strconv.FormatInt(unix, 10) + "."))
	h.Write(body)
	return base64.StdEncoding.EncodeToString(h.Sum(nil))
}

// Sign returns the webhook-signature value for one attempt: "v1," followed by
// base64(HMAC-SHA256(key, msgID + "." + unix seconds + "." + body)). An empty
// msgID is refused because receivers reject a message without webhook-id.
func Sign(secret, msgID string, timestamp time.Time, body []byte) (string, error) {
	if msgID == "" {
		return "", errors.New("webhooks: empty message id")
	}
	key, err := signingKey(secret)
	if err != nil {
		return "", err
	}
	return "v1," + mac(key, msgID, timestamp.Unix(), body), nil
}

// Verify is the receiver's side, kept here as the reference merchants can copy
// and as the oracle for this package's tests. It accepts the message when the
// timestamp is within tolerance of now (Standard Webhooks suggests 5 minutes)
// and any of the space-separated v1 signatures matches; other versions are
// skipped so a sender can add schemes without breaking receivers.
func Verify(secret string, headers http.Header, body []byte, tolerance time.Duration, now time.Time) error {
	msgID, ts, sigs := headers.Get(HeaderID), headers.Get(HeaderTimestamp), headers.Get(HeaderSignature)
	if msgID == "" || ts == "" || sigs == "" {
		return ErrMissingHeader
	}
	unix, err := strconv.ParseInt(ts, 10, 64)
	// The signed text is the canonical decimal, so "+1614265330" or "01614265330"
	// would verify as a different header than was signed: refuse them.
	if err != nil || strconv.FormatInt(unix, 10) != ts {
		return fmt.Errorf("%w: %q is not unix seconds", ErrTimestamp, ts)
	}
	if skew := now.Sub(time.Unix(unix, 0)); skew > tolerance || skew < -tolerance {
		return fmt.Errorf("%w: %s off", ErrTimestamp, skew.Round(time.Second))
	}
	key, err := signingKey(secret)
	if err != nil {
		return err
	}
	want := []byte(mac(key, msgID, unix, body))
	for _, s := range strings.Fields(sigs) {
		version, sig, _ := strings.Cut(s, ",")
		// hmac.Equal takes constant time, so response timing leaks nothing of want.
		if version == "v1" && hmac.Equal([]byte(sig), want) {
			return nil
		}
	}
	return ErrSignature
}
