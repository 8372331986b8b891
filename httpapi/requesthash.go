package httpapi

import (
	"bytes"
	"crypto/sha256"
	"hash"
	"io"
	"mime"
	"net/http"
	"strings"
)

// boundaryToken stands for a multipart body's boundary in its hash.
const boundaryToken = "ledger-idempotency-boundary"

// requestHash is the hash of what a keyed request means: method, path and
// query, content type and body, written to it as the body arrives. A
// multipart request's boundary is replaced by boundaryToken in its
// Content-Type and body: HTTP clients (curl, Go, Python) draw a new random
// boundary for every request, so a retry of the same upload would
// otherwise never match its first try (422 idempotency_key_reused) and
// could only be sent again under a new key, storing the document twice. A
// boundary cannot occur in the parts' content, so nothing else changes.
type requestHash struct {
	h    hash.Hash
	body io.WriteCloser
}

func newRequestHash(r *http.Request) *requestHash {
	h := sha256.New()
	contentType := r.Header.Get("Content-Type")
	var body io.WriteCloser = nopWriteCloser{h}
	mt, params, err := mime.ParseMediaType(contentType)
	if boundary := params["boundary"]; err == nil && strings.HasPrefix(mt, "multipart/") && boundary != "" {
		params["boundary"] = boundaryToken
		contentType = mime.FormatMediaType(mt, params)
		body = &replacingWriter{w: h, old: []byte("--" + boundary), new: []byte("--" + boundaryToken)}
	}
	io.WriteString(h, r.Method+" "+r.URL.RequestURI()+"\n"+contentType+"\n")
	return &requestHash{h: h, body: body}
}

// Write adds body bytes to the hash.
func (rh *requestHash) Write(p []byte) (int, error) { return rh.body.Write(p) }

// Sum returns the hash, once the whole body is written.
func (rh *requestHash) Sum() []byte {
	rh.body.Close()
	return rh.h.Sum(nil)
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// replacingWriter writes to w what is written to it with every old
// replaced by new, as bytes.ReplaceAll would the whole: it holds back the
// last len(old)-1 bytes, which may begin an old the next write completes,
// until Close.
type replacingWriter struct {
	w        io.Writer
	old, new []byte
	pending  []byte
}

func (rw *replacingWriter) Write(p []byte) (int, error) {
	rw.pending = append(rw.pending, p...)
	for {
		i := bytes.Index(rw.pending, rw.old)
		if i < 0 {
			break
		}
		rw.w.Write(rw.pending[:i])
		rw.w.Write(rw.new)
		rw.pending = rw.pending[i+len(rw.old):]
	}
	if keep := len(rw.old) - 1; len(rw.pending) > keep {
		rw.w.Write(rw.pending[:len(rw.pending)-keep])
		rw.pending = rw.pending[:copy(rw.pending, rw.pending[len(rw.pending)-keep:])]
	}
	return len(p), nil
}

// Close writes what was held back.
func (rw *replacingWriter) Close() error {
	rw.w.Write(rw.pending)
	rw.pending = nil
	return nil
}
