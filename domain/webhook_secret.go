package domain

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// WebhookSecretPrefix marks a webhookSecret whose key is the base64 text
// after it (Standard Webhooks); any other secret is used as its raw bytes
// (contract §8), so keys imported from elsewhere work unchanged.
const WebhookSecretPrefix = "whsec_"

// WebhookSigningKey returns the HMAC key a webhookSecret stands for. POST
// /payments checks it as the sender will use it: a whsec_ secret whose key
// is not base64 would otherwise be accepted and then fail every attempt.
func WebhookSigningKey(secret string) ([]byte, error) {
	key := []byte(secret)
	if b64, ok := strings.CutPrefix(secret, WebhookSecretPrefix); ok {
		var err error
		if key, err = base64.StdEncoding.DecodeString(b64); err != nil {
			return nil, fmt.Errorf("a %s secret must be followed by its key in base64: %w", WebhookSecretPrefix, err)
		}
	}
	if len(key) == 0 {
		// HMAC accepts an empty key, which would sign with nothing secret.
		return nil, errors.New("the signing key is empty")
	}
	return key, nil
}
