package ethereum

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// AccountDepth is the depth of the extended public key LEDGER_USDT_XPUB
// names: an account, m/44'/60'/account'. A payment's address is that
// account's external chain at the payment's index: m/44'/60'/account'/0/index,
// the path Ethereum wallets derive their receiving addresses on, so the
// custody system holding the seed finds each key where it expects it.
const AccountDepth = 3

// XPubKey derives deposit addresses from an account's extended public key.
// It holds no private key: it refuses one.
type XPubKey struct {
	account *hdkeychain.ExtendedKey // m/44'/60'/account'
}

// externalChain is the BIP-44 chain of receiving addresses.
const externalChain = 0

// ParseXPub reads an account's extended public key (xpub...).
func ParseXPub(s string) (XPubKey, error) {
	k, err := hdkeychain.NewKeyFromString(strings.TrimSpace(s))
	if err != nil {
		return XPubKey{}, fmt.Errorf("not an extended public key: %w", err)
	}
	if k.IsPrivate() {
		return XPubKey{}, errors.New("an extended private key: give the account's extended public key (xpub), never a private one")
	}
	if k.Depth() != AccountDepth {
		return XPubKey{}, fmt.Errorf("a key at depth %d: give the account's key, m/44'/60'/0' (depth %d)", k.Depth(), AccountDepth)
	}
	return XPubKey{account: k}, nil
}

// Address returns the checksummed address at index on the external chain.
func (x XPubKey) Address(index uint32) (string, error) {
	if index >= hdkeychain.HardenedKeyStart {
		return "", fmt.Errorf("index %d is past the last public child", index)
	}
	child, err := x.child(externalChain, index)
	if err != nil {
		// One index in 2^127 has no key; its payment answers 503 and a
		// retry takes the next index.
		return "", fmt.Errorf("index %d: %w", index, err)
	}
	pub, err := child.ECPubKey()
	if err != nil {
		return "", err
	}
	return ChecksumAddress(AddressFromPublicKey(pub)), nil
}

// child is the public key at account/chain/index.
func (x XPubKey) child(chain, index uint32) (*hdkeychain.ExtendedKey, error) {
	k, err := x.account.Derive(chain)
	if err != nil {
		return nil, err
	}
	return k.Derive(index)
}

// XPubDeposits gives each payment the address at its index, a sequence
// stored with the payment's id (usdt_addresses): the same payment gets the
// same address from every process, and no two payments share one.
type XPubDeposits struct {
	pool *pgxpool.Pool
	key  XPubKey
}

// NewXPubDeposits returns deposits derived from key, recorded in pool.
func NewXPubDeposits(pool *pgxpool.Pool, key XPubKey) *XPubDeposits {
	return &XPubDeposits{pool: pool, key: key}
}

// DepositAddress returns the payment's address, taking the next index on
// its first call.
func (d *XPubDeposits) DepositAddress(ctx context.Context, tenantID, paymentID uuid.UUID) (string, error) {
	var idx int64
	err := d.pool.QueryRow(ctx, `SELECT idx FROM usdt_addresses WHERE payment_id = $1`, paymentID).Scan(&idx)
	if err == nil {
		return d.key.Address(uint32(idx))
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return "", fmt.Errorf("usdt deposit address: %w", err)
	}
	// An index taken by a call that then fails is skipped: a gap in the
	// sequence costs nothing.
	if err := d.pool.QueryRow(ctx, `SELECT nextval('usdt_address_index')`).Scan(&idx); err != nil {
		return "", fmt.Errorf("usdt deposit address: next index: %w", err)
	}
	addr, err := d.key.Address(uint32(idx))
	if err != nil {
		return "", err
	}
	tag, err := d.pool.Exec(ctx, `INSERT INTO usdt_addresses (payment_id, tenant_id, idx, address) VALUES ($1, $2, $3, $4)
		ON CONFLICT (payment_id) DO NOTHING`, paymentID, tenantID, idx, strings.ToLower(addr))
	if err != nil {
		return "", fmt.Errorf("usdt deposit address: record: %w", err)
	}
	if tag.RowsAffected() == 0 { // another call for the payment got there first
		return d.DepositAddress(ctx, tenantID, paymentID)
	}
	return addr, nil
}
