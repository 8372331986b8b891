package lightning

import "strings"

// domain.DecodeBech32 reads payment requests but does not write them, and its
// checksum helpers are unexported, so the encoding half of BIP-173 lives here.

const bech32Charset = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"

// bech32Encode returns hrp, the separator, the 5-bit words and their
// bech32 (not bech32m) checksum. BOLT #11 lifts BIP-173's 90-character limit.
func bech32Encode(hrp string, words []byte) string {
	values := append(hrpExpand(hrp), words...)
	mod := polymod(append(values, 0, 0, 0, 0, 0, 0)) ^ 1
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

func polymod(values []byte) uint32 {
	gen := [5]uint32{0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3}
	chk := uint32(1)
	for _, v := range values {
		top := chk >> 25
		chk = (chk&0x1ffffff)<<5 ^ uint32(v)
		for i := range 5 {
			if (top>>i)&1 == 1 {
				chk ^= gen[i]
			}
		}
	}
	return chk
}

func hrpExpand(hrp string) []byte {
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
