package dashboard

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"strings"
)

// A new API key's secret reaches the page that shows it in a "flash"
// cookie, sealed with AES-256-GCM under a key derived from the session id.
// The server keeps only the session id's hash, so it cannot open a flash
// by itself: only the browser that asked for the key, with its session
// cookie, can have it shown, and only once (the page deletes the cookie).

func flashAEAD(sessionID string) cipher.AEAD {
	key := sha256.Sum256([]byte("ledger dashboard flash v1\n" + sessionID))
	block, err := aes.NewCipher(key[:])
	if err != nil {
		panic(err) // a 32-byte key always makes a cipher
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		panic(err)
	}
	return aead
}

// sealFlash seals an API key and its secret for sessionID.
func sealFlash(sessionID, apiKey, secret string) string {
	aead := flashAEAD(sessionID)
	nonce := make([]byte, aead.NonceSize())
	rand.Read(nonce)
	sealed := aead.Seal(nonce, nonce, []byte(apiKey+"\n"+secret), nil)
	return base64.RawURLEncoding.EncodeToString(sealed)
}

// openFlash opens what sealFlash sealed for the same session.
func openFlash(sessionID, value string) (apiKey, secret string, ok bool) {
	raw, err := base64.RawURLEncoding.DecodeString(value)
	aead := flashAEAD(sessionID)
	if err != nil || len(raw) < aead.NonceSize() {
		return "", "", false
	}
	plain, err := aead.Open(nil, raw[:aead.NonceSize()], raw[aead.NonceSize():], nil)
	if err != nil {
		return "", "", false
	}
	apiKey, secret, ok = strings.Cut(string(plain), "\n")
	return apiKey, secret, ok
}
