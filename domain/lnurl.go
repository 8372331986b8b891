package domain

import (
	"errors"
	"net/url"
	"strings"
)

// LNURLMaxLength bounds a bech32 LNURL. LUD-01 lifts BIP-173's 90-character
// limit; 2,000 characters is far more than any service URL needs.
const LNURLMaxLength = 2000

var errLNURL = errors.New("not an LNURL")

// DecodeLNURL decodes a bech32 LNURL (LUD-01: human-readable part "lnurl",
// either case, with a valid checksum) into its URL, which must be https, or
// http to a .onion host, with a host.
func DecodeLNURL(s string) (string, error) {
	hrp, data, err := DecodeBech32(s, LNURLMaxLength)
	if err != nil {
		return "", err
	}
	if hrp != "lnurl" {
		return "", errLNURL
	}
	raw, err := convertBits5to8(data)
	if err != nil {
		return "", err
	}
	u, err := url.Parse(string(raw))
	if err != nil || u.Host == "" || u.User != nil {
		return "", errLNURL
	}
	host := strings.ToLower(u.Hostname())
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && strings.HasSuffix(host, ".onion"):
	default:
		return "", errLNURL
	}
	return string(raw), nil
}

// IsLightningAddress reports whether s is a Lightning address (LUD-16):
// a local part of a-z, 0-9, "-", "_" and "." (lower case only) of at most
// 64 characters, "@", and a domain name of letters, digits and hyphens in
// at least two dot-separated labels (of 1-63 characters, not starting or
// ending with a hyphen), at most 253 characters, in lower case.
func IsLightningAddress(s string) bool {
	local, domain, ok := strings.Cut(s, "@")
	if !ok || local == "" || len(local) > 64 || domain == "" || len(domain) > 253 {
		return false
	}
	for i := 0; i < len(local); i++ {
		c := local[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	labels := strings.Split(domain, ".")
	if len(labels) < 2 {
		return false
	}
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	tld := labels[len(labels)-1]
	return !allDigits(tld) // a dotted IP address is not a domain
}

// lnurl returns s unless it is neither a Lightning address nor a
// bech32 LNURL that decodes to an https URL (contract §5). A Lightning
// address's domain is compared in lower case and stored so.
func (fe *fieldErrors) lnurl(field, s string) string {
	if local, domain, ok := strings.Cut(s, "@"); ok {
		s = local + "@" + strings.ToLower(domain)
		if IsLightningAddress(s) {
			return s
		}
		fe.add(field, "must be a Lightning address name@domain (LUD-16: lower-case a-z, 0-9, '-', '_', '.' before the @)")
		return s
	}
	if _, err := DecodeLNURL(s); err != nil {
		fe.add(field, "must be a Lightning address name@domain or a bech32 LNURL (lnurl1...) with a valid checksum that decodes to an https URL")
	}
	return s
}
