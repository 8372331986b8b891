package ethereum

import (
	"encoding/hex"
	"strings"
	"testing"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
)

// eip55Examples are the test cases of EIP-55 itself.
var eip55Examples = []string{
	"0x52908400098527886E0F7030069857D2E4169EE7", // all caps
	"0x8617E340B3D01FA5F11F306F4090FD50E238070D",
	"0xde709f2102306220921060314715629080e2fb77", // all lower
	"0x27b1fdb04752bbc536007a920d24acb045561c26",
	"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", // normal
	"0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
	"0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB",
	"0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb",
}

func mustAddress(t testing.TB, s string) [20]byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ToLower(s[2:]))
	if err != nil || len(b) != 20 {
		t.Fatalf("bad address %s: %v", s, err)
	}
	return [20]byte(b)
}

func TestChecksumAddressEIP55(t *testing.T) {
	t.Parallel()
	for _, want := range eip55Examples {
		if got := ChecksumAddress(mustAddress(t, want)); got != want {
			t.Errorf("got %s, want %s", got, want)
		}
		if !ValidChecksumAddress(want) {
			t.Errorf("ValidChecksumAddress(%s) = false, want true", want)
		}
	}
}

func TestValidChecksumAddressRejects(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1bEAed", // two letters' case swapped
		"0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed", // lower case: no checksum
		"0X5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", // capital X
		"5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",   // no prefix
		"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAe",  // 39 digits
		"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAedd",
		"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeg", // not hex
		"",
	} {
		if ValidChecksumAddress(s) {
			t.Errorf("ValidChecksumAddress(%q) = true, want false", s)
		}
	}
}

func TestAddressFromPublicKey(t *testing.T) {
	t.Parallel()
	// The web3.js accounts example key and its well-known address.
	priv, err := hex.DecodeString("4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318")
	if err != nil {
		t.Fatal(err)
	}
	got := ChecksumAddress(AddressFromPublicKey(secp256k1.PrivKeyFromBytes(priv).PubKey()))
	if want := "0x2c7536E3605D9C16a7a3D7b1898e529396a65c23"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// FuzzValidChecksumAddress: a valid address is its own checksummed form, and
// changing the case of any one letter breaks it.
func FuzzValidChecksumAddress(f *testing.F) {
	for _, s := range eip55Examples {
		f.Add(s)
	}
	f.Add("0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed")
	f.Add("0x")
	f.Fuzz(func(t *testing.T, s string) {
		if !ValidChecksumAddress(s) {
			return
		}
		if got := ChecksumAddress(mustAddress(t, s)); got != s {
			t.Fatalf("valid %s checksums to %s", s, got)
		}
		for i := 2; i < len(s); i++ {
			if c := s[i]; c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' {
				flipped := s[:i] + string(c^0x20) + s[i+1:]
				if ValidChecksumAddress(flipped) {
					t.Errorf("%s and %s both valid", s, flipped)
				}
			}
		}
	})
}

func TestParseAddress(t *testing.T) {
	t.Parallel()
	for _, s := range append(eip55Examples, "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed", "0xdAC17F958D2ee523a2206206994597C13D831ec7") {
		if _, err := ParseAddress(s); err != nil {
			t.Errorf("ParseAddress(%s): %v", s, err)
		}
	}
	for _, s := range []string{"", "0x", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1bEAed", "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beae", "5aaeb6053f3e94c9b9a09f33669435e7ef1beaed00"} {
		if _, err := ParseAddress(s); err == nil {
			t.Errorf("ParseAddress(%q) took it", s)
		}
	}
}
