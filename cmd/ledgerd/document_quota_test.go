package main

import (
	"net/http"
	"strconv"
	"testing"
)

// TestTenantDocumentQuota runs with a quota of 2,500 bytes a tenant: two
// documents of 1,000 bytes are stored; a third is 413
// document_quota_exceeded, with an Idempotency-Key too, and stores and
// appends nothing; another tenant still stores its own.
func TestTenantDocumentQuota(t *testing.T) {
	t.Parallel()
	s := startServer(t, map[string]string{"LEDGER_TENANT_DOCUMENT_QUOTA": "2500"})
	full := s.createTenant(t, "Fullco")
	tok := s.tenantToken(t, full.APIKey, full.APISecret)
	userID := s.createUser(t, tok, "full@example.com", "Full")["userId"].(string)
	for i := range 2 {
		mustStatus(t, s.upload(t, userID, tok, filePart("doc"+strconv.Itoa(i)+".pdf", bigPDF(1000)), typePart("other")), http.StatusCreated)
	}
	events := s.countEvents(t)
	var documents int
	s.queryRow(t, `SELECT count(*) FROM documents`, nil, &documents)

	mustProblem(t, s.upload(t, userID, tok, filePart("over.pdf", bigPDF(1000)), typePart("other")),
		http.StatusRequestEntityTooLarge, "document_quota_exceeded")
	body, ct := multipartBody(t, filePart("over.pdf", bigPDF(1000)), typePart("other"))
	mustProblem(t, send(t, s.newRequest(t, http.MethodPost, "/users/"+userID+"/kyc-documents", body,
		"Content-Type", ct, "Authorization", "Bearer "+tok, "Idempotency-Key", "over-quota-1")),
		http.StatusRequestEntityTooLarge, "document_quota_exceeded")
	if got := s.countEvents(t); got != events {
		t.Errorf("events: got %d, want %d (refused uploads append nothing)", got, events)
	}
	var after int
	s.queryRow(t, `SELECT count(*) FROM documents`, nil, &after)
	if after != documents {
		t.Errorf("documents: got %d, want %d (refused uploads store nothing)", after, documents)
	}

	other := s.createTenant(t, "Roomyco")
	otherTok := s.tenantToken(t, other.APIKey, other.APISecret)
	otherUser := s.createUser(t, otherTok, "roomy@example.com", "Roomy")["userId"].(string)
	mustStatus(t, s.upload(t, otherUser, otherTok, filePart("mine.pdf", bigPDF(1000)), typePart("other")), http.StatusCreated)
}
