// Package ethereum is the USDT rail: each payment gets its own deposit
// address, written with the EIP-55 checksum so a mistyped address is caught
// before funds move, and a watcher credits the token's confirmed transfers
// to those addresses.
package ethereum

import (
	"encoding/hex"
	"errors"
	"strings"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"golang.org/x/crypto/sha3"
)

// ChecksumAddress writes addr as 0x + 40 hex digits, upper-casing each
// letter whose nibble in the Keccak-256 of the lowercase hex is 8 or more
// (EIP-55).
func ChecksumAddress(addr [20]byte) string {
	digits := []byte(hex.EncodeToString(addr[:]))
	hash := keccak256(digits)
	for i, c := range digits {
		nibble := hash[i/2] >> 4
		if i%2 == 1 {
			nibble = hash[i/2] & 0x0f
		}
		if c >= 'a' && nibble >= 8 {
			digits[i] = c - 'a' + 'A'
		}
	}
	return "0x" + string(digits)
}

// ValidChecksumAddress reports whether s is 0x + 40 hex digits whose case
// matches the EIP-55 checksum. An all-lowercase address carries no checksum,
// so it passes only if its checksum happens to have no capitals.
func ValidChecksumAddress(s string) bool {
	if len(s) != 42 || s[:2] != "0x" {
		return false
	}
	var addr [20]byte
	if _, err := hex.Decode(addr[:], []byte(s[2:])); err != nil {
		return false
	}
	return ChecksumAddress(addr) == s
}

// AddressFromPublicKey returns the last 20 bytes of the Keccak-256 of the
// uncompressed public key without its 0x04 prefix.
func AddressFromPublicKey(pub *secp256k1.PublicKey) [20]byte {
	hash := keccak256(pub.SerializeUncompressed()[1:])
	return [20]byte(hash[12:])
}

// keccak256 is Ethereum's hash: Keccak before NIST padding, not SHA3-256.
func keccak256(b []byte) []byte {
	h := sha3.NewLegacyKeccak256()
	h.Write(b)
	return h.Sum(nil)
}

// ParseAddress reads 0x + 40 hex digits: all lowercase, all uppercase, or
// mixed case matching its EIP-55 checksum (a mixed case that does not
// match is a typo).
func ParseAddress(s string) ([20]byte, error) {
	var addr [20]byte
	if len(s) != 42 || s[:2] != "0x" {
		return addr, errors.New("not 0x and 40 hex digits")
	}
	if _, err := hex.Decode(addr[:], []byte(s[2:])); err != nil {
		return addr, errors.New("not 0x and 40 hex digits")
	}
	if digits := s[2:]; digits != strings.ToLower(digits) && digits != strings.ToUpper(digits) && ChecksumAddress(addr) != s {
		return addr, errors.New("its mixed case does not match its EIP-55 checksum")
	}
	return addr, nil
}
