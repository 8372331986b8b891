package lightning

import (
	"crypto/sha256"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/lightningnetwork/lnd/zpay32"
)

// zpay32Terms decodes pr with lnd's reference decoder, which also checks
// the signature, into the terms DecodeBolt11 reads.
func zpay32Terms(pr string, net Network) (Bolt11Terms, error) {
	params := map[Network]*chaincfg.Params{
		Mainnet: &chaincfg.MainNetParams, Testnet: &chaincfg.TestNet3Params, Regtest: &chaincfg.RegressionNetParams,
	}[net]
	if params == nil {
		params = &chaincfg.MainNetParams
	}
	inv, err := zpay32.Decode(pr, params)
	if err != nil {
		return Bolt11Terms{}, err
	}
	t := Bolt11Terms{Network: net, Timestamp: inv.Timestamp, PaymentHash: *inv.PaymentHash, DescriptionHash: inv.DescriptionHash,
		Expiry: inv.Expiry()}
	if inv.MilliSat != nil {
		t.AmountMsat = uint64(*inv.MilliSat)
	}
	return t, nil
}

func sameTerms(got, want Bolt11Terms) bool {
	return got.Network == want.Network && got.AmountMsat == want.AmountMsat &&
		got.Timestamp.Equal(want.Timestamp) && got.PaymentHash == want.PaymentHash && got.Expiry == want.Expiry &&
		(got.DescriptionHash == nil) == (want.DescriptionHash == nil) &&
		(got.DescriptionHash == nil || *got.DescriptionHash == *want.DescriptionHash)
}

func TestDecodeBolt11RoundTrip(t *testing.T) {
	t.Parallel()
	descHash := sha256.Sum256([]byte(`[["text/plain","pay alice"]]`))
	secret := [32]byte{7}
	tests := []struct {
		name string
		b    Bolt11
	}{
		{"regtest, description hash", Bolt11{Network: Regtest, AmountMsat: 21_000, DescriptionHash: &descHash}},
		{"mainnet, no amount", Bolt11{Network: Mainnet, Description: "donation"}},
		{"testnet, pico amount", Bolt11{Network: Testnet, AmountMsat: 1, Description: "one msat"}},
		{"every bitcoin", Bolt11{Network: Mainnet, AmountMsat: maxSats * 1000, Description: "all of it"}},
		{"fields after the hashes", Bolt11{Network: Regtest, AmountMsat: 150_000_000_000, DescriptionHash: &descHash,
			PaymentSecret: &secret, Expiry: 90 * time.Second, MinFinalCLTVExpiry: 80, Features: []int{FeatureVarOnionOptin, FeaturePaymentSecret}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.b.Timestamp, tt.b.PaymentHash = specTime, specHash
			pr, err := Encode(tt.b, specKey(t))
			if err != nil {
				t.Fatal(err)
			}
			got, err := DecodeBolt11(pr)
			if err != nil {
				t.Fatal(err)
			}
			want := Bolt11Terms{Network: tt.b.Network, AmountMsat: tt.b.AmountMsat, Timestamp: specTime,
				PaymentHash: specHash, DescriptionHash: tt.b.DescriptionHash, Expiry: time.Hour}
			if tt.b.Expiry > 0 {
				want.Expiry = tt.b.Expiry
			}
			if !sameTerms(got, want) {
				t.Errorf("got %+v, want %+v", got, want)
			}
			ref, err := zpay32Terms(pr, tt.b.Network)
			if err != nil {
				t.Fatal(err)
			}
			if !sameTerms(got, ref) {
				t.Errorf("got %+v, zpay32 read %+v", got, ref)
			}
			if upper, err := DecodeBolt11(strings.ToUpper(pr)); err != nil || !sameTerms(upper, want) {
				t.Errorf("upper case: got %+v, %v, want %+v", upper, err, want)
			}
		})
	}
}

// TestDecodeBolt11SpecExamples reads BOLT #11's own examples as zpay32 does.
func TestDecodeBolt11SpecExamples(t *testing.T) {
	t.Parallel()
	examples := []string{
		"lnbc1pvjluezpp5qqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqypqdpl2pkx2ctnv5sxxmmwwd5kgetjypeh2ursdae8g6twvus8g6rfwvs8qun0dfjkxaq8rkx3yf5tcsyz3d73gafnh3cax9rn449d9p5uxz9ezhhypd0elx87sjle52x86fux2ypatgddc6k63n7erqz25le42c4u4ecky03ylcqca784w",
		"lnbc2500u1pvjluezpp5qqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqypqdq5xysxxatsyp3k7enxv4jsxqzpuaztrnwngzn3kdzw5hydlzf03qdgm2hdq27cqv3agm2awhz5se903vruatfhq77w3ls4evs3ch9zw97j25emudupq63nyw24cg27h2rspfj9srp",
		"lnbc20m1pvjluezpp5qqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqypqhp58yjmdan79s6qqdhdzgynm4zwqd5d7xmw5fk98klysy043l2ahrqscc6gd6ql3jrc5yzme8v4ntcewwz5cnw92tz0pc8qcuufvq7khhr8wpald05e92xw006sq94mg8v2ndf4sefvf9sygkshp5zfem29trqq2yxxz7",
	}
	for _, pr := range examples {
		got, err := DecodeBolt11(pr)
		if err != nil {
			t.Fatalf("%s: %v", pr[:12], err)
		}
		want, err := zpay32Terms(pr, Mainnet)
		if err != nil {
			t.Fatal(err)
		}
		if !sameTerms(got, want) {
			t.Errorf("%s: got %+v, zpay32 read %+v", pr[:12], got, want)
		}
	}
}

// rawInvoice is an unsigned invoice: DecodeBolt11 checks no signature, so
// 104 zero words stand in for one.
func rawInvoice(hrp string, fields ...[]byte) string {
	data := uintWords(uint64(specTime.Unix()), timestampWords)
	for _, f := range fields {
		data = append(data, f...)
	}
	return bech32Encode(hrp, append(data, make([]byte, signatureWords)...))
}

func pField(h [32]byte) []byte {
	return appendField(nil, fieldPaymentHash, bytesToWords(h[:]))
}

func TestDecodeBolt11Fields(t *testing.T) {
	t.Parallel()
	other := [32]byte{9}
	short := appendField(nil, fieldPaymentHash, bytesToWords(specHash[:31]))
	h := appendField(nil, fieldDescriptionHash, bytesToWords(other[:]))
	tests := []struct {
		name     string
		pr       string
		wantHash [32]byte
		wantDesc bool
	}{
		{"a short p is skipped", rawInvoice("lnbcrt", short, pField(specHash)), specHash, false},
		{"the first p wins", rawInvoice("lnbcrt", pField(specHash), pField(other)), specHash, false},
		{"unknown fields are skipped", rawInvoice("lnbcrt", appendField(nil, 3, []byte{1, 2, 3}), pField(specHash), h), specHash, true},
	}
	for _, tt := range tests {
		got, err := DecodeBolt11(tt.pr)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got.PaymentHash != tt.wantHash || (got.DescriptionHash != nil) != tt.wantDesc {
			t.Errorf("%s: got %+v, want hash %x, description hash %t", tt.name, got, tt.wantHash, tt.wantDesc)
		}
	}
}

func TestDecodeBolt11Rejects(t *testing.T) {
	t.Parallel()
	p := pField(specHash)
	dirty := append([]byte(nil), p...)
	dirty[len(dirty)-1] |= 1 // the 4 padding bits after 256 bits of hash
	valid := rawInvoice("lnbcrt", p)
	tests := []struct {
		name, pr, want string
	}{
		{"bad checksum", valid[:len(valid)-1] + "q", "checksum"},
		{"not an invoice", bech32Encode("bc", make([]byte, 120)), "prefix"},
		{"signet", rawInvoice("lntbs", p), "unknown network"},
		{"unknown multiplier", rawInvoice("lnbcrt10x", p), "unknown multiplier"},
		{"pico not a whole msat", rawInvoice("lnbcrt11p", p), "whole millisatoshi"},
		{"leading zero", rawInvoice("lnbcrt01u", p), "leading zeros"},
		{"zero", rawInvoice("lnbcrt0n", p), "leading zeros"},
		{"more than every bitcoin", rawInvoice("lnbcrt21000001", p), "21 million"},
		{"overflow", rawInvoice("lnbcrt99999999999999999999m", p), "out of range"},
		{"no payment hash", rawInvoice("lnbcrt"), "no payment hash"},
		{"truncated field", rawInvoice("lnbcrt", p, []byte{1, 0}), "truncated"},
		{"field past the end", rawInvoice("lnbcrt", p, []byte{1, 3, 31}), "longer than"},
		{"padding not zero", rawInvoice("lnbcrt", dirty), "padding"},
		{"no signature", bech32Encode("lnbcrt", append(uintWords(1, timestampWords), p...)), "too short"},
	}
	for _, tt := range tests {
		if got, err := DecodeBolt11(tt.pr); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %+v, %v, want an error containing %q", tt.name, got, err, tt.want)
		}
	}
}

// FuzzDecodeBolt11 checks that DecodeBolt11 never panics and, wherever
// zpay32 also accepts an invoice, reads the same terms.
func FuzzDecodeBolt11(f *testing.F) {
	secret := [32]byte{1}
	descHash := sha256.Sum256([]byte("metadata"))
	for _, b := range []Bolt11{
		{Network: Regtest, AmountMsat: 5_000, DescriptionHash: &descHash},
		{Network: Mainnet, Description: "any amount"},
		{Network: Testnet, AmountMsat: 123_456_789, Description: "secret",
			PaymentSecret: &secret, Features: []int{FeatureVarOnionOptin, FeaturePaymentSecret}},
	} {
		b.Timestamp, b.PaymentHash = specTime, specHash
		pr, err := Encode(b, specKey(f))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(pr)
	}
	f.Add(rawInvoice("lnbcrt10p", pField(specHash)))
	f.Fuzz(func(t *testing.T, pr string) {
		got, err := DecodeBolt11(pr)
		if err != nil {
			return
		}
		want, err := zpay32Terms(pr, got.Network)
		if err != nil {
			return // zpay32 also checks the signature and the description
		}
		if !sameTerms(got, want) {
			t.Errorf("got %+v, zpay32 read %+v", got, want)
		}
	})
}
