// Package clientkey says which client a request comes from, for the limits
// kept per client: POST /token's rate limit and the dashboard's sign-in
// lock-out.
package clientkey

import (
	"net"
	"net/http"
	"net/netip"
)

// Of returns the client of r: the connection's peer (X-Forwarded-For is
// not trusted: behind a proxy every client is the proxy), IPv4 however
// written, an IPv6 peer by its /64, the least a host is usually given, so
// one host cannot pass for many. A peer that is no IP address (a Unix
// socket's) is itself.
func Of(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	addr = addr.Unmap().WithZone("")
	if addr.Is6() {
		prefix, _ := addr.Prefix(64)
		return prefix.String()
	}
	return addr.String()
}
