package lightning

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ledger/ledger/domain"
)

// maxInvoiceLen is lnd's limit on a payment request (the most a QR code
// holds); BOLT #11 itself sets none.
const maxInvoiceLen = 7089

// Sizes in 5-bit words (BOLT #11, "Data Part").
const (
	timestampWords = 7   // 35 bits
	signatureWords = 104 // 520 bits: 64-byte signature and recovery id
	hashWords      = 52  // 32 bytes and 4 bits of padding
)

// Bolt11Terms is what DecodeBolt11 reads from a payment request: enough to
// check an invoice someone else made against what we asked for. The rest of
// the invoice is left to the node that pays it.
type Bolt11Terms struct {
	Network         Network
	AmountMsat      uint64    // 0: the invoice names no amount
	Timestamp       time.Time // when the invoice was made, in whole seconds
	PaymentHash     [32]byte
	DescriptionHash *[32]byte     // nil when the invoice carries no `h`
	Expiry          time.Duration // `x`; one hour when the invoice carries none (BOLT #11)
}

// defaultExpiry is what BOLT #11 tells readers to assume without an `x`.
const defaultExpiry = time.Hour

// ExpiresAt is when the invoice stops being payable.
func (t Bolt11Terms) ExpiresAt() time.Time { return t.Timestamp.Add(t.Expiry) }

// DecodeBolt11 checks pr's bech32 checksum and reads its network, amount,
// timestamp, payment hash `p`, description hash `h` and expiry `x`. As BOLT #11 asks of
// readers, a `p` or `h` whose length is not 52 words is skipped, and the
// first well-formed one wins; an invoice with no `p` is refused.
//
// It does not verify the signature: that proves which node made the
// invoice, which only the paying node can act on, and LND verifies it
// before paying.
func DecodeBolt11(pr string) (Bolt11Terms, error) {
	hrp, data, err := domain.DecodeBech32(pr, maxInvoiceLen)
	if err != nil {
		return Bolt11Terms{}, fmt.Errorf("bolt11: %w", err)
	}
	var t Bolt11Terms
	if t.Network, t.AmountMsat, err = parseHRP(hrp); err != nil {
		return Bolt11Terms{}, err
	}
	if len(data) < timestampWords+signatureWords {
		return Bolt11Terms{}, errors.New("bolt11: too short for a timestamp and a signature")
	}
	var ts int64
	for _, w := range data[:timestampWords] {
		ts = ts<<5 | int64(w)
	}
	t.Timestamp = time.Unix(ts, 0)

	var havePayment, haveExpiry bool
	t.Expiry = defaultExpiry
	fields := data[timestampWords : len(data)-signatureWords]
	for len(fields) > 0 {
		if len(fields) < 3 {
			return Bolt11Terms{}, errors.New("bolt11: truncated tagged field")
		}
		typ, n := fields[0], int(fields[1])<<5|int(fields[2])
		if len(fields) < 3+n {
			return Bolt11Terms{}, errors.New("bolt11: tagged field longer than the invoice")
		}
		value := fields[3 : 3+n]
		fields = fields[3+n:]
		if typ == fieldExpiry && !haveExpiry {
			// A payer reads the first `x`, as zpay32 does; 7 words (35
			// bits of seconds) is more than a century and fits an int64.
			if n == 0 || n > 7 {
				return Bolt11Terms{}, fmt.Errorf("bolt11: expiry of %d words", n)
			}
			var secs int64
			for _, w := range value {
				secs = secs<<5 | int64(w)
			}
			t.Expiry, haveExpiry = time.Duration(secs)*time.Second, true
			continue
		}
		if n != hashWords {
			continue
		}
		switch {
		case typ == fieldPaymentHash && !havePayment:
			if t.PaymentHash, err = hash32(value); err != nil {
				return Bolt11Terms{}, err
			}
			havePayment = true
		case typ == fieldDescriptionHash && t.DescriptionHash == nil:
			h, err := hash32(value)
			if err != nil {
				return Bolt11Terms{}, err
			}
			t.DescriptionHash = &h
		}
	}
	if !havePayment {
		return Bolt11Terms{}, errors.New("bolt11: no payment hash")
	}
	return t, nil
}

// parseHRP splits "ln" + network + amount: the network is every letter
// before the first digit (so "bcrt" is not read as "bc"), the amount the rest.
func parseHRP(hrp string) (Network, uint64, error) {
	rest, ok := strings.CutPrefix(hrp, "ln")
	if !ok {
		return "", 0, fmt.Errorf("bolt11: prefix %q is not ln", hrp)
	}
	i := strings.IndexAny(rest, "0123456789")
	if i < 0 {
		i = len(rest)
	}
	network, amount := Network(rest[:i]), rest[i:]
	switch network {
	case Mainnet, Testnet, Regtest:
	default:
		return "", 0, fmt.Errorf("bolt11: unknown network %q", network)
	}
	if amount == "" {
		return network, 0, nil
	}
	msat, err := parseAmount(amount)
	if err != nil {
		return "", 0, fmt.Errorf("bolt11: amount %q: %w", amount, err)
	}
	return network, msat, nil
}

// parseAmount reads a BOLT #11 amount: a decimal number of bitcoin with no
// leading zero, then an optional multiplier. A `p` amount names tenths of a
// millisatoshi, so it must end in 0. Amounts above every bitcoin there
// will be are refused, which also keeps msat within int64.
func parseAmount(s string) (uint64, error) {
	msatPer := map[byte]uint64{'m': 1e8, 'u': 1e5, 'n': 1e2}
	mult, pico, digits := uint64(1e11), false, s
	if c := s[len(s)-1]; c < '0' || c > '9' {
		digits = s[:len(s)-1]
		switch m, ok := msatPer[c]; {
		case ok:
			mult = m
		case c == 'p':
			pico = true
		default:
			return 0, fmt.Errorf("unknown multiplier %q", c)
		}
	}
	if digits == "" || digits[0] == '0' || strings.Trim(digits, "0123456789") != "" {
		return 0, errors.New("not a positive decimal without leading zeros")
	}
	n, err := strconv.ParseUint(digits, 10, 64)
	if err != nil {
		return 0, err
	}
	const limit = maxSats * 1000
	switch {
	case pico && n%10 != 0:
		return 0, errors.New("pico-bitcoin amount is not a whole millisatoshi")
	case pico && n/10 <= limit:
		return n / 10, nil
	case !pico && n <= limit/mult:
		return n * mult, nil
	}
	return 0, errors.New("more than 21 million bitcoin")
}

// hash32 reads a 52-word field as 32 bytes. BIP-173 padding must be zero,
// as zpay32 requires too, so each hash has a single spelling.
func hash32(words []byte) ([32]byte, error) {
	b, ok := wordsToBytesExact(words)
	if !ok || len(b) != 32 {
		return [32]byte{}, errors.New("bolt11: non-zero padding in a 32-byte field")
	}
	return [32]byte(b), nil
}

// wordsToBytesExact regroups 5-bit words into bytes, refusing leftover bits
// that are a whole word or not zero (BIP-173's convertbits without padding).
func wordsToBytesExact(words []byte) ([]byte, bool) {
	b := wordsToBytes(words)
	if bits := len(words) * 5 % 8; bits > 0 {
		if bits >= 5 || b[len(b)-1] != 0 {
			return nil, false
		}
		b = b[:len(b)-1]
	}
	return b, true
}
