package dashboard

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"time"
)

// Cookie names. Every dashboard cookie is HttpOnly and SameSite=Strict.
// With Config.SecureCookies (the dashboard served over https) it is Secure
// and its name has the __Host- prefix, which browsers accept only from a
// secure origin with Path=/ and no Domain, so neither a sibling subdomain
// nor a plain-http response can plant or overwrite it; without, it is
// scoped to the path given.
const (
	sessionCookie    = "ledger_session"    // the random session id; the server keeps its SHA-256
	preSessionCookie = "ledger_presession" // random; binds the CSRF token of forms before sign-in
	flashCookie      = "ledger_flash"      // a new API key's secret, sealed to the session, read once
)

// cookieName is the name cookie name goes by.
func (d *Dashboard) cookieName(name string) string {
	if d.cfg.SecureCookies {
		return "__Host-" + name
	}
	return name
}

// cookie is a dashboard cookie that lasts maxAge seconds (0: the browser
// session; negative: delete it).
func (d *Dashboard) cookie(name, value, path string, maxAge int) *http.Cookie {
	if d.cfg.SecureCookies {
		path = "/" // as __Host- requires
	}
	return &http.Cookie{Name: d.cookieName(name), Value: value, Path: path, MaxAge: maxAge,
		Secure: d.cfg.SecureCookies, HttpOnly: true, SameSite: http.SameSiteStrictMode}
}

// setCookie sets a dashboard cookie that lasts maxAge (0: the browser session).
func (d *Dashboard) setCookie(w http.ResponseWriter, name, value, path string, maxAge time.Duration) {
	http.SetCookie(w, d.cookie(name, value, path, int(maxAge.Seconds())))
}

// clearCookie deletes a dashboard cookie.
func (d *Dashboard) clearCookie(w http.ResponseWriter, name, path string) {
	http.SetCookie(w, d.cookie(name, "", path, -1))
}

// randomToken is 32 random bytes, URL-safe base64.
func randomToken() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// tokenHash is how random tokens (session ids, set-password tokens) are
// stored: a fast hash suffices for 256 random bits, which cannot be guessed.
func tokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}
