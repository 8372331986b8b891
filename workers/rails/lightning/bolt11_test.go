package lightning

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"math"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/lightningnetwork/lnd/zpay32"
)

// specKey and the values below are those of BOLT #11's "Examples".
func specKey(t testing.TB) *secp256k1.PrivateKey {
	t.Helper()
	b, err := hex.DecodeString("e126f68f7eafcc8b74f54d269fe206be715000f94dac067d1c04a8ca3b2db734")
	if err != nil {
		t.Fatal(err)
	}
	return secp256k1.PrivKeyFromBytes(b)
}

var (
	specTime = time.Unix(1496314658, 0)
	specHash = [32]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2}
)

func TestEncodeSpecExamples(t *testing.T) {
	t.Parallel()
	cake := sha256.Sum256([]byte("One piece of chocolate cake, one icecream cone, one pickle, one slice of swiss cheese, one slice of salami, one lollypop, one piece of cherry pie, one sausage, one cupcake, and one slice of watermelon"))
	secret := [32]byte(bytes.Repeat([]byte{0x11}, 32))
	tests := []struct {
		name string
		b    Bolt11
		want string
	}{
		{
			name: "donation of any amount",
			b:    Bolt11{Description: "Please consider supporting this project"},
			want: "lnbc1pvjluezpp5qqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqypqdpl2pkx2ctnv5sxxmmwwd5kgetjypeh2ursdae8g6twvus8g6rfwvs8qun0dfjkxaq8rkx3yf5tcsyz3d73gafnh3cax9rn449d9p5uxz9ezhhypd0elx87sjle52x86fux2ypatgddc6k63n7erqz25le42c4u4ecky03ylcqca784w",
		},
		{
			name: "$3 for a cup of coffee within one minute",
			b:    Bolt11{AmountMsat: 250_000_000, Description: "1 cup coffee", Expiry: time.Minute},
			want: "lnbc2500u1pvjluezpp5qqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqypqdq5xysxxatsyp3k7enxv4jsxqzpuaztrnwngzn3kdzw5hydlzf03qdgm2hdq27cqv3agm2awhz5se903vruatfhq77w3ls4evs3ch9zw97j25emudupq63nyw24cg27h2rspfj9srp",
		},
		{
			name: "UTF-8 description",
			b:    Bolt11{AmountMsat: 250_000_000, Description: "ナンセンス 1杯", Expiry: time.Minute},
			want: "lnbc2500u1pvjluezpp5qqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqypqdpquwpc4curk03c9wlrswe78q4eyqc7d8d0xqzpuyk0sg5g70me25alkluzd2x62aysf2pyy8edtjeevuv4p2d5p76r4zkmneet7uvyakky2zr4cusd45tftc9c5fh0nnqpnl2jfll544esqchsrny",
		},
		{
			name: "$24 for a hashed list of things",
			b:    Bolt11{AmountMsat: 2_000_000_000, DescriptionHash: &cake},
			want: "lnbc20m1pvjluezpp5qqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqypqhp58yjmdan79s6qqdhdzgynm4zwqd5d7xmw5fk98klysy043l2ahrqscc6gd6ql3jrc5yzme8v4ntcewwz5cnw92tz0pc8qcuufvq7khhr8wpald05e92xw006sq94mg8v2ndf4sefvf9sygkshp5zfem29trqq2yxxz7",
		},
		{
			name: "payment secret and features 9, 15 and 99",
			b:    Bolt11{AmountMsat: 2_500_000_000, Description: "coffee beans", PaymentSecret: &secret, Features: []int{9, 15, 99}},
			want: "lnbc25m1pvjluezpp5qqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqypqdq5vdhkven9v5sxyetpdeessp5zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zygs9q5sqqqqqqqqqqqqqqqpqsq67gye39hfg3zd8rgc80k32tvy9xk2xunwm5lzexnvpx6fd77en8qaq424dxgt56cag2dpt359k3ssyhetktkpqh24jqnjyw6uqd08sgptq44qu",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.b.Network, tt.b.Timestamp, tt.b.PaymentHash = Mainnet, specTime, specHash
			got, err := Encode(tt.b, specKey(t))
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestEncodeAmount(t *testing.T) {
	t.Parallel()
	tests := []struct {
		msat uint64
		want string
	}{
		{1, "10p"},         // a tenth of a millisatoshi is 1 pico-bitcoin
		{1_000, "10n"},     // 1 sat
		{1_000_000, "10u"}, // 1,000 sats
		{250_000_000, "2500u"},
		{2_500_000_000, "25m"},
		{100_000_000_000, "1"}, // 1 BTC: no multiplier
		{150_000_000_000, "1500m"},
		{21_000_000 * 100_000_000_000, "21000000"},
	}
	for _, tt := range tests {
		b := Bolt11{Network: Regtest, AmountMsat: tt.msat, Timestamp: specTime, PaymentHash: specHash}
		got, err := Encode(b, specKey(t))
		if err != nil {
			t.Fatal(err)
		}
		if hrp := got[:strings.LastIndexByte(got, '1')]; hrp != "lnbcrt"+tt.want {
			t.Errorf("%d msat: got %s, want lnbcrt%s", tt.msat, hrp, tt.want)
		}
	}
}

func TestEncodeRejects(t *testing.T) {
	t.Parallel()
	secret := [32]byte{1}
	hash := [32]byte{2}
	tests := []struct {
		name string
		b    Bolt11
	}{
		{"unknown network", Bolt11{Network: "ltc", Timestamp: specTime}},
		{"timestamp before 1970", Bolt11{Network: Regtest, Timestamp: time.Unix(-1, 0)}},
		{"timestamp past 35 bits", Bolt11{Network: Regtest, Timestamp: time.Unix(1<<35, 0)}},
		{"description and its hash", Bolt11{Network: Regtest, Timestamp: specTime, Description: "x", DescriptionHash: &hash}},
		{"description too long", Bolt11{Network: Regtest, Timestamp: specTime, Description: strings.Repeat("x", MaxDescriptionLen+1)}},
		{"description not UTF-8", Bolt11{Network: Regtest, Timestamp: specTime, Description: "\xff"}},
		{"negative expiry", Bolt11{Network: Regtest, Timestamp: specTime, Expiry: -time.Second}},
		{"secret without feature", Bolt11{Network: Regtest, Timestamp: specTime, PaymentSecret: &secret}},
		{"feature without secret", Bolt11{Network: Regtest, Timestamp: specTime, Features: []int{FeaturePaymentSecret}}},
		{"feature bit out of range", Bolt11{Network: Regtest, Timestamp: specTime, Features: []int{-1}}},
	}
	for _, tt := range tests {
		if got, err := Encode(tt.b, specKey(t)); err == nil {
			t.Errorf("%s: got %s, want an error", tt.name, got)
		}
	}
}

// FuzzEncodeRoundTrip checks every invoice Encode accepts against lnd's
// zpay32 decoder, the reference implementation, and that Encode refuses only
// what BOLT #11 cannot carry.
func FuzzEncodeRoundTrip(f *testing.F) {
	f.Add(uint64(250_000_000), "1 cup coffee", uint32(60), int64(1496314658))
	f.Add(uint64(1), "", uint32(0), int64(0))
	f.Add(uint64(0), "ナンセンス 1杯", uint32(604800), int64(1<<35-1))
	f.Add(uint64(123_456_789), strings.Repeat("é", 320), uint32(1), int64(-1))
	key := specKey(f)
	f.Fuzz(func(t *testing.T, msat uint64, description string, expiry uint32, unix int64) {
		if msat > math.MaxUint64/10 {
			t.Skip("zpay32 reads the amount in pico-bitcoin into a uint64")
		}
		secret := sha256.Sum256([]byte(description))
		b := Bolt11{
			Network:       Regtest,
			AmountMsat:    msat,
			Timestamp:     time.Unix(unix, 0),
			PaymentHash:   sha256.Sum256(secret[:]),
			PaymentSecret: &secret,
			Description:   description,
			Expiry:        time.Duration(expiry) * time.Second,
			Features:      []int{FeatureVarOnionOptin, FeaturePaymentSecret},
		}
		pr, err := Encode(b, key)
		valid := unix >= 0 && unix < 1<<35 && len(description) <= MaxDescriptionLen && utf8.ValidString(description)
		if (err == nil) != valid {
			t.Fatalf("Encode error %v, want one: %t", err, !valid)
		}
		if !valid {
			return
		}
		inv, err := zpay32.Decode(pr, &chaincfg.RegressionNetParams)
		if err != nil {
			t.Fatalf("zpay32 decode %s: %v", pr, err)
		}
		var gotMsat uint64
		if inv.MilliSat != nil {
			gotMsat = uint64(*inv.MilliSat)
		}
		wantExpiry := b.Expiry
		if expiry == 0 {
			wantExpiry = time.Hour // BOLT #11's default when `x` is absent
		}
		switch {
		case gotMsat != msat:
			t.Errorf("amount: got %d msat, want %d", gotMsat, msat)
		case inv.Timestamp.Unix() != unix:
			t.Errorf("timestamp: got %d, want %d", inv.Timestamp.Unix(), unix)
		case inv.Expiry() != wantExpiry:
			t.Errorf("expiry: got %v, want %v", inv.Expiry(), wantExpiry)
		case inv.Description == nil || *inv.Description != description:
			t.Errorf("description: got %v, want %q", inv.Description, description)
		case *inv.PaymentHash != b.PaymentHash:
			t.Errorf("payment hash: got %x, want %x", *inv.PaymentHash, b.PaymentHash)
		case inv.PaymentAddr.UnwrapOr([32]byte{}) != secret:
			t.Errorf("payment secret: got %v, want %x", inv.PaymentAddr, secret)
		case !inv.Destination.IsEqual(key.PubKey()):
			t.Errorf("signer: got %x, want %x", inv.Destination.SerializeCompressed(), key.PubKey().SerializeCompressed())
		}
	})
}
