package sealing

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"
)

// FuzzParseSealed: any text either is not a sealed value, or gives a key
// id without a colon and bytes that, written back in the canonical form,
// read as the same key and bytes. It never panics.
func FuzzParseSealed(f *testing.F) {
	for _, seed := range []string{"", "whsec_abc", "sealed:v1:k1:AAAAAAAAAAAAAAAA", "sealed:v1::AA", "sealed:v1:k1:***", "sealed:v1:k1:a:b"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, v string) {
		kid, sealed, ok := parseSealed(v)
		if !ok {
			return
		}
		if kid == "" || strings.Contains(kid, ":") {
			t.Fatalf("%q: key id %q", v, kid)
		}
		canonical := sealedPrefix + kid + ":" + base64.RawURLEncoding.EncodeToString(sealed)
		if kid2, sealed2, ok := parseSealed(canonical); !ok || kid2 != kid || !bytes.Equal(sealed2, sealed) {
			t.Fatalf("%q read as %q %x; its canonical form %q as %q %x (%v)", v, kid, sealed, canonical, kid2, sealed2, ok)
		}
	})
}
