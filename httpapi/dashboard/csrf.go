package dashboard

import (
	"crypto/subtle"
	"errors"
	"net/http"
	"time"
)

// The CSRF defence is a double-submit token: a random cookie that every
// form repeats in a hidden field. Another site can make a browser post a
// form, but it can neither read the cookie nor (SameSite=Strict) make the
// browser send it, so its post is refused. The token is renewed at sign-in.

// csrfToken returns the request's CSRF token, setting a new cookie when it
// has none.
func (d *Dashboard) csrfToken(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(csrfCookie); err == nil && len(c.Value) >= 43 {
		return c.Value
	}
	return d.renewCSRF(w)
}

// renewCSRF sets a fresh CSRF cookie and returns its token.
func (d *Dashboard) renewCSRF(w http.ResponseWriter) string {
	token := randomToken()
	d.setCookie(w, csrfCookie, token, "/dashboard", 0)
	return token
}

// form admits a POST only when its csrf field matches the CSRF cookie. It
// reads at most 64 KiB of form within Config.FormReadTimeout.
func (d *Dashboard) form(h handlerFunc) http.Handler {
	return d.handle(func(w http.ResponseWriter, r *http.Request) error {
		// Wall-clock time, not d.now: the deadline is the connection's.
		err := http.NewResponseController(w).SetReadDeadline(time.Now().Add(d.cfg.FormReadTimeout))
		if err != nil && !errors.Is(err, http.ErrNotSupported) { // a test recorder has no connection
			return err
		}
		r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
		c, err := r.Cookie(csrfCookie)
		if err != nil || len(c.Value) < 43 ||
			subtle.ConstantTimeCompare([]byte(c.Value), []byte(r.PostFormValue("csrf"))) != 1 {
			return errCSRF
		}
		return h(w, r)
	})
}
