package clientkey

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestOf: a client is its peer's address, IPv4 however written, IPv6 by
// its /64.
func TestOf(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ remote, want string }{
		{"192.0.2.1:40000", "192.0.2.1"},
		{"[::ffff:192.0.2.1]:40000", "192.0.2.1"},
		{"[2001:db8:1:2:aaaa::1]:40000", "2001:db8:1:2::/64"},
		{"[2001:db8:1:2:bbbb::7%eth0]:40000", "2001:db8:1:2::/64"},
		{"[2001:db8:1:3::1]:40000", "2001:db8:1:3::/64"},
		{"@", "@"}, // not an address (a Unix socket's peer): itself
	} {
		r := httptest.NewRequest(http.MethodPost, "/token", nil)
		r.RemoteAddr = c.remote
		if got := Of(r); got != c.want {
			t.Errorf("Of(%q) = %q, want %q", c.remote, got, c.want)
		}
	}
}
