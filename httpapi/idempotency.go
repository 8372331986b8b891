package httpapi

import (
	"bytes"
	"context"
	"net/http"
	"strings"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore"
)

// maxIdempotencyKey is the longest Idempotency-Key accepted (IETF draft, Stripe).
const maxIdempotencyKey = 255

// idempotent runs a POST that carries an Idempotency-Key exactly once per key
// and caller: a retry with the same body gets the first response again, with
// Idempotent-Replayed: true (contract §1).
func (s *Server) idempotent(next http.Handler) http.Handler {
	return s.route(func(w http.ResponseWriter, r *http.Request) error {
		key := r.Header.Get("Idempotency-Key")
		if r.Method != http.MethodPost || len(r.Header.Values("Idempotency-Key")) == 0 {
			next.ServeHTTP(w, r)
			return nil
		}
		// An empty key is refused, not taken for no key: the client meant
		// to make the request safe to retry (a script whose key generator
		// failed sends one), and running it unprotected would let that
		// retry create a second payment.
		if len(r.Header.Values("Idempotency-Key")) > 1 {
			// Which one would the partner's retry send? Neither is taken.
			return domain.Invalidf("Idempotency-Key", "must be sent once")
		}
		if key == "" || len(key) > maxIdempotencyKey || !printableASCII(key) {
			return domain.Invalidf("Idempotency-Key", "must be 1 to %d printable ASCII characters", maxIdempotencyKey)
		}
		c, _ := callerFrom(r.Context())
		scope := c.TenantID.String()
		if c.Kind == KindUser {
			scope += "/" + c.UserID.String()
		}
		// The route's limit first: a body over it is refused without being
		// held, and without using the key.
		hash := newRequestHash(r)
		body, err := s.holdBody(r, routeBodyLimit(r), hash)
		if err != nil {
			return err
		}
		defer body.release()

		var rec *bufferedResponse
		resp, replayed, err := s.idempotency.Do(r.Context(), scope, key, hash.Sum(),
			func(ctx context.Context) eventstore.Response {
				rec = newBufferedResponse()
				req := r.Clone(ctx)
				req.Body = body.reader()
				next.ServeHTTP(rec, req)
				return eventstore.Response{Status: rec.status, ContentType: rec.header.Get("Content-Type"), Body: rec.body.Bytes(),
					// An answer that asks to be retried (Retry-After: a 503, a
					// lost race) is not the request's outcome: the retry with
					// this key must run it again, not replay it for 24 hours.
					Final: rec.header.Get("Retry-After") == "",
					// What no cache may keep (a token's answer, RFC 6749
					// §5.1) is what no reader of the table may either.
					Secret: strings.Contains(rec.header.Get("Cache-Control"), "no-store")}
			})
		if err != nil {
			return err
		}
		if replayed {
			w.Header().Set("Idempotent-Replayed", "true")
			// Only the body is recorded; a replay of a token response
			// (POST /users/token) must still be kept by no cache (RFC 6749
			// §5.1), and no replay is worth caching.
			w.Header().Set("Cache-Control", "no-store")
			w.Header().Set("Pragma", "no-cache")
		} else {
			for k, v := range rec.header {
				w.Header()[k] = v
			}
		}
		if resp.ContentType != "" {
			w.Header().Set("Content-Type", resp.ContentType)
		}
		w.WriteHeader(resp.Status)
		w.Write(resp.Body)
		return nil
	})
}

// printableASCII reports whether s is an sf-string's characters (RFC 8941),
// which is what the IETF draft makes a key. Other bytes would also not be
// valid Postgres text.
func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// bufferedResponse holds a response until its effect has committed, so
// the caller never sees a response whose effect was dropped.
type bufferedResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func newBufferedResponse() *bufferedResponse { return &bufferedResponse{header: http.Header{}} }

func (b *bufferedResponse) Header() http.Header { return b.header }

func (b *bufferedResponse) WriteHeader(status int) {
	if b.status == 0 {
		b.status = status
	}
}

func (b *bufferedResponse) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}
