package lightning

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/decred/dcrd/dcrec/secp256k1/v4/ecdsa"
)

// Network is the BIP-173 currency prefix that follows "ln" in an invoice.
type Network string

// Networks a node can issue invoices for (BOLT #11, human-readable part).
const (
	Mainnet Network = "bc"
	Testnet Network = "tb"
	Regtest Network = "bcrt"
)

// Compulsory feature bits (BOLT #9) that wallets require of a modern invoice:
// a payment secret defeats probing and onions are TLV only.
const (
	FeatureVarOnionOptin = 8
	FeaturePaymentSecret = 14
)

// MaxDescriptionLen is the longest description, in bytes, that fits a `d`
// field (10-bit length, 1023 groups of 5 bits); a longer one goes in `h`.
const MaxDescriptionLen = 639

// Bolt11 is what an invoice says, before it is signed.
type Bolt11 struct {
	Network    Network
	AmountMsat uint64    // 0: any amount, no amount in the human-readable part
	Timestamp  time.Time // whole seconds are kept

	PaymentHash     [32]byte
	PaymentSecret   *[32]byte // `s`; required iff Features has payment_secret
	Description     string    // `d`, unless DescriptionHash is set
	DescriptionHash *[32]byte // `h`: SHA-256 of a description given elsewhere

	Expiry             time.Duration // `x` in whole seconds; 0 omits it (readers assume 1 h)
	MinFinalCLTVExpiry uint64        // `c` in blocks; 0 omits it (readers assume 18)
	Features           []int         // `9` feature bit numbers; none omits it
}

// Tagged field types (BOLT #11, "Tagged Fields").
const (
	fieldPaymentHash     = 1
	fieldFeatures        = 5
	fieldExpiry          = 6
	fieldDescription     = 13
	fieldPaymentSecret   = 16
	fieldDescriptionHash = 23
	fieldMinFinalCLTV    = 24
)

// Encode signs b with the node key and returns the bech32 payment request in
// lower case. The signature is deterministic (RFC 6979), so equal inputs give
// equal invoices.
func Encode(b Bolt11, key *secp256k1.PrivateKey) (string, error) {
	if err := b.validate(); err != nil {
		return "", err
	}
	hrp := "ln" + string(b.Network)
	if b.AmountMsat > 0 {
		hrp += encodeAmount(b.AmountMsat)
	}
	data := uintWords(uint64(b.Timestamp.Unix()), 7)
	data = appendField(data, fieldPaymentHash, bytesToWords(b.PaymentHash[:]))
	if b.DescriptionHash != nil {
		data = appendField(data, fieldDescriptionHash, bytesToWords(b.DescriptionHash[:]))
	} else {
		data = appendField(data, fieldDescription, bytesToWords([]byte(b.Description)))
	}
	if b.PaymentSecret != nil {
		data = appendField(data, fieldPaymentSecret, bytesToWords(b.PaymentSecret[:]))
	}
	if secs := uint64(b.Expiry / time.Second); secs > 0 {
		data = appendField(data, fieldExpiry, uintWords(secs, 0))
	}
	if b.MinFinalCLTVExpiry > 0 {
		data = appendField(data, fieldMinFinalCLTV, uintWords(b.MinFinalCLTVExpiry, 0))
	}
	if len(b.Features) > 0 {
		data = appendField(data, fieldFeatures, featureWords(b.Features))
	}

	// The signature covers the hrp's bytes and the data padded to bytes.
	digest := sha256.Sum256(append([]byte(hrp), wordsToBytes(data)...))
	compact := ecdsa.SignCompact(key, digest[:], true)
	// decred puts 27 + 4 (compressed) + recovery id first; BOLT #11 wants
	// r || s || recovery id.
	sig := append(compact[1:65:65], compact[0]-27-4)
	data = append(data, bytesToWords(sig)...)
	return bech32Encode(hrp, data), nil
}

func (b Bolt11) validate() error {
	switch b.Network {
	case Mainnet, Testnet, Regtest:
	default:
		return fmt.Errorf("bolt11: unknown network %q", b.Network)
	}
	if ts := b.Timestamp.Unix(); ts < 0 || ts >= 1<<35 {
		return fmt.Errorf("bolt11: timestamp %d does not fit 35 bits", ts)
	}
	if b.DescriptionHash != nil && b.Description != "" {
		return errors.New("bolt11: both description and description hash")
	}
	if len(b.Description) > MaxDescriptionLen {
		return fmt.Errorf("bolt11: description of %d bytes exceeds %d; use a description hash", len(b.Description), MaxDescriptionLen)
	}
	if !utf8.ValidString(b.Description) {
		return errors.New("bolt11: description is not UTF-8")
	}
	if b.Expiry < 0 {
		return errors.New("bolt11: negative expiry")
	}
	secretFeature := false
	for _, bit := range b.Features {
		if bit < 0 || bit >= 5*1023 {
			return fmt.Errorf("bolt11: feature bit %d out of range", bit)
		}
		secretFeature = secretFeature || bit|1 == FeaturePaymentSecret|1
	}
	if secretFeature != (b.PaymentSecret != nil) {
		return errors.New("bolt11: a payment secret needs the payment_secret feature and vice versa")
	}
	return nil
}

// encodeAmount writes msat in bitcoin with the largest multiplier that keeps
// it an integer, which is also the shortest form. Pico-bitcoin is a tenth of
// a millisatoshi, so a `p` amount always ends in 0.
func encodeAmount(msat uint64) string {
	units := []struct {
		msat   uint64
		suffix string
	}{{1e11, ""}, {1e8, "m"}, {1e5, "u"}, {1e2, "n"}}
	for _, u := range units {
		if msat%u.msat == 0 {
			return strconv.FormatUint(msat/u.msat, 10) + u.suffix
		}
	}
	return strconv.FormatUint(msat, 10) + "0p"
}

// appendField appends a tagged field: type, 10-bit length, then the words.
func appendField(data []byte, typ byte, words []byte) []byte {
	return append(append(data, typ, byte(len(words)>>5), byte(len(words)&31)), words...)
}

// uintWords writes v big-endian in 5-bit words: exactly n words, or as few
// as v needs when n is 0 (BOLT #11: "SHOULD use the minimum data_length").
func uintWords(v uint64, n int) []byte {
	if n == 0 {
		for x := v; x > 0; x >>= 5 {
			n++
		}
	}
	w := make([]byte, n)
	for i := n - 1; i >= 0; i-- {
		w[i], v = byte(v&31), v>>5
	}
	return w
}

// featureWords sets each bit in a big-endian vector whose bit 0 is the last
// word's least significant bit, using as few words as the highest bit needs.
func featureWords(bits []int) []byte {
	top := 0
	for _, b := range bits {
		top = max(top, b)
	}
	w := make([]byte, top/5+1)
	for _, b := range bits {
		w[len(w)-1-b/5] |= 1 << (b % 5)
	}
	return w
}

// bytesToWords regroups bytes into 5-bit words, padding the last with zeros.
func bytesToWords(b []byte) []byte {
	return regroup(b, 8, 5)
}

// wordsToBytes regroups 5-bit words into bytes, padding the last with zeros.
func wordsToBytes(w []byte) []byte {
	return regroup(w, 5, 8)
}

func regroup(in []byte, from, to uint) []byte {
	var acc uint32
	var bits uint
	out := make([]byte, 0, (uint(len(in))*from+to-1)/to)
	for _, v := range in {
		acc = acc<<from | uint32(v)
		bits += from
		for bits >= to {
			bits -= to
			out = append(out, byte(acc>>bits)&(1<<to-1))
		}
	}
	if bits > 0 {
		out = append(out, byte(acc<<(to-bits))&(1<<to-1))
	}
	return out
}
