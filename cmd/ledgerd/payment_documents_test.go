package main

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// attach posts parts to a payment's document endpoint with token.
func (p paymentSetup) attach(t *testing.T, paymentID, token string, parts ...part) response {
	t.Helper()
	body, ct := multipartBody(t, parts...)
	return send(t, p.s.newRequest(t, http.MethodPost, "/payments/"+paymentID+"/document", body,
		"Content-Type", ct, "Authorization", "Bearer "+token))
}

// TestPaymentDocuments covers POST /payments/{id}/document and GET
// /payments/{id}/documents (spec §2.12, §4.6; contract §6): South African
// destinations only, PDF/PNG/JPEG by content, 10 MiB, uploads add up, and
// presigned URLs that need no token, expire and refuse any change.
func TestPaymentDocuments(t *testing.T) {
	t.Parallel()
	p := newPaymentSetup(t, map[string]string{"LEDGER_PUBLIC_URL": publicURL})
	za := p.pay(t, p.utok, fmt.Sprintf(`{"merchantId":%q,"amount":60000,"reference":"big"}`, p.za))["id"].(string)
	ke := p.pay(t, p.tok, fmt.Sprintf(`{"merchantId":%q,"amount":1000}`, p.keBank))["id"].(string)
	before := p.s.countEvents(t)

	files := [][]byte{pdfBytes, pngBytes, jpegBytes}
	var ids []string
	for i, f := range files {
		tok := []string{p.tok, p.utok}[i%2]
		got := mustStatus(t, p.attach(t, za, tok, filePart(fmt.Sprintf("invoice-%d", i), f)), http.StatusCreated)
		checkJSON(t, "201", got, map[string]any{"paymentId": za, "documentId": isUUIDv7, "fileName": got["fileName"],
			"contentType": got["contentType"], "size": float64(len(f)), "sha256": sha256Hex(f), "createdAt": isTimestamp})
		ids = append(ids, got["documentId"].(string))
	}
	evs := p.s.streamEvents(t, za)
	if len(evs) != 1+len(files) || evs[1].Type != "payment.document_attached" {
		t.Fatalf("events: got %d (%v), want payment.created and %d payment.document_attached", len(evs), evs, len(files))
	}

	list := mustStatus(t, p.s.call(t, http.MethodGet, "/payments/"+za+"/documents", p.utok, ""), http.StatusOK)
	items, _ := list["items"].([]any)
	if len(items) != len(files) || list["presignedUrlExpiresInSeconds"] != 900.0 || list["offsetMarker"] != nil {
		t.Fatalf("list: got %v", list)
	}
	for i, it := range items {
		item := it.(map[string]any)
		want := len(files) - 1 - i
		if item["documentId"] != ids[want] || item["paymentId"] != za {
			t.Errorf("item %d: got %v, want document %d", i, item, want)
		}
		link := p.s.local(t, item["presignedUrl"].(string))
		r := p.s.get(t, strings.TrimPrefix(link, p.s.URL))
		if r.Status != http.StatusOK || !bytes.Equal(r.Body, files[want]) {
			t.Fatalf("download %d: got %d, want the bytes", i, r.Status)
		}
		bad := []byte(link)
		bad[len(bad)-1] ^= 1
		mustProblem(t, send(t, p.s.newRequest(t, http.MethodGet, string(bad[len(p.s.URL):]), nil)), http.StatusForbidden, "")
	}
	kid, secret := p.s.signingKey(t)
	mustProblem(t, p.s.get(t, presign(ids[0], time.Now().Add(-time.Second).Unix(), kid, secret)), http.StatusForbidden, "presigned_url_expired")
	page := mustStatus(t, p.s.call(t, http.MethodGet, "/payments/"+za+"/documents?limit=2", p.tok, ""), http.StatusOK)
	if len(page["items"].([]any)) != 2 || page["offsetMarker"] == nil {
		t.Errorf("limit 2: got %v", page)
	}

	// Refusals store nothing and append nothing.
	mustProblem(t, p.attach(t, ke, p.tok, filePart("i.pdf", pdfBytes)), http.StatusBadRequest, "documents_not_supported")
	mustProblem(t, p.attach(t, za, p.tok, filePart("i.txt", []byte("hello, not a PDF"))), http.StatusUnsupportedMediaType, "unsupported_document")
	mustProblem(t, p.attach(t, za, p.tok, filePart("big.pdf", bigPDF(10<<20+1))), http.StatusRequestEntityTooLarge, "file_too_large")
	mustProblem(t, p.attach(t, za, p.tok), http.StatusBadRequest, "validation_failed")
	mustProblem(t, p.attach(t, za, p.tok, filePart("a.pdf", pdfBytes), filePart("b.pdf", pdfBytes)), http.StatusBadRequest, "unknown_field")
	mustProblem(t, p.s.call(t, http.MethodPost, "/payments/"+za+"/document", p.tok, `{}`), http.StatusUnsupportedMediaType, "unsupported_media_type")
	mustProblem(t, p.attach(t, za, p.otherTok, filePart("i.pdf", pdfBytes)), http.StatusNotFound, "not_found")
	mustProblem(t, p.attach(t, ke, p.utok, filePart("i.pdf", pdfBytes)), http.StatusNotFound, "not_found")
	mustProblem(t, p.s.call(t, http.MethodGet, "/payments/"+za+"/documents", p.otherTok, ""), http.StatusNotFound, "not_found")
	if got := p.s.countEvents(t); got != before+len(files) {
		t.Errorf("events: got %d, want %d", got, before+len(files))
	}
	var stored int
	p.s.queryRow(t, `SELECT count(*) FROM documents`, nil, &stored)
	if stored != len(files) {
		t.Errorf("stored documents: got %d, want %d (refused uploads leave no bytes)", stored, len(files))
	}
}
