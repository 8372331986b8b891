package domain

import (
	"errors"
	"strings"
)

// bech32Charset is BIP-173's alphabet: the value of a data character is its index.
const bech32Charset = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"

// Bech32 errors. They stay inside domain: callers see a field error.
var (
	errBech32Length    = errors.New("bech32: length out of range")
	errBech32Char      = errors.New("bech32: character out of range")
	errBech32Case      = errors.New("bech32: mixed case")
	errBech32Separator = errors.New("bech32: no separator, empty human-readable part or short checksum")
	errBech32Checksum  = errors.New("bech32: invalid checksum")
	errBech32Padding   = errors.New("bech32: invalid padding")
)

// Bech32MaxLength is BIP-173's limit on a segwit address. LNURLs (LUD-01)
// and BOLT11 invoices are longer and pass their own limit to DecodeBech32.
const Bech32MaxLength = 90

// DecodeBech32 decodes a bech32 string (BIP-173, the original checksum
// constant 1, not bech32m) of at most maxLen characters into its
// human-readable part (lower case) and its data as 5-bit values, checksum
// removed. Mixed case is refused; either case alone is accepted.
func DecodeBech32(s string, maxLen int) (hrp string, data []byte, err error) {
	if len(s) < 8 || len(s) > maxLen {
		return "", nil, errBech32Length
	}
	var lower, upper bool
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 33 || c > 126 {
			return "", nil, errBech32Char
		}
		lower = lower || (c >= 'a' && c <= 'z')
		upper = upper || (c >= 'A' && c <= 'Z')
	}
	if lower && upper {
		return "", nil, errBech32Case
	}
	s = strings.ToLower(s)
	sep := strings.LastIndexByte(s, '1')
	if sep < 1 || sep+7 > len(s) {
		return "", nil, errBech32Separator
	}
	hrp = s[:sep]
	data = make([]byte, 0, len(s)-sep-1)
	for i := sep + 1; i < len(s); i++ {
		v := strings.IndexByte(bech32Charset, s[i])
		if v < 0 {
			return "", nil, errBech32Char
		}
		data = append(data, byte(v))
	}
	if bech32Polymod(append(bech32HRPExpand(hrp), data...)) != 1 {
		return "", nil, errBech32Checksum
	}
	return hrp, data[:len(data)-6], nil
}

func bech32Polymod(values []byte) uint32 {
	gen := [5]uint32{0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3}
	chk := uint32(1)
	for _, v := range values {
		top := chk >> 25
		chk = (chk&0x1ffffff)<<5 ^ uint32(v)
		for i := 0; i < 5; i++ {
			if (top>>i)&1 == 1 {
				chk ^= gen[i]
			}
		}
	}
	return chk
}

func bech32HRPExpand(hrp string) []byte {
	out := make([]byte, 0, len(hrp)*2+1)
	for i := 0; i < len(hrp); i++ {
		out = append(out, hrp[i]>>5)
	}
	out = append(out, 0)
	for i := 0; i < len(hrp); i++ {
		out = append(out, hrp[i]&31)
	}
	return out
}

// convertBits5to8 regroups 5-bit values into bytes as BIP-173's convertbits
// without padding: leftover bits must be fewer than 5 and all zero.
func convertBits5to8(data []byte) ([]byte, error) {
	var acc uint32
	var bits uint
	out := make([]byte, 0, len(data)*5/8)
	for _, v := range data {
		acc = acc<<5 | uint32(v)
		bits += 5
		for bits >= 8 {
			bits -= 8
			out = append(out, byte(acc>>bits))
		}
	}
	if bits >= 5 || acc&(1<<bits-1) != 0 {
		return nil, errBech32Padding
	}
	return out, nil
}

// EncodeBech32 returns hrp, the separator, the 5-bit words and their
// bech32 (not bech32m) checksum: the inverse of DecodeBech32, which BOLT11
// invoices are written with (BOLT #11 lifts BIP-173's 90-character limit).
func EncodeBech32(hrp string, words []byte) string {
	mod := bech32Polymod(append(append(bech32HRPExpand(hrp), words...), 0, 0, 0, 0, 0, 0)) ^ 1
	var sb strings.Builder
	sb.Grow(len(hrp) + 1 + len(words) + 6)
	sb.WriteString(hrp)
	sb.WriteByte('1')
	for _, w := range words {
		sb.WriteByte(bech32Charset[w])
	}
	for i := range 6 {
		sb.WriteByte(bech32Charset[mod>>(5*(5-i))&31])
	}
	return sb.String()
}
