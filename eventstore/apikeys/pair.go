package apikeys

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
)

// NewPair makes a public key id and a 256-bit secret, and the
// secret's SHA-256, which is all that is stored. A fast hash is enough
// here: the secret is random, not a password, so it cannot be guessed from
// its hash. ledgerctl and the partner dashboard both issue keys with it.
func NewPair() (apiKey, secret, secretHash string) {
	id := make([]byte, 12)
	rand.Read(id)
	sec := make([]byte, 32)
	rand.Read(sec)
	secret = "lsk_" + base64.RawURLEncoding.EncodeToString(sec)
	sum := sha256.Sum256([]byte(secret))
	return "lk_" + hex.EncodeToString(id), secret, hex.EncodeToString(sum[:])
}
