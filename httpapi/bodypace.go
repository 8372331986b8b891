package httpapi

import (
	"errors"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/ledger/ledger/domain"
)

// errBodyTooSlow answers a request whose body came slower than the minimum
// rate: 408, and whatever had arrived is dropped.
var errBodyTooSlow = domain.Errorf(domain.Invalid, "request_timeout", "the request body arrived too slowly")

// PaceBodies paces the request bodies of next as the API's own are
// (paceBodies), for the handlers served beside the API (the dashboard).
func (s *Server) PaceBodies(next http.Handler) http.Handler { return s.paceBodies(next) }

// paceBodies bounds how long a request body may take, against slowloris
// clients that trickle a body to hold a connection and a handler: the body
// must be in within Config.BodyTimeout plus one second per
// Config.BodyMinRate bytes received. One fixed read timeout cannot do this:
// short enough to stop a trickled JSON body, it would cut off a legitimate
// 10 MiB upload on a slow link; the deadline instead moves with the bytes.
// The response may take Config.WriteTimeout after the body's deadline.
func (s *Server) paceBodies(next http.Handler) http.Handler {
	if s.cfg.BodyTimeout <= 0 || s.cfg.BodyMinRate <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		b := &pacedBody{ReadCloser: r.Body, rc: http.NewResponseController(w), start: time.Now(),
			grace: s.cfg.BodyTimeout, minRate: s.cfg.BodyMinRate, writeTimeout: s.cfg.WriteTimeout}
		// Set even for a handler that never reads the body: net/http then
		// reads what is left before answering, to reuse the connection.
		if err := b.extend(); err != nil {
			// Only a writer that is no connection (a test recorder) has no deadlines.
			s.logger(r).Warn("request body left unpaced", "err", err)
		} else {
			r.Body = b
		}
		next.ServeHTTP(w, r)
	})
}

// pacedBody is a request body whose read deadline moves on with every
// byte received.
type pacedBody struct {
	io.ReadCloser
	rc           *http.ResponseController
	start        time.Time
	grace        time.Duration
	minRate      int // bytes per second
	writeTimeout time.Duration
	received     int64
}

func (b *pacedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.received += int64(n)
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		return n, errBodyTooSlow
	case err == nil && n > 0:
		// Never past the end: there net/http clears the deadline and
		// starts reading the connection for its close, and a deadline
		// set then would cancel a slow handler's context.
		b.extend()
	}
	return n, err
}

// extend sets the connection's deadlines for the bytes received so far.
// Credit stops at the largest body any route takes, so the bound is
// BodyTimeout + maxRequestBody/BodyMinRate whatever a client sends.
func (b *pacedBody) extend() error {
	credit := float64(min(b.received, maxRequestBody)) / float64(b.minRate)
	deadline := b.start.Add(b.grace + time.Duration(credit*float64(time.Second)))
	if err := b.rc.SetReadDeadline(deadline); err != nil {
		return err
	}
	if b.writeTimeout > 0 {
		return b.rc.SetWriteDeadline(deadline.Add(b.writeTimeout))
	}
	return nil
}
