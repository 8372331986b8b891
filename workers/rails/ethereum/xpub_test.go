package ethereum

import (
	"context"
	"crypto/pbkdf2"
	"crypto/sha512"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sync/errgroup"

	"github.com/ledger/ledger/eventstore"
	"github.com/ledger/ledger/eventstore/testenv"
)

// BIP-32's test vector 1: m/0'/1/2' is an account-depth key, and public
// derivation from it must reach the published m/0'/1/2'/2/1000000000.
const (
	bip32Vector1Depth3 = "xpub6D4BDPcP2GT577Vvch3R8wDkScZWzQzMMUm3PWbmWvVJrZwQY4VUNgqFJPMM3No2dFDFGTsxxpG5uJh7n7epu4trkrX7x7DogT5Uv6fcLW5"
	bip32Vector1Depth5 = "xpub6H1LXWLaKsWFhvm6RVpEL9P4KfRZSW7abD2ttkWP3SSQvnyA8FSVqNTEcYFgJS2UaFcxupHiYkro49S8yGasTvXEYBVPamhGW6cFJodrTHy"
)

func TestXPubFollowsBIP32Vector1(t *testing.T) {
	t.Parallel()
	x, err := ParseXPub(bip32Vector1Depth3)
	if err != nil {
		t.Fatal(err)
	}
	k, err := x.child(2, 1000000000)
	if err != nil {
		t.Fatal(err)
	}
	if got := k.String(); got != bip32Vector1Depth5 {
		t.Errorf("m/0'/1/2'/2/1000000000: got %s, want %s", got, bip32Vector1Depth5)
	}
}

// The BIP-39 mnemonic "abandon ... about" (no passphrase): wallets such as
// MetaMask and ethers.js derive these receiving addresses from it on
// m/44'/60'/0'/0/i.
func TestXPubAddressesMatchWallets(t *testing.T) {
	t.Parallel()
	mnemonic := strings.Repeat("abandon ", 11) + "about"
	seed, err := pbkdf2.Key(sha512.New, mnemonic, []byte("mnemonic"), 2048, 64)
	if err != nil {
		t.Fatal(err)
	}
	k, err := hdkeychain.NewMaster(seed, &chaincfg.MainNetParams)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []uint32{44, 60, 0} {
		if k, err = k.Derive(hdkeychain.HardenedKeyStart + i); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ParseXPub(k.String()); err == nil {
		t.Fatal("ParseXPub took an extended private key")
	}
	pub, err := k.Neuter()
	if err != nil {
		t.Fatal(err)
	}
	x, err := ParseXPub(pub.String())
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"0x9858EfFD232B4033E47d90003D41EC34EcaEda94", "0x6Fac4D18c912343BF86fa7049364Dd4E424Ab9C0"} {
		if got, err := x.Address(uint32(i)); err != nil || got != want {
			t.Errorf("m/44'/60'/0'/0/%d: got %s, %v; want %s", i, got, err, want)
		}
	}
}

func TestParseXPubRefuses(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		"",
		"xpub",
		bip32Vector1Depth5, // not an account's key
		"xprv9z4pot5VBttmtdRTWfWQmoH1taj2axGVzFqSb8C9xaxKymcFzXBDptWmT7FwuEzG3ryjH4ktypQSAewRiNMjANTtpgP4mLTj34bhnZX7UiM", // private
	} {
		if _, err := ParseXPub(s); err == nil {
			t.Errorf("ParseXPub(%.20q) took it", s)
		}
	}
}

// TestXPubDepositsStoreTheIndex: a payment's address is taken once, however
// many processes ask at once and however often; two payments never share
// one, and each is the xpub's address at the stored index.
func TestXPubDepositsStoreTheIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, testenv.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := eventstore.Migrate(ctx, pool, eventstore.MigrationSet{Component: "usdt", FS: Migrations}); err != nil {
		t.Fatal(err)
	}
	key, err := ParseXPub(bip32Vector1Depth3)
	if err != nil {
		t.Fatal(err)
	}
	tenant, payments := uuid.New(), []uuid.UUID{uuid.New(), uuid.New()}
	got := make([][]string, len(payments))
	var g errgroup.Group
	for i, id := range payments {
		got[i] = make([]string, 4)
		for j := range got[i] {
			// A process of its own for each call: nothing shared but Postgres.
			d := NewXPubDeposits(pool, key)
			g.Go(func() (err error) {
				got[i][j], err = d.DepositAddress(ctx, tenant, id)
				return err
			})
		}
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	for i, id := range payments {
		var idx int64
		if err := pool.QueryRow(ctx, `SELECT idx FROM usdt_addresses WHERE payment_id = $1`, id).Scan(&idx); err != nil {
			t.Fatal(err)
		}
		want, err := key.Address(uint32(idx))
		if err != nil {
			t.Fatal(err)
		}
		for _, addr := range got[i] {
			if addr != want {
				t.Errorf("payment %d: got %v, want %s (index %d) every time", i, got[i], want, idx)
			}
		}
	}
	if got[0][0] == got[1][0] {
		t.Errorf("two payments share %s", got[0][0])
	}
}
