package webhooks

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func TestNonPublic(t *testing.T) {
	for _, tc := range []struct {
		addr   string
		public bool
	}{
		{"8.8.8.8", true},
		{"1.1.1.1", true},
		{"2001:4860:4860::8888", true},
		{"100.63.255.255", true},
		{"100.128.0.0", true},
		{"64:ff9b::808:808", true}, // NAT64 of 8.8.8.8
		{"::ffff:8.8.8.8", true},   // reaches 8.8.8.8, as the kernel sends it
		{"127.0.0.1", false},
		{"127.255.255.254", false},
		{"::1", false},
		{"0.0.0.0", false},
		{"0.1.2.3", false},
		{"::", false},
		{"10.0.0.1", false},
		{"172.16.0.1", false},
		{"192.168.1.1", false},
		{"169.254.169.254", false}, // cloud metadata
		{"fe80::1", false},
		{"fe80::1%eth0", false},
		{"fc00::1", false},
		{"fd12:3456::1", false},
		{"fec0::1", false},
		{"100.64.0.1", false},
		{"100.127.255.255", false},
		{"192.0.0.170", false},
		{"198.18.0.1", false},
		{"224.0.0.1", false},
		{"239.255.255.250", false},
		{"255.255.255.255", false},
		{"ff02::1", false},
		{"::ffff:127.0.0.1", false},
		{"::ffff:10.0.0.1", false},
		{"::ffff:169.254.169.254", false},
		{"64:ff9b::a00:1", false},     // NAT64 of 10.0.0.1
		{"64:ff9b::7f00:1", false},    // NAT64 of 127.0.0.1
		{"64:ff9b::a9fe:a9fe", false}, // NAT64 of 169.254.169.254
		{"64:ff9b:1::808:808", false}, // local-use NAT64 (RFC 8215), even of 8.8.8.8
		{"64:ff9b:1:ffff::a00:1", false},
		{"100::1", false},              // discard-only
		{"2001:db8::1", false},         // documentation
		{"2002:808:808::1", true},      // 6to4 of 8.8.8.8
		{"2002:a00:1::1", false},       // 6to4 of 10.0.0.1
		{"2002:7f00:1::", false},       // 6to4 of 127.0.0.1
		{"2002:a9fe:a9fe:1::1", false}, // 6to4 of 169.254.169.254
		// Every IPv6 form that carries an IPv4 address is judged by it.
		{"::808:808", true},                           // IPv4-compatible 8.8.8.8
		{"::127.0.0.1", false},                        // IPv4-compatible loopback
		{"::a9fe:a9fe", false},                        // IPv4-compatible 169.254.169.254
		{"::10.0.0.1", false},                         // IPv4-compatible private
		{"::0.0.0.2", false},                          // IPv4-compatible "this network"
		{"::ffff:0:808:808", true},                    // IPv4-translated (RFC 2765) 8.8.8.8
		{"::ffff:0:7f00:1", false},                    // IPv4-translated loopback
		{"::ffff:0:a9fe:a9fe", false},                 // IPv4-translated 169.254.169.254
		{"::ffff:0:c0a8:101", false},                  // IPv4-translated 192.168.1.1
		{"64:ff9b::c0a8:101", false},                  // NAT64 of 192.168.1.1
		{"64:ff9b::6440:1", false},                    // NAT64 of carrier-grade NAT
		{"2002:6440:1::1", false},                     // 6to4 of carrier-grade NAT
		{"2002:0:0::1", false},                        // 6to4 of 0.0.0.0
		{"2001:0:808:808:0:0:f7f7:f7f7", true},        // Teredo, server 8.8.8.8, client 8.8.8.8
		{"2001:0:808:808:0:0:80ff:fffe", false},       // Teredo client 127.0.0.1 (bits inverted)
		{"2001:0:808:808:0:0:5601:5656", false},       // Teredo client 169.254.169.254
		{"2001:0:808:808:8000:ffff:f5ff:fffe", false}, // Teredo client 10.0.0.1
		{"2001:0:7f00:1:0:0:f7f7:f7f7", false},        // Teredo server 127.0.0.1
		{"2001:0:a9fe:a9fe:0:0:f7f7:f7f7", false},     // Teredo server 169.254.169.254
	} {
		if why := nonPublic(netip.MustParseAddr(tc.addr)); (why == "") != tc.public {
			t.Errorf("nonPublic(%s) = %q, want public=%v", tc.addr, why, tc.public)
		}
	}
}

func TestDialControl(t *testing.T) {
	for _, tc := range []struct {
		address string
		ok      bool
	}{
		{"93.184.216.34:443", true},
		{"[2606:2800:220:1:248:1893:25c8:1946]:443", true},
		{"127.0.0.1:443", false},
		{"[::1]:443", false},
		{"[fe80::1%eth0]:443", false},
		{"169.254.169.254:80", false},
		{"[::127.0.0.1]:443", false},
		{"[::a9fe:a9fe]:80", false},
		{"[::ffff:0:7f00:1]:443", false},
		{"[2001:0:808:808::80ff:fffe]:443", false},
		{"not-an-address", false},
	} {
		err := DialPublicOnly("tcp", tc.address, nil)
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrNonPublicAddress)) {
			t.Errorf("DialPublicOnly(%s) = %v, want ok=%v", tc.address, err, tc.ok)
		}
	}
}

func TestCheckURL(t *testing.T) {
	resolver := fakeResolver(t, map[string][]string{
		"public.example":    {"93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"},
		"v4only.example":    {"93.184.216.34"},
		"loopback.example":  {"127.0.0.1"},
		"mixed.example":     {"93.184.216.34", "10.0.0.7"}, // one bad address is enough
		"v6private.example": {"93.184.216.34", "fd00::1"},
		"metadata.example":  {"169.254.169.254"},
		"mapped.example":    {"::ffff:127.0.0.1"},
	})
	for _, tc := range []struct {
		url          string
		allowPrivate bool
		want         error // nil: accepted; ErrNonPublicAddress; or errAny
	}{
		{"https://public.example/hooks", false, nil},
		{"https://v4only.example:8443/hooks?x=1", false, nil},
		{"https://93.184.216.34/hooks", false, nil},
		{"https://[2606:2800:220:1:248:1893:25c8:1946]/hooks", false, nil},
		{"http://public.example/hooks", false, errAny}, // https required outside sandbox
		{"http://public.example/hooks", true, nil},
		{"ftp://public.example/hooks", true, errAny},
		{"https:///hooks", false, errAny},
		{"/hooks", true, errAny},
		{"https://exa mple.com/", false, errAny},
		{"https://nxdomain.example/", false, errAny},
		{"https://nxdomain.example/", true, errAny}, // must resolve even in sandbox
		{"https://loopback.example/", false, ErrNonPublicAddress},
		{"https://loopback.example/", true, nil},
		{"https://mixed.example/", false, ErrNonPublicAddress},
		{"https://v6private.example/", false, ErrNonPublicAddress},
		{"https://metadata.example/latest/meta-data/", false, ErrNonPublicAddress},
		{"https://mapped.example/", false, ErrNonPublicAddress},
		{"https://localhost/", false, ErrNonPublicAddress}, // from /etc/hosts
		{"https://127.0.0.1/", false, ErrNonPublicAddress},
		{"https://127.0.0.1/", true, nil},
		{"http://127.0.0.1:8080/", true, nil},
		{"https://[::1]/", false, ErrNonPublicAddress},
		{"https://10.1.2.3/", false, ErrNonPublicAddress},
		{"https://172.31.0.1/", false, ErrNonPublicAddress},
		{"https://192.168.0.10/", false, ErrNonPublicAddress},
		{"https://169.254.169.254/", false, ErrNonPublicAddress},
		{"https://100.64.0.1/", false, ErrNonPublicAddress},
		{"https://0.0.0.0/", false, ErrNonPublicAddress},
		{"https://[::]/", false, ErrNonPublicAddress},
		{"https://[fe80::1%25eth0]/", false, ErrNonPublicAddress},
		{"https://[fd00::1]/", false, ErrNonPublicAddress},
		{"https://[::ffff:10.0.0.1]/", false, ErrNonPublicAddress},
		{"https://[::ffff:7f00:1]/", false, ErrNonPublicAddress},
		{"https://224.0.0.1/", false, ErrNonPublicAddress},
		{"https://[::127.0.0.1]/", false, ErrNonPublicAddress},
		{"https://[::a9fe:a9fe]/", false, ErrNonPublicAddress},
		{"https://[::ffff:0:7f00:1]/", false, ErrNonPublicAddress},
		{"https://[64:ff9b::a9fe:a9fe]/", false, ErrNonPublicAddress},
		{"https://[2002:a9fe:a9fe::1]/", false, ErrNonPublicAddress},
		{"https://[2001:0:808:808::80ff:fffe]/", false, ErrNonPublicAddress},
	} {
		err := CheckURL(tc.url, tc.allowPrivate, resolver)
		switch {
		case tc.want == nil && err != nil:
			t.Errorf("CheckURL(%q, %v) = %v, want nil", tc.url, tc.allowPrivate, err)
		case tc.want == errAny && err == nil:
			t.Errorf("CheckURL(%q, %v) = nil, want an error", tc.url, tc.allowPrivate)
		case tc.want == ErrNonPublicAddress && !errors.Is(err, ErrNonPublicAddress):
			t.Errorf("CheckURL(%q, %v) = %v, want %v", tc.url, tc.allowPrivate, err, ErrNonPublicAddress)
		}
		// Outside sandbox mode a name that does not resolve is refused in
		// the same words as one that resolves inside the service's network:
		// the answer must not tell which internal names exist.
		if !tc.allowPrivate && strings.HasPrefix(tc.url, "https://nxdomain.example/") {
			internal := CheckURL("https://loopback.example/", false, resolver)
			if err == nil || internal == nil ||
				strings.ReplaceAll(err.Error(), "nxdomain", "NAME") != strings.ReplaceAll(internal.Error(), "loopback", "NAME") {
				t.Errorf("CheckURL(%q) = %v; loopback.example gets %v: want the same words", tc.url, err, internal)
			}
		}
		// A name's refusal goes back to the partner: it must not say what
		// the name resolves to inside the service's network.
		if err != nil && strings.Contains(tc.url, ".example/") {
			for _, internal := range []string{"127.0.0.1", "10.0.0.7", "fd00::1", "169.254.169.254"} {
				if strings.Contains(err.Error(), internal) {
					t.Errorf("CheckURL(%q) = %v, which names the address %s", tc.url, err, internal)
				}
			}
		}
	}
}
