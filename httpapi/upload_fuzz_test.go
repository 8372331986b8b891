package httpapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gorilla/mux"

	"github.com/ledger/ledger/domain"
)

// FuzzUpload sends any multipart body, under any boundary, to both upload
// handlers (KYC documents and payment documents). Every so often the first
// part's content is padded to just under or just over the 10 MiB limit.
// Neither handler ever panics or answers 5xx; a document is stored only
// when an independent reading of the body finds exactly one file part, of
// at most 10 MiB, and then the answer's type is what its first bytes say
// (whatever the part's own Content-Type claims), its size and SHA-256 are
// the part's; a file part over 10 MiB is refused.
func FuzzUpload(f *testing.F) {
	fx := newFixture(f)
	uploads := []struct {
		name string
		h    handlerFunc
		vars map[string]string
	}{
		{"POST /users/{userId}/kyc-documents", fx.s.uploadKYCDocument, map[string]string{"userId": fx.user.ID.String()}},
		{"POST /payments/{paymentId}/document", fx.s.attachPaymentDocument, map[string]string{"paymentId": fx.payment.ID.String()}},
	}
	for _, seed := range [][]byte{
		multipartBody(f, "XyZ", part{"file", "a.pdf", "application/pdf", "%PDF-1.4 hello"}, part{"documentType", "", "", "passport"}),
		multipartBody(f, "XyZ", part{"documentType", "", "", "SELFIE"}, part{"file", "", "", "\x89PNG\r\n\x1a\nxx"}),
		multipartBody(f, "XyZ", part{"file", "x.png", "image/png", "\xff\xd8\xff\xe0 a JPEG"}, part{"documentType", "", "", "passport"}),
		multipartBody(f, "XyZ", part{"file", "a.txt", "text/plain", "text"}, part{"documentType", "", "", "passport"}),
		multipartBody(f, "XyZ", part{"file", "a.pdf", "", "%PDF-"}, part{"file", "b.pdf", "", "%PDF-"}),
		multipartBody(f, "XyZ", part{"file", "", "", ""}, part{"other", "", "", "x"}),
		multipartBody(f, "XyZ", part{"documentType", "", "", "passport"}),
		multipartBody(f, "XyZ", part{"file", "invoice.jpg", "image/jpeg", "%PDF-1.7 an invoice"}),
		[]byte("--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x\"\r\n\r\n\xff\xd8\xff"),
		[]byte(""),
	} {
		for i := range uploads {
			f.Add(uint8(i), "XyZ", seed, uint8(0))
		}
	}
	for i, seed := range [][]byte{
		multipartBody(f, "XyZ", part{"file", "a.pdf", "application/pdf", "%PDF-1.4 hello"}, part{"documentType", "", "", "passport"}),
		multipartBody(f, "XyZ", part{"file", "invoice.jpg", "image/jpeg", "%PDF-1.7 an invoice"}),
	} {
		f.Add(uint8(i), "XyZ", seed, uint8(15)) // just over 10 MiB
		f.Add(uint8(i), "XyZ", seed, uint8(31)) // exactly 10 MiB
	}
	f.Add(uint8(0), "", []byte("--\r\n"), uint8(0))
	f.Add(uint8(1), `a"b c`, []byte("--a\"b c\r\n\r\n--a\"b c--"), uint8(0))
	f.Fuzz(func(t *testing.T, which uint8, boundary string, body []byte, pad uint8) {
		up := uploads[int(which)%len(uploads)]
		body = padFirstPart(body, boundary, pad)
		r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
		r.Header.Set("Content-Type", mime.FormatMediaType("multipart/form-data", map[string]string{"boundary": boundary}))
		r = mux.SetURLVars(r, up.vars)
		r = r.WithContext(context.WithValue(r.Context(), callerKey{}, fx.tenant))
		rec := httptest.NewRecorder()
		fx.s.route(up.h).ServeHTTP(rec, r)
		if rec.Code != http.StatusCreated && rec.Code != 400 && rec.Code != 413 && rec.Code != 415 {
			t.Fatalf("%s (%d bytes): got %d %s, want 201, 400, 413 or 415", up.name, len(body), rec.Code, rec.Body)
		}
		files, first := fileParts(boundary, body)
		if len(files) == 1 && len(files[0]) > domain.MaxDocumentSize && rec.Code == http.StatusCreated {
			t.Fatalf("%s: stored a file of %d bytes, want 413", up.name, len(files[0]))
		}
		if first && len(files) > 0 && len(files[0]) > domain.MaxDocumentSize && sniff(files[0]) != "" && rec.Code != 413 {
			t.Fatalf("%s: a %s of %d bytes first: got %d, want 413", up.name, sniff(files[0]), len(files[0]), rec.Code)
		}
		if rec.Code != http.StatusCreated {
			return
		}
		var got struct {
			ContentType string `json:"contentType"`
			Size        int64  `json:"size"`
			SHA256      string `json:"sha256"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		if len(files) != 1 {
			t.Fatalf("%s: stored a document from a body with %d file parts", up.name, len(files))
		}
		sum := sha256.Sum256(files[0])
		if want := sniff(files[0]); got.ContentType != want || want == "" || got.Size != int64(len(files[0])) || got.SHA256 != hex.EncodeToString(sum[:]) {
			t.Fatalf("%s: got %+v, want %q of %d bytes, SHA-256 %x", up.name, got, want, len(files[0]), sum)
		}
	})
}

// part is one part of a multipart/form-data body.
type part struct{ name, fileName, contentType, content string }

func multipartBody(f *testing.F, boundary string, parts ...part) []byte {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	if err := mw.SetBoundary(boundary); err != nil {
		f.Fatal(err)
	}
	for _, p := range parts {
		h := make(map[string][]string)
		disposition := map[string]string{"name": p.name}
		if p.fileName != "" {
			disposition["filename"] = p.fileName
		}
		h["Content-Disposition"] = []string{mime.FormatMediaType("form-data", disposition)}
		if p.contentType != "" {
			h["Content-Type"] = []string{p.contentType}
		}
		w, err := mw.CreatePart(h)
		if err != nil {
			f.Fatal(err)
		}
		w.Write([]byte(p.content))
	}
	if err := mw.Close(); err != nil {
		f.Fatal(err)
	}
	return b.Bytes()
}

// padFirstPart grows the first part's content, for one input in sixteen,
// to exactly 10 MiB (pad 31) or one byte more (the other): the fuzzer
// itself seldom writes megabytes. Other bodies are returned as they are.
func padFirstPart(body []byte, boundary string, pad uint8) []byte {
	if pad%16 != 15 {
		return body
	}
	start := bytes.Index(body, []byte("\r\n\r\n"))
	end := bytes.Index(body[max(start, 0):], []byte("\r\n--"+boundary))
	if start < 0 || end < 0 {
		return body
	}
	end += start
	size := domain.MaxDocumentSize + 1
	if pad == 31 {
		size = domain.MaxDocumentSize
	}
	have := end - (start + 4)
	if have >= size {
		return body
	}
	grown := make([]byte, 0, len(body)+size-have)
	grown = append(grown, body[:end]...)
	grown = append(grown, bytes.Repeat([]byte{'A'}, size-have)...)
	return append(grown, body[end:]...)
}

// fileParts reads body with mime/multipart, apart from the handlers, and
// returns the content of every part named file, and whether the first
// part was one. It stops at the first error, as the handlers must.
func fileParts(boundary string, body []byte) (files [][]byte, first bool) {
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	for i := 0; ; i++ {
		p, err := mr.NextPart()
		if err != nil {
			return files, first
		}
		content, err := io.ReadAll(p)
		if p.FormName() == "file" {
			files = append(files, content)
			first = first || i == 0
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return files, first
		}
	}
}

// sniff is the document type of content by its magic bytes, independent of
// domain.SniffContentType: "" for anything but PDF, PNG and JPEG.
func sniff(content []byte) string {
	switch {
	case bytes.HasPrefix(content, []byte("%PDF-")):
		return "application/pdf"
	case bytes.HasPrefix(content, []byte{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'}):
		return "image/png"
	case bytes.HasPrefix(content, []byte{0xff, 0xd8, 0xff}):
		return "image/jpeg"
	}
	return ""
}
