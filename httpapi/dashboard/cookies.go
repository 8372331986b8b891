package dashboard

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"time"
)

// Cookie names. Every dashboard cookie is HttpOnly, SameSite=Strict and
// scoped to /dashboard, and Secure unless Config.SecureCookies is off.
const (
	sessionCookie = "ledger_session" // the random session id; the server keeps its SHA-256
	csrfCookie    = "ledger_csrf"    // the double-submit CSRF token
	flashCookie   = "ledger_flash"   // a new API key's secret, sealed to the session, read once
)

// setCookie sets a dashboard cookie that lasts maxAge (0: the browser session).
func (d *Dashboard) setCookie(w http.ResponseWriter, name, value, path string, maxAge time.Duration) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: value, Path: path, MaxAge: int(maxAge.Seconds()),
		Secure: d.cfg.SecureCookies, HttpOnly: true, SameSite: http.SameSiteStrictMode})
}

// clearCookie deletes a dashboard cookie.
func (d *Dashboard) clearCookie(w http.ResponseWriter, name, path string) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: "", Path: path, MaxAge: -1,
		Secure: d.cfg.SecureCookies, HttpOnly: true, SameSite: http.SameSiteStrictMode})
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
