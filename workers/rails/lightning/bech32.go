package lightning

import "github.com/ledger/ledger/domain"

// bech32Encode writes hrp and the 5-bit words with their checksum, as
// BOLT #11 and LNURLs use it (domain owns both halves of BIP-173).
func bech32Encode(hrp string, words []byte) string { return domain.EncodeBech32(hrp, words) }
