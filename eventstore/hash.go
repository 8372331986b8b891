package eventstore

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gowebpki/jcs"

	"github.com/ledger/ledger/domain"
)

// GenesisHash is the prevhash of a tenant's first event.
var GenesisHash = strings.Repeat("0", 64)

// Hash computes an event's chain hash, exactly as contract §9 documents it so
// an auditor can recompute it without our code:
//
//	hash = lowercase hex( SHA-256( prevhash + "\n" + JCS(envelope) ) )
//
// where prevhash is the 64-hex-digit hash of the tenant's previous event in
// position order (64 zeros for its first), and JCS(envelope) is the RFC 8785
// canonical JSON of the stored CloudEvent (as GET /events returns it) with its
// "hash" and "prevhash" members removed.
func Hash(prevHash string, r domain.Record) (string, error) {
	env := domain.Envelope(r)
	env.Hash, env.PrevHash = "", ""
	raw, err := json.Marshal(env)
	if err != nil {
		return "", fmt.Errorf("encode envelope %s: %w", r.ID, err)
	}
	canon, err := jcs.Transform(raw)
	if err != nil {
		return "", fmt.Errorf("canonicalise envelope %s: %w", r.ID, err)
	}
	h := sha256.New()
	h.Write([]byte(prevHash))
	h.Write([]byte("\n"))
	h.Write(canon)
	return hex.EncodeToString(h.Sum(nil)), nil
}
