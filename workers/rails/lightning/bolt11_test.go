package lightning

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/lightningnetwork/lnd/lnwire"
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
// zpay32 decoder, the reference implementation: every field reads back as
// written and the signature recovers the signing key. It also checks that
// Encode refuses only what BOLT #11 cannot carry.
func FuzzEncodeRoundTrip(f *testing.F) {
	f.Add(uint8(0), uint64(250_000_000), specHash[:], "1 cup coffee", false, uint32(60), uint32(0), int64(1496314658), uint64(0), []byte("spec"))
	f.Add(uint8(1), uint64(1), []byte{}, "", false, uint32(0), uint32(18), int64(0), uint64(1<<8|1<<14), []byte{})
	f.Add(uint8(2), uint64(0), []byte{0xff}, "ナンセンス 1杯", true, uint32(604800), uint32(144), int64(1<<35-1), uint64(1<<15|1<<63), []byte{1})
	f.Add(uint8(2), uint64(123_456_789), specHash[:], strings.Repeat("é", 320), false, uint32(1), uint32(1<<31), int64(-1), uint64(1<<9), []byte{2})
	f.Add(uint8(0), uint64(21_000_000*100_000_000_000), specHash[:], strings.Repeat("x", MaxDescriptionLen+1), false, uint32(0), uint32(0), int64(1<<35), uint64(0), []byte{3})
	networks := []struct {
		network Network
		params  *chaincfg.Params
	}{{Mainnet, &chaincfg.MainNetParams}, {Testnet, &chaincfg.TestNet3Params}, {Regtest, &chaincfg.RegressionNetParams}}
	f.Fuzz(func(t *testing.T, network uint8, msat uint64, hash []byte, description string, hashed bool,
		expiry, cltv uint32, unix int64, features uint64, keySeed []byte) {
		if msat > math.MaxUint64/10 {
			t.Skip("zpay32 reads the amount in pico-bitcoin into a uint64")
		}
		net := networks[int(network)%len(networks)]
		seed := sha256.Sum256(keySeed) // any seed, never the zero key
		key := secp256k1.PrivKeyFromBytes(seed[:])
		b := Bolt11{
			Network:            net.network,
			AmountMsat:         msat,
			Timestamp:          time.Unix(unix, 0),
			PaymentHash:        [32]byte(append(hash, make([]byte, 32)...)[:32]),
			Description:        description,
			Expiry:             time.Duration(expiry) * time.Second,
			MinFinalCLTVExpiry: uint64(cltv),
		}
		if hashed {
			h := sha256.Sum256([]byte(description))
			b.Description, b.DescriptionHash = "", &h
		}
		for bit := range 64 {
			if features>>bit&1 == 1 {
				b.Features = append(b.Features, bit)
			}
		}
		if features>>FeaturePaymentSecret&3 != 0 { // either bit of the pair asks for a secret
			secret := sha256.Sum256(append([]byte("secret"), hash...))
			b.PaymentSecret = &secret
		}
		pr, err := Encode(b, key)
		valid := unix >= 0 && unix < 1<<35 && len(b.Description) <= MaxDescriptionLen && utf8.ValidString(b.Description)
		if (err == nil) != valid {
			t.Fatalf("Encode error %v, want one: %t", err, !valid)
		}
		if !valid {
			return
		}
		inv, err := zpay32.Decode(pr, net.params)
		if err != nil {
			t.Fatalf("zpay32 decode %s: %v", pr, err)
		}
		checkInvoice(t, inv, b, key)
	})
}

// checkInvoice fails unless zpay32's reading of an invoice is b, field by
// field, signed by key.
func checkInvoice(t *testing.T, inv *zpay32.Invoice, b Bolt11, key *secp256k1.PrivateKey) {
	t.Helper()
	var gotMsat uint64
	if inv.MilliSat != nil {
		gotMsat = uint64(*inv.MilliSat)
	}
	wantExpiry, wantCLTV := b.Expiry, b.MinFinalCLTVExpiry
	if wantExpiry == 0 {
		wantExpiry = zpay32.DefaultInvoiceExpiry // what readers assume when `x` is absent
	}
	if wantCLTV == 0 {
		wantCLTV = zpay32.DefaultAssumedFinalCLTVDelta // likewise `c`
	}
	wantFeatures := map[lnwire.FeatureBit]struct{}{}
	for _, bit := range b.Features {
		wantFeatures[lnwire.FeatureBit(bit)] = struct{}{}
	}
	var gotFeatures map[lnwire.FeatureBit]struct{}
	if inv.Features != nil {
		gotFeatures = inv.Features.Features()
	}
	wantDescription := &b.Description
	if b.DescriptionHash != nil {
		wantDescription = nil
	}
	switch {
	case inv.Net.Bech32HRPSegwit != string(b.Network):
		t.Errorf("network: got %s, want %s", inv.Net.Bech32HRPSegwit, b.Network)
	case gotMsat != b.AmountMsat || (inv.MilliSat == nil) != (b.AmountMsat == 0):
		t.Errorf("amount: got %v msat, want %d", inv.MilliSat, b.AmountMsat)
	case !inv.Timestamp.Equal(b.Timestamp):
		t.Errorf("timestamp: got %v, want %v", inv.Timestamp, b.Timestamp)
	case inv.PaymentHash == nil || *inv.PaymentHash != b.PaymentHash:
		t.Errorf("payment hash: got %x, want %x", inv.PaymentHash, b.PaymentHash)
	case !reflect.DeepEqual(inv.Description, wantDescription):
		t.Errorf("description: got %v, want %v", inv.Description, wantDescription)
	case !reflect.DeepEqual(inv.DescriptionHash, b.DescriptionHash):
		t.Errorf("description hash: got %x, want %x", inv.DescriptionHash, b.DescriptionHash)
	case inv.Expiry() != wantExpiry:
		t.Errorf("expiry: got %v, want %v", inv.Expiry(), wantExpiry)
	case inv.MinFinalCLTVExpiry() != wantCLTV:
		t.Errorf("min final CLTV expiry: got %d, want %d", inv.MinFinalCLTVExpiry(), wantCLTV)
	case inv.PaymentAddr.IsSome() != (b.PaymentSecret != nil) ||
		b.PaymentSecret != nil && inv.PaymentAddr.UnwrapOr([32]byte{}) != *b.PaymentSecret:
		t.Errorf("payment secret: got %v, want %v", inv.PaymentAddr, b.PaymentSecret)
	case !reflect.DeepEqual(gotFeatures, wantFeatures):
		t.Errorf("features: got %v, want %v", gotFeatures, wantFeatures)
	case inv.FallbackAddr != nil || len(inv.RouteHints) > 0 || len(inv.BlindedPaymentPaths) > 0 || len(inv.Metadata) > 0:
		t.Errorf("got fields Encode never writes: %+v", inv)
	// zpay32 recovers the destination from the signature over the invoice,
	// so a signature by another key or over other bytes shows up here.
	case inv.Destination == nil || !inv.Destination.IsEqual(key.PubKey()):
		t.Errorf("signer: got %v, want %x", inv.Destination, key.PubKey().SerializeCompressed())
	}
}
