package webhooks

import (
	"context"
	"encoding/binary"
	"net"
	"net/netip"
	"strings"
	"testing"
)

// fakeResolver answers A and AAAA queries from zone over UDP on loopback, so
// CheckURL's "every resolved address" rule is tested without the internet.
// Names outside zone get NXDOMAIN.
func fakeResolver(t *testing.T, zone map[string][]string) *net.Resolver {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Close() })
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if resp := dnsAnswer(buf[:n], zone); resp != nil {
				_, _ = pc.WriteTo(resp, from)
			}
		}
	}()
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "udp", pc.LocalAddr().String())
		},
	}
}

// dnsAnswer builds the reply to one query (RFC 1035 §4.1), or nil when the
// packet is too short to be one.
func dnsAnswer(q []byte, zone map[string][]string) []byte {
	if len(q) < 12 {
		return nil
	}
	// The question: labels up to a zero byte, then QTYPE and QCLASS.
	end, labels := 12, []string{}
	for end < len(q) && q[end] != 0 {
		l := int(q[end])
		if end+1+l > len(q) {
			return nil
		}
		labels = append(labels, string(q[end+1:end+1+l]))
		end += 1 + l
	}
	end += 5
	if end > len(q) {
		return nil
	}
	qtype := binary.BigEndian.Uint16(q[end-4:])
	name := strings.ToLower(strings.Join(labels, "."))

	var answers [][]byte
	for _, s := range zone[name] {
		a := netip.MustParseAddr(s)
		if (qtype == 1 && a.Is4()) || (qtype == 28 && a.Is6()) {
			answers = append(answers, a.AsSlice())
		}
	}
	resp := append([]byte{}, q[:end]...)
	flags := uint16(0x8580) // response, authoritative, recursion desired and available
	if _, ok := zone[name]; !ok {
		flags |= 3 // NXDOMAIN
	}
	binary.BigEndian.PutUint16(resp[2:], flags|binary.BigEndian.Uint16(q[2:])&0x0100)
	binary.BigEndian.PutUint16(resp[4:], 1)                    // QDCOUNT
	binary.BigEndian.PutUint16(resp[6:], uint16(len(answers))) // ANCOUNT
	binary.BigEndian.PutUint32(resp[8:], 0)                    // NSCOUNT, ARCOUNT
	for _, rdata := range answers {
		rr := []byte{0xc0, 12} // name: pointer to the question's
		rr = binary.BigEndian.AppendUint16(rr, qtype)
		rr = binary.BigEndian.AppendUint16(rr, 1)  // class IN
		rr = binary.BigEndian.AppendUint32(rr, 60) // TTL
		rr = binary.BigEndian.AppendUint16(rr, uint16(len(rdata)))
		resp = append(resp, append(rr, rdata...)...)
	}
	return resp
}
