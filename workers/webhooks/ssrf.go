package webhooks

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"syscall"
	"time"
)

// ErrNonPublicAddress is wrapped by every refusal to reach an address that is
// not on the public internet: a webhook URL must not reach the ledger's own
// network (OWASP API7, SSRF).
var ErrNonPublicAddress = errors.New("webhooks: refusing non-public address")

// lookupTimeout bounds CheckURL, which has no context of its own, so a slow
// DNS server cannot hold a payment-creation request.
const lookupTimeout = 5 * time.Second

// reserved are the non-public IPv4 and IPv6 ranges netip's predicates miss.
var reserved = []struct {
	prefix netip.Prefix
	what   string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "\"this network\" (reaches the host itself on Linux)"},
	{netip.MustParsePrefix("100.64.0.0/10"), "carrier-grade NAT (RFC 6598)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignments"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking (RFC 2544)"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved or broadcast"},
	{netip.MustParsePrefix("fec0::/10"), "site-local"},
	// Local-use IPv4/IPv6 translation (RFC 8215): a network's own NAT64
	// prefix, whose gateway may reach any IPv4 address behind it, private
	// ones included, whatever the embedded address looks like.
	{netip.MustParsePrefix("64:ff9b:1::/48"), "local-use IPv4/IPv6 translation (RFC 8215)"},
	{netip.MustParsePrefix("100::/64"), "discard-only (RFC 6666)"},
	{netip.MustParsePrefix("2001:db8::/32"), "documentation (RFC 3849)"},
}

// embedding lists the IPv6 prefixes that carry an IPv4 address, at byte
// at of the address, with every bit flipped when flip; each embedded
// address is judged by the rules for IPv4, since a kernel, tunnel or
// gateway may deliver the traffic to it. IPv4-mapped ::ffff:0:0/96 is not
// here: nonPublic unmaps it first, being the IPv4 address itself.
//
// IPv4-compatible (RFC 4291, deprecated): ::7f00:1 is 127.0.0.1 to stacks
// that still read it so. IPv4-translated (RFC 2765): ::ffff:0:a00:1 is
// 10.0.0.1 behind a SIIT translator. NAT64's well-known prefix (RFC 6052):
// 64:ff9b::a00:1 reaches 10.0.0.1 through a NAT64 gateway. 6to4 (RFC 3056):
// 2002:a00:1:: is the site of 10.0.0.1, reached through a 6to4 relay or the
// host's own 6to4 interface. Teredo (RFC 4380): 2001:0:S:S:…:C:C names its
// server S and, bits flipped, its client C, and both are reached.
var embedding = []struct {
	prefix netip.Prefix
	at     int
	flip   bool
	what   string
}{
	{netip.MustParsePrefix("::/96"), 12, false, "IPv4-compatible form"},
	{netip.MustParsePrefix("::ffff:0:0:0/96"), 12, false, "IPv4-translated form"},
	{netip.MustParsePrefix("64:ff9b::/96"), 12, false, "NAT64"},
	{netip.MustParsePrefix("2002::/16"), 2, false, "6to4"},
	{netip.MustParsePrefix("2001::/32"), 4, false, "Teredo server"},
	{netip.MustParsePrefix("2001::/32"), 12, true, "Teredo client"},
}

// embedded returns the IPv4 address a carries at byte at, bits flipped if flip.
func embedded(a netip.Addr, at int, flip bool) netip.Addr {
	b := a.As16()
	v4 := [4]byte(b[at : at+4])
	if flip {
		for i := range v4 {
			v4[i] ^= 0xff
		}
	}
	return netip.AddrFrom4(v4)
}

// nonPublic says why a is not a public unicast address, or "" when it is.
// IPv4-mapped IPv6 (::ffff:10.0.0.1) is judged as the IPv4 address it is, which
// is also where the kernel sends it.
func nonPublic(a netip.Addr) string {
	a = a.Unmap()
	switch {
	case !a.IsValid():
		return "not an IP address"
	case a.IsUnspecified():
		return "unspecified"
	case a.IsLoopback():
		return "loopback"
	case a.IsPrivate(): // 10/8, 172.16/12, 192.168/16, fc00::/7 unique-local
		return "private"
	case a.IsLinkLocalUnicast(): // 169.254/16 (cloud metadata), fe80::/10
		return "link-local"
	case a.IsMulticast():
		return "multicast"
	}
	for _, r := range reserved {
		if r.prefix.Contains(a) {
			return r.what
		}
	}
	for _, e := range embedding {
		if e.prefix.Contains(a) {
			if why := nonPublic(embedded(a, e.at, e.flip)); why != "" {
				return e.what + " of a " + why + " address"
			}
		}
	}
	return ""
}

func refuse(a netip.Addr, why string) error {
	return fmt.Errorf("%w: %s is %s", ErrNonPublicAddress, a, why)
}

// DialPublicOnly is a net.Dialer Control for requests to user-given URLs
// (webhooks, and the LNURL-pay services of Lightning payouts). It runs after
// DNS resolution, on the very address the socket is about to connect to, so
// a name that resolved to a public address at creation and to 127.0.0.1 now
// (DNS rebinding) is still refused, before any packet.
func DialPublicOnly(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: cannot parse dial address %q", ErrNonPublicAddress, address)
	}
	if why := nonPublic(ap.Addr()); why != "" {
		return refuse(ap.Addr(), why)
	}
	return nil
}

// parseURL checks what a webhook URL must be before any lookup: absolute, with
// a host, and https unless allowPrivate (sandbox), where plain http is allowed
// for local receivers.
func parseURL(rawURL string, allowPrivate bool) (*url.URL, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("webhooks: invalid URL: %w", err)
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && allowPrivate:
	case allowPrivate:
		return nil, fmt.Errorf("webhooks: URL scheme must be http or https, not %q", u.Scheme)
	default:
		return nil, fmt.Errorf("webhooks: URL must be https, not %q", u.Scheme)
	}
	if u.Hostname() == "" {
		return nil, errors.New("webhooks: URL has no host")
	}
	return u, nil
}

// CheckURL is the check made when a webhookUrl is stored: https (unless
// allowPrivate), a host that resolves, and, unless allowPrivate, every address
// it resolves to public; one private address among public ones is enough for a
// later dial to land inside. IP literals are judged without a lookup. A nil
// resolver means net.DefaultResolver. Delivery checks again at connect time.
func CheckURL(rawURL string, allowPrivate bool, resolver *net.Resolver) error {
	u, err := parseURL(rawURL, allowPrivate)
	if err != nil {
		return err
	}
	host := u.Hostname()
	if a, err := netip.ParseAddr(host); err == nil {
		if why := nonPublic(a); why != "" && !allowPrivate {
			return refuse(a, why)
		}
		return nil
	}
	if resolver == nil {
		resolver = net.DefaultResolver
	}
	ctx, cancel := context.WithTimeout(context.Background(), lookupTimeout)
	defer cancel()
	// The errors go back to the partner (POST /payments answers 400 with
	// them), so they say nothing of the service's own network: neither the
	// resolver's error (which names its address) nor the address a name
	// resolved to, nor, outside sandbox mode, whether it resolved at all
	// (the resolver's search domains would answer for internal names), or
	// the check would be a lookup service for internal names.
	addrs, err := resolver.LookupNetIP(ctx, "ip", host)
	if err != nil && allowPrivate {
		return fmt.Errorf("webhooks: cannot resolve %q", host)
	}
	for _, a := range addrs {
		if nonPublic(a) != "" && !allowPrivate {
			err = ErrNonPublicAddress
		}
	}
	if err != nil {
		return fmt.Errorf("%w: %s does not resolve to public addresses only", ErrNonPublicAddress, host)
	}
	return nil
}
