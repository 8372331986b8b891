// Package natsurl shows a NATS_URL to people: ledgerd's start banner and
// ledgerctl's messages name the servers they use, never their credentials.
package natsurl

import (
	"net/url"
	"strings"
)

// Redacted is servers (NATS_URL: comma-separated server URLs) with each
// server's credentials (a token or user name, a password) replaced by
// "redacted": whoever reads the logs must not be able to publish on the
// stream.
func Redacted(servers string) string {
	parts := strings.Split(servers, ",")
	for i, part := range parts {
		u, err := url.Parse(strings.TrimSpace(part))
		if err != nil {
			parts[i] = "(unparsable server URL)"
			continue
		}
		if u.User != nil {
			u.User = url.User("redacted")
		}
		parts[i] = u.String()
	}
	return strings.Join(parts, ",")
}
