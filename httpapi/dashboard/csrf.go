package dashboard

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"time"
)

// The CSRF defence: every form repeats a token that is an HMAC, under a
// key the instances share, of what it is bound to: the session id once
// signed in, a random pre-session cookie before (sign-in, set-password).
// Another site can make a browser post a form, but it cannot read the
// page's token. A double-submit pair (a cookie the form repeats) was not
// enough: whoever can plant a cookie (a sibling subdomain, a plain-http
// response) chose both halves. Now the server key makes the token, and a
// session's token is no other session's.

// csrfKeyPurpose names the dashboard's CSRF key among the server keys.
const csrfKeyPurpose = "dashboard-csrf"

// csrfBinding is what r's token is bound to: the session when a signed-in
// route admitted r, else the pre-session cookie; "" when there is none.
func (d *Dashboard) csrfBinding(r *http.Request) (kind, value string) {
	if v := viewerFrom(r.Context()); v.SessionID != "" {
		return "session", v.SessionID
	}
	if c, err := r.Cookie(d.cookieName(preSessionCookie)); err == nil && len(c.Value) >= 43 {
		return "pre-session", c.Value
	}
	return "", ""
}

// csrfFor is the token bound to kind and value.
func (d *Dashboard) csrfFor(ctx context.Context, kind, value string) (string, error) {
	key, err := d.Keys.Key(ctx, csrfKeyPurpose)
	if err != nil {
		return "", err
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(kind + "\x00" + value))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil)), nil
}

// csrfToken returns the token r's page puts in its forms, setting a new
// pre-session cookie when r has neither session nor one.
func (d *Dashboard) csrfToken(w http.ResponseWriter, r *http.Request) (string, error) {
	kind, value := d.csrfBinding(r)
	if kind == "" {
		kind, value = "pre-session", d.renewPreSession(w)
	}
	return d.csrfFor(r.Context(), kind, value)
}

// renewPreSession sets a fresh pre-session cookie and returns its value.
func (d *Dashboard) renewPreSession(w http.ResponseWriter) string {
	value := randomToken()
	d.setCookie(w, preSessionCookie, value, "/dashboard", 0)
	return value
}

// form admits a POST only when its csrf field is the token of the request's
// binding. It reads at most 64 KiB of form within Config.FormReadTimeout.
func (d *Dashboard) form(h handlerFunc) http.Handler {
	return d.handle(func(w http.ResponseWriter, r *http.Request) error {
		// Wall-clock time, not d.now: the deadline is the connection's.
		err := http.NewResponseController(w).SetReadDeadline(time.Now().Add(d.cfg.FormReadTimeout))
		if err != nil && !errors.Is(err, http.ErrNotSupported) { // a test recorder has no connection
			return err
		}
		r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
		kind, value := d.csrfBinding(r)
		if kind == "" {
			return errCSRF
		}
		want, err := d.csrfFor(r.Context(), kind, value)
		if err != nil {
			return err
		}
		if !hmac.Equal([]byte(want), []byte(r.PostFormValue("csrf"))) {
			return errCSRF
		}
		return h(w, r)
	})
}
