package main

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

// Tests of the KYC documents (spec §4.2, contract §3, contract §6 last
// bullet): multipart upload, listing, presigned downloads.

const publicURL = "https://ledger.example"

// part is one multipart part: a form field, or a file when fileName is set.
type part struct {
	name, fileName, contentType string
	body                        []byte
}

// multipartBody encodes parts and returns the body and its Content-Type.
func multipartBody(t *testing.T, parts ...part) (*bytes.Buffer, string) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		params := map[string]string{"name": p.name}
		if p.fileName != "" {
			params["filename"] = p.fileName // RFC 2231-encoded when not ASCII
		}
		h.Set("Content-Disposition", mime.FormatMediaType("form-data", params))
		if p.contentType != "" {
			h.Set("Content-Type", p.contentType)
		}
		w, err := mw.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(p.body)
	}
	mw.Close()
	return &b, mw.FormDataContentType()
}

// upload posts parts to the user's kyc-documents with token.
func (s *testServer) upload(t *testing.T, userID, token string, parts ...part) response {
	t.Helper()
	body, ct := multipartBody(t, parts...)
	return send(t, s.newRequest(t, http.MethodPost, "/users/"+userID+"/kyc-documents", body,
		"Content-Type", ct, "Authorization", "Bearer "+token))
}

func filePart(name string, body []byte) part {
	return part{name: "file", fileName: name, contentType: "application/octet-stream", body: body}
}

func typePart(v string) part { return part{name: "documentType", body: []byte(v)} }

var (
	pdfBytes  = []byte("%PDF-1.7\n1 0 obj << >> endobj\n%%EOF\n")
	pngBytes  = append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{0, 1, 2, 3}, 300)...)
	jpegBytes = append([]byte{0xFF, 0xD8, 0xFF, 0xE0}, bytes.Repeat([]byte("jfif"), 100)...)
)

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// kycSetup is a server with a tenant, a user, its token, a second user, a
// disabled user and another tenant's token.
type kycSetup struct {
	s                         *testServer
	tok, utok, otherTenantTok string
	userID, otherID, disabled string
}

func newKYCSetup(t *testing.T) kycSetup {
	t.Helper()
	s := startServer(t, map[string]string{"LEDGER_PUBLIC_URL": publicURL + "/"})
	a := s.createTenant(t, "Kycco")
	b := s.createTenant(t, "Otherkyc")
	k := kycSetup{s: s, tok: s.tenantToken(t, a.APIKey, a.APISecret), otherTenantTok: s.tenantToken(t, b.APIKey, b.APISecret)}
	k.userID = s.createUser(t, k.tok, "doc@example.com", "Doc")["userId"].(string)
	k.otherID = s.createUser(t, k.tok, "other@example.com", "Other")["userId"].(string)
	k.disabled = s.createUser(t, k.tok, "gone@example.com", "Gone")["userId"].(string)
	k.utok = s.userToken(t, k.tok, k.userID)
	mustStatus(t, s.call(t, http.MethodDelete, "/users/"+k.disabled, k.tok, ""), http.StatusOK)
	return k
}

func TestUploadKYCDocument(t *testing.T) {
	t.Parallel()
	k := newKYCSetup(t)
	s := k.s
	for _, tt := range []struct {
		name, token, docType, wantType, fileName, wantName, contentType string
		body                                                            []byte
	}{
		{"pdf by tenant token", k.tok, "passport", "passport", "passport.pdf", "passport.pdf", "application/pdf", pdfBytes},
		{"png by user token", k.utok, "SELFIE", "selfie", "me.png", "me.png", "image/png", pngBytes},
		// The name's extension is the sniffed type's; invisible characters go.
		{"pdf named .html", k.tok, "passport", "passport", "evil.html", "evil.pdf", "application/pdf", pdfBytes},
		{"png named .svg with a bidi control", k.tok, "selfie", "selfie", "inv\u202Efdp.svg", "invfdp.png", "image/png", pngBytes},
		{"jpeg named .pdf, mixed case type", k.tok, " Proof_Of_Address ", "proof_of_address", "bill.pdf", "bill.jpg", "image/jpeg", jpegBytes},
	} {
		parts := []part{filePart(tt.fileName, tt.body), typePart(tt.docType)}
		if tt.token == k.utok {
			parts[0], parts[1] = parts[1], parts[0] // documentType first works too
		}
		r := k.s.upload(t, k.userID, tt.token, parts...)
		got := mustStatus(t, r, http.StatusCreated)
		checkJSON(t, tt.name, got, map[string]any{"id": isUUIDv7, "userId": k.userID, "documentType": tt.wantType,
			"fileName": tt.wantName, "contentType": tt.contentType, "size": float64(len(tt.body)),
			"sha256": sha256Hex(tt.body), "createdAt": isTimestamp})
	}

	// The event carries the metadata and never the bytes.
	evs := s.streamEvents(t, k.userID)
	last := evs[len(evs)-1]
	if last.Type != "user.kyc_document_uploaded" {
		t.Fatalf("last event: got %s, want user.kyc_document_uploaded", last.Type)
	}
	var data map[string]any
	mustDecode(t, last.Data, &data)
	if data["sha256"] != sha256Hex(jpegBytes) || data["size"] != float64(len(jpegBytes)) || data["contentType"] != "image/jpeg" {
		t.Errorf("event data: got %s, want the jpeg's sha256, size and contentType", last.Data)
	}
	for k := range data {
		if !map[string]bool{"documentId": true, "documentType": true, "fileName": true, "contentType": true, "size": true, "sha256": true}[k] {
			t.Errorf("event data member %s: got it, want metadata only", k)
		}
	}
	if bytes.Contains(last.Data, jpegBytes[:8]) || len(last.Data) > 400 {
		t.Errorf("event data: got %d bytes, want metadata without the file", len(last.Data))
	}
}

func TestUploadKYCDocumentErrors(t *testing.T) {
	t.Parallel()
	k := newKYCSetup(t)
	s := k.s
	before := s.countEvents(t)
	for _, tt := range []struct {
		name   string
		userID string
		token  string
		parts  []part
		status int
		code   string
		field  string
	}{
		{"unknown documentType", k.userID, k.tok, []part{filePart("a.pdf", pdfBytes), typePart("diploma")}, 400, "validation_failed", "documentType"},
		{"missing documentType", k.userID, k.tok, []part{filePart("a.pdf", pdfBytes)}, 400, "validation_failed", "documentType"},
		{"missing file", k.userID, k.tok, []part{typePart("passport")}, 400, "validation_failed", "file"},
		{"empty file", k.userID, k.tok, []part{filePart("a.pdf", nil), typePart("passport")}, 400, "validation_failed", "file"},
		{"text named x.pdf sent as application/pdf", k.userID, k.tok,
			[]part{{name: "file", fileName: "x.pdf", contentType: "application/pdf", body: []byte("hello, not a pdf")}, typePart("passport")},
			415, "unsupported_document", ""},
		{"another user's token", k.otherID, k.utok, []part{filePart("a.pdf", pdfBytes), typePart("passport")}, 404, "not_found", ""},
		{"another tenant", k.userID, k.otherTenantTok, []part{filePart("a.pdf", pdfBytes), typePart("passport")}, 404, "not_found", ""},
		{"disabled user", k.disabled, k.tok, []part{filePart("a.pdf", pdfBytes), typePart("passport")}, 404, "not_found", ""},
		{"no such user", uuid.Must(uuid.NewV7()).String(), k.tok, []part{filePart("a.pdf", pdfBytes), typePart("passport")}, 404, "not_found", ""},
		{"too large", k.userID, k.tok, []part{filePart("big.pdf", bigPDF(10<<20+1)), typePart("passport")}, 413, "file_too_large", ""},
	} {
		p := mustProblem(t, s.upload(t, tt.userID, tt.token, tt.parts...), tt.status, tt.code)
		if tt.field != "" {
			mustFieldError(t, p, tt.field)
		}
		if t.Failed() {
			t.Fatalf("case %s", tt.name)
		}
	}
	// A JSON body is 415, and so is no content type.
	path := "/users/" + k.userID + "/kyc-documents"
	mustProblem(t, s.call(t, http.MethodPost, path, k.tok, `{"documentType":"passport"}`), 415, "unsupported_media_type")
	mustProblem(t, send(t, s.newRequest(t, http.MethodPost, path, strings.NewReader("x"), "Authorization", "Bearer "+k.tok)),
		415, "unsupported_media_type")
	if got := s.countEvents(t); got != before {
		t.Errorf("events after failed uploads: got %d, want %d (none appended)", got, before)
	}
	var orphans int
	s.queryRow(t, `SELECT count(*) FROM documents`, nil, &orphans)
	if orphans != 0 {
		t.Errorf("documents after failed uploads: got %d, want 0 (refused uploads are deleted)", orphans)
	}

	// Exactly 10 MiB is accepted, with an Idempotency-Key too.
	big := bigPDF(10 << 20)
	r := s.upload(t, k.userID, k.tok, filePart("big.pdf", big), typePart("other"))
	got := mustStatus(t, r, http.StatusCreated)
	if got["size"] != float64(10<<20) || got["sha256"] != sha256Hex(big) {
		t.Errorf("10 MiB upload: got size %v sha256 %v, want %d %s", got["size"], got["sha256"], 10<<20, sha256Hex(big))
	}
	body, ct := multipartBody(t, filePart("big.pdf", bigPDF(10<<20+1)), typePart("other"))
	mustProblem(t, send(t, s.newRequest(t, http.MethodPost, path, body, "Content-Type", ct, "Authorization", "Bearer "+k.tok,
		"Idempotency-Key", "too-big-1")), 413, "")
	if got := s.countEvents(t); got != before+1 {
		t.Errorf("events: got %d, want %d", got, before+1)
	}
}

// bigPDF is a PDF header followed by filler, n bytes in all.
func bigPDF(n int) []byte {
	b := bytes.Repeat([]byte{'x'}, n)
	copy(b, "%PDF-1.4\n")
	return b
}

type kycList struct {
	Items []struct {
		ID, UserID, DocumentType, FileName, ContentType, SHA256, PresignedURL, CreatedAt string
		Size                                                                             int64
	} `json:"items"`
	OffsetMarker *string `json:"offsetMarker"`
	ExpiresIn    int     `json:"presignedUrlExpiresInSeconds"`
}

func (s *testServer) listKYC(t *testing.T, userID, token, query string) kycList {
	t.Helper()
	r := s.call(t, http.MethodGet, "/users/"+userID+"/kyc-documents"+query, token, "")
	mustStatus(t, r, http.StatusOK)
	var l kycList
	mustDecode(t, r.Body, &l)
	return l
}

// local turns a presigned URL under publicURL into one at the test server.
func (s *testServer) local(t *testing.T, presigned string) string {
	t.Helper()
	rest, ok := strings.CutPrefix(presigned, publicURL+"/documents/")
	if !ok {
		t.Fatalf("presignedUrl: got %s, want it under %s/documents/", presigned, publicURL)
	}
	return s.URL + "/documents/" + rest
}

func TestListAndDownloadKYCDocuments(t *testing.T) {
	t.Parallel()
	k := newKYCSetup(t)
	s := k.s
	files := [][]byte{pdfBytes, pngBytes, jpegBytes, append(bytes.Clone(pdfBytes), 'z')}
	names := []string{"a.pdf", "b \"quoted\" é.png", "c.jpg", "d.pdf"}
	ids := make([]string, len(files))
	for i, f := range files {
		ids[i] = mustStatus(t, s.upload(t, k.userID, k.utok, filePart(names[i], f), typePart("other")), http.StatusCreated)["id"].(string)
	}
	// Newest first, three per page, no repeats or skips.
	listedFrom := time.Now()
	p1 := s.listKYC(t, k.userID, k.tok, "?limit=3")
	listedTo := time.Now()
	if len(p1.Items) != 3 || p1.OffsetMarker == nil || p1.ExpiresIn != 900 {
		t.Fatalf("page 1: got %d items, marker %v, expiresIn %d, want 3, a marker, 900", len(p1.Items), p1.OffsetMarker, p1.ExpiresIn)
	}
	p2 := s.listKYC(t, k.userID, k.utok, "?limit=3&offset="+url.QueryEscape(*p1.OffsetMarker))
	if len(p2.Items) != 1 || p2.OffsetMarker != nil {
		t.Fatalf("page 2: got %d items, marker %v, want 1 and null", len(p2.Items), p2.OffsetMarker)
	}
	all := append(p1.Items, p2.Items...)
	for i, it := range all {
		want := len(files) - 1 - i
		if it.ID != ids[want] || it.Size != int64(len(files[want])) || it.SHA256 != sha256Hex(files[want]) || it.UserID != k.userID {
			t.Errorf("item %d: got %+v, want document %d", i, it, want)
		}
		// The presigned URL downloads the exact bytes without a token.
		r := s.get(t, strings.TrimPrefix(s.local(t, it.PresignedURL), s.URL))
		if r.Status != http.StatusOK || !bytes.Equal(r.Body, files[want]) {
			t.Fatalf("download %d: got %d, %d bytes, want 200 and the uploaded bytes", i, r.Status, len(r.Body))
		}
		for h, v := range map[string]string{"Content-Type": it.ContentType, "Content-Length": strconv.Itoa(len(files[want])),
			"X-Content-Type-Options": "nosniff"} {
			if r.Header.Get(h) != v {
				t.Errorf("download %d %s: got %q, want %q", i, h, r.Header.Get(h), v)
			}
		}
		if cd := r.Header.Get("Content-Disposition"); !strings.HasPrefix(cd, "attachment;") {
			t.Errorf("Content-Disposition: got %q, want attachment", cd)
		}
		if !strings.Contains(r.Header.Get("Cache-Control"), "private") {
			t.Errorf("Cache-Control: got %q, want private", r.Header.Get("Cache-Control"))
		}
	}
	mustProblem(t, s.call(t, http.MethodGet, "/users/"+k.userID+"/kyc-documents?offset=bogus", k.tok, ""), 400, "validation_failed")
	mustProblem(t, s.call(t, http.MethodGet, "/users/"+k.userID+"/kyc-documents?limit=0", k.tok, ""), 400, "validation_failed")
	for _, tt := range []struct{ name, userID, token string }{
		{"another user's token", k.otherID, k.utok},
		{"another tenant", k.userID, k.otherTenantTok},
		{"disabled user", k.disabled, k.tok},
	} {
		mustProblem(t, s.call(t, http.MethodGet, "/users/"+tt.userID+"/kyc-documents", tt.token, ""), 404, "not_found")
	}
	if l := s.listKYC(t, k.otherID, k.tok, ""); len(l.Items) != 0 || l.OffsetMarker != nil {
		t.Errorf("other user's documents: got %+v, want none", l)
	}

	// Changing any single character of the URL is 403: every byte of the
	// path's id and of each query value, and the parameter names.
	u := s.local(t, all[0].PresignedURL)
	tamper := func(c byte) byte {
		if c == 'a' {
			return 'b'
		}
		return 'a'
	}
	start := len(s.URL + "/documents/")
	for i := start; i < len(u); i++ {
		if u[i] == '&' || u[i] == '=' || u[i] == '?' {
			continue // these change the URL's structure, checked below
		}
		bad := []byte(u)
		bad[i] = tamper(bad[i])
		mustProblem(t, send(t, s.newRequest(t, http.MethodGet, string(bad[len(s.URL):]), nil)), http.StatusForbidden, "")
		if t.Failed() {
			t.Fatalf("tampered at %d: %s", i, bad)
		}
	}
	for _, bad := range []string{
		strings.SplitN(u, "?", 2)[0], // no query
		u + "&x=1",
		strings.Replace(u, "&kid=", "&kid=&kid=", 1),
		strings.Replace(u, "&kid=", "&kid&", 1),
		strings.Replace(u, "?expires=", "?expires=%2B", 1),
		strings.Replace(u, "&signature=", "&signature=%20", 1),
		strings.Replace(u, "&", "&&", 1),
		strings.Replace(u, "&", ";", 1),
		strings.Replace(u, "?", "?&", 1),
	} {
		mustProblem(t, send(t, s.newRequest(t, http.MethodGet, bad[len(s.URL):], nil)), http.StatusForbidden, "")
		if t.Failed() {
			t.Fatalf("changed URL %s", bad)
		}
	}
	// A token does not replace the signature.
	mustProblem(t, s.call(t, http.MethodGet, "/documents/"+ids[0], k.tok, ""), http.StatusForbidden, "invalid_signature")

	// An expired URL, signed with the real key, is 403; the same signer's
	// unexpired URL downloads; a validly signed URL of a document that does
	// not exist is 404.
	kid, secret := s.signingKey(t)
	mustProblem(t, s.get(t, presign(ids[0], time.Now().Add(-time.Second).Unix(), kid, secret)), http.StatusForbidden, "presigned_url_expired")
	if r := s.get(t, presign(ids[0], time.Now().Add(time.Minute).Unix(), kid, secret)); r.Status != http.StatusOK || !bytes.Equal(r.Body, files[0]) {
		t.Errorf("self-signed download: got %d, want 200 with the bytes", r.Status)
	}
	mustProblem(t, s.get(t, presign(uuid.Must(uuid.NewV7()).String(), time.Now().Add(time.Minute).Unix(), kid, secret)), http.StatusNotFound, "not_found")
	mustProblem(t, s.get(t, presign(ids[0], time.Now().Add(time.Minute).Unix(), "no-such-kid", secret)), http.StatusForbidden, "invalid_signature")
	mustProblem(t, s.get(t, presign(ids[0], time.Now().Add(time.Minute).Unix(), kid, []byte("wrong"))), http.StatusForbidden, "invalid_signature")
	// A document whose bytes were stored but whose event never committed (a
	// crash between the two) is never listed nor served, even validly signed.
	orphan := uuid.Must(uuid.NewV7()).String()
	var n int
	s.queryRow(t, `WITH d AS (INSERT INTO documents (id, tenant_id, owner, content_type, size, sha256, file_name)
		SELECT $1, tenant_id, id, 'application/pdf', 4, '', 'o.pdf' FROM users WHERE id = $2 RETURNING id)
		INSERT INTO document_chunks (document_id, n, bytes) SELECT id, 0, '%PDF' FROM d RETURNING 1`,
		[]any{orphan, k.userID}, &n)
	mustProblem(t, s.get(t, presign(orphan, time.Now().Add(time.Minute).Unix(), kid, secret)), http.StatusNotFound, "not_found")
	if l := s.listKYC(t, k.userID, k.tok, ""); len(l.Items) != len(files) {
		t.Errorf("list with an orphan: got %d items, want %d", len(l.Items), len(files))
	}
	// The URL's expiry is 900 s after the listing (whole seconds).
	pu, _ := url.Parse(all[0].PresignedURL)
	exp, _ := strconv.ParseInt(pu.Query().Get("expires"), 10, 64)
	if at := time.Unix(exp, 0); at.Before(listedFrom.Add(899*time.Second)) || at.After(listedTo.Add(901*time.Second)) {
		t.Errorf("expires: got %v, want 900 s after the listing at %v", at, listedFrom)
	}
}

// presign signs a download path as the service does (httpapi/presign.go).
func presign(documentID string, expires int64, kid string, secret []byte) string {
	path := "/documents/" + documentID
	exp := strconv.FormatInt(expires, 10)
	k := hmac.New(sha256.New, secret)
	k.Write([]byte("ledger presigned-url v1"))
	m := hmac.New(sha256.New, k.Sum(nil))
	m.Write([]byte("GET\n" + path + "\n" + exp + "\n" + kid))
	return path + "?expires=" + exp + "&kid=" + url.QueryEscape(kid) + "&signature=" + hex.EncodeToString(m.Sum(nil))
}
