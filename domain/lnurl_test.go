package domain

import (
	"strings"
	"testing"
)

func TestDecodeLNURL(t *testing.T) {
	t.Parallel()
	// LUD-01's example.
	const lud01 = "LNURL1DP68GURN8GHJ7UM9WFMXJCM99E3K7MF0V9CXJ0M385EKVCENXC6R2C35XVUKXEFCV5MKVV34X5EKZD3EV56NYD3HXQURZEPEXEJXXEPNXSCRVWFNV9NXZCN9XQ6XYEFHVGCXXCMYXYMNSERXFQ5FNS"
	const lud01URL = "https://service.com/api?q=3fc3645b439ce8e7f2553a69e5267081d96dcd340693afabe04be7b0ccd178df"
	for _, s := range []string{lud01, strings.ToLower(lud01)} {
		got, err := DecodeLNURL(s)
		if err != nil || got != lud01URL {
			t.Errorf("DecodeLNURL(%.20s...): got %q, %v, want %q", s, got, err, lud01URL)
		}
	}
	for _, tt := range []struct {
		url string
		ok  bool
	}{
		{"https://example.com/.well-known/lnurlp/alice", true},
		{"http://abcdefghij234567.onion/lnurlp/x", true},
		{"http://example.com/lnurlp/alice", false},
		{"ftp://example.com/x", false},
		{"https:///nohost", false},
		{"https://user:pw@example.com/x", false},
		{"not a url", false},
	} {
		s := encodeBech32("lnurl", []byte(tt.url))
		got, err := DecodeLNURL(s)
		if tt.ok && (err != nil || got != tt.url) {
			t.Errorf("DecodeLNURL(%s = %s): got %q, %v, want it", s, tt.url, got, err)
		}
		if !tt.ok && err == nil {
			t.Errorf("DecodeLNURL(%s = %s): got %q, want an error", s, tt.url, got)
		}
	}
	bad := []string{
		encodeBech32("lnbc", []byte("https://example.com/x")), // wrong human-readable part
		"",
		"lnurl1",
		lud01[:len(lud01)-1] + "T", // checksum broken
		"LNURL1dp68gurn8ghj7um9wfmxjcm99e3k7mf0v9cxj0m385ekvcenxc6r2c35xvukxefcv5mkvv34x5ekzd3ev56nyd3hxqurzepexejxxepnxscrvwfnv9nxzcn9xq6xyefhvgcxxcmyxymnserxfq5fns", // mixed case
	}
	for _, s := range bad {
		if got, err := DecodeLNURL(s); err == nil {
			t.Errorf("DecodeLNURL(%q): got %q, want an error", s, got)
		}
	}
}

func TestIsLightningAddress(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		s  string
		ok bool
	}{
		{"alice@example.com", true},
		{"a.b-c_d9@pay.example.co.za", true},
		{"satoshi@walletofsatoshi.com", true},
		{"0@x-y.io", true},
		{"Alice@example.com", false},  // LUD-16: lower case only
		{"alice@Example.com", false},  // stored lower case; IsLightningAddress sees it so
		{"al ice@example.com", false}, // space
		{"al+ice@example.com", false},
		{"alice@", false},
		{"@example.com", false},
		{"alice", false},
		{"alice@localhost", false},
		{"alice@-example.com", false},
		{"alice@example-.com", false},
		{"alice@exa_mple.com", false},
		{"alice@example..com", false},
		{"alice@192.168.0.1", false},
		{"alice@example.com@x.com", false},
		{strings.Repeat("a", 65) + "@example.com", false},
		{"alice@" + strings.Repeat("a", 64) + ".com", false},
	} {
		if got := IsLightningAddress(tt.s); got != tt.ok {
			t.Errorf("IsLightningAddress(%q): got %v, want %v", tt.s, got, tt.ok)
		}
	}
}

// FuzzDecodeLNURL: no input panics, and whatever decodes is an https URL
// or an http one to an onion host.
func FuzzDecodeLNURL(f *testing.F) {
	f.Add("LNURL1DP68GURN8GHJ7UM9WFMXJCM99E3K7MF0V9CXJ0M385EKVCENXC6R2C35XVUKXEFCV5MKVV34X5EKZD3EV56NYD3HXQURZEPEXEJXXEPNXSCRVWFNV9NXZCN9XQ6XYEFHVGCXXCMYXYMNSERXFQ5FNS")
	f.Add(encodeBech32("lnurl", []byte("http://x.onion/")))
	f.Add("a12uel5l")
	f.Add("lnurl1qqqqqq")
	f.Fuzz(func(t *testing.T, s string) {
		u, err := DecodeLNURL(s)
		if err != nil {
			return
		}
		if !strings.HasPrefix(u, "https://") && !strings.HasPrefix(u, "http://") {
			t.Fatalf("DecodeLNURL(%q): got %q, want an https or onion URL", s, u)
		}
	})
}
