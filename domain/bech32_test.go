package domain

import (
	"strings"
	"testing"
)

// TestDecodeBech32Vectors runs BIP-173's test vectors for the checksum.
func TestDecodeBech32Vectors(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		"A12UEL5L",
		"a12uel5l",
		"an83characterlonghumanreadablepartthatcontainsthenumber1andtheexcludedcharactersbio1tt5tgs",
		"abcdef1qpzry9x8gf2tvdw0s3jn54khce6mua7lmqqqxw",
		"11qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqc8247j",
		"split1checkupstagehandshakeupstreamerranterredcaperred2y9e3w",
		"?1ezyfcl",
	} {
		hrp, _, err := DecodeBech32(s, Bech32MaxLength)
		if err != nil {
			t.Errorf("DecodeBech32(%q): got %v, want valid", s, err)
			continue
		}
		if want := strings.ToLower(s[:strings.LastIndexByte(s, '1')]); hrp != want {
			t.Errorf("DecodeBech32(%q) hrp: got %q, want %q", s, hrp, want)
		}
	}
	for _, tt := range []struct{ s, why string }{
		{"\x201nwldj5", "HRP character out of range"},
		{"\x7f1axkwrx", "HRP character out of range"},
		{"\x801eym55h", "HRP character out of range"},
		{"an84characterslonghumanreadablepartthatcontainsthenumber1andtheexcludedcharactersbio1569pvx", "overall max length exceeded"},
		{"pzry9x0s0muk", "no separator character"},
		{"1pzry9x0s0muk", "empty HRP"},
		{"x1b4n0q5v", "invalid data character"},
		{"li1dgmt3", "too short checksum"},
		{"de1lg7wt\xff", "invalid character in checksum"},
		{"A1G7SGD8", "checksum calculated with uppercase form of HRP"},
		{"10a06t8", "empty HRP"},
		{"1qzzfhee", "empty HRP"},
		{"A12uEL5L", "mixed case"},
		{"a12uel5m", "checksum changed"},
	} {
		if _, _, err := DecodeBech32(tt.s, Bech32MaxLength); err == nil {
			t.Errorf("DecodeBech32(%q) (%s): got valid, want an error", tt.s, tt.why)
		}
	}
}

func TestDecodeBech32Data(t *testing.T) {
	t.Parallel()
	// BIP-173's "abcdef1qpzry9x8gf2tvdw0s3jn54khce6mua7lmqqqxw" carries the
	// alphabet itself: the values 0..31 in order.
	_, data, err := DecodeBech32("abcdef1qpzry9x8gf2tvdw0s3jn54khce6mua7lmqqqxw", Bech32MaxLength)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) != 32 {
		t.Fatalf("data length: got %d, want 32", len(data))
	}
	for i, v := range data {
		if int(v) != i {
			t.Fatalf("data[%d]: got %d, want %d", i, v, i)
		}
	}
}

// encodeBech32 is the test's encoder (BIP-173's bech32_encode with
// convertbits 8->5 and padding), to build LNURLs for the decoder.
func encodeBech32(hrp string, payload []byte) string {
	var data []byte
	var acc uint32
	var bits uint
	for _, b := range payload {
		acc = acc<<8 | uint32(b)
		bits += 8
		for bits >= 5 {
			bits -= 5
			data = append(data, byte(acc>>bits)&31)
		}
	}
	if bits > 0 {
		data = append(data, byte(acc<<(5-bits))&31)
	}
	return EncodeBech32(hrp, data)
}
