package main

import (
	"net/http"
	"testing"
)

// TestDuplicateMemberNamesAreRefused: a JSON body naming a member twice in
// one object (I-JSON, RFC 7493) is 400 malformed_json naming the member,
// whatever the endpoint and depth, and changes nothing.
func TestDuplicateMemberNamesAreRefused(t *testing.T) {
	t.Parallel()
	s := startServer(t, nil)
	tn := s.createTenant(t, "Dupco")
	tok := s.tenantToken(t, tn.APIKey, tn.APISecret)
	before := s.countEvents(t)
	for _, tc := range []struct{ path, token, body, field string }{
		{"/users", tok, `{"email":"ann@example.com","name":"Ann","email":"mallory@example.com"}`, "email"},
		{"/merchants", tok, `{"name":"Shoprite","country":"SouthAfrica","bankName":"Capitec Bank","accountNumber":"1234567890","accountNumber":"0987654321"}`, "accountNumber"},
		{"/token", "", `{"apiKey":"` + tn.APIKey + `","apiSecret":"` + tn.APISecret + `","apiKey":"other"}`, "apiKey"},
	} {
		r := s.call(t, http.MethodPost, tc.path, tc.token, tc.body)
		mustFieldError(t, mustProblem(t, r, http.StatusBadRequest, "malformed_json"), tc.field)
	}
	if after := s.countEvents(t); after != before {
		t.Errorf("events: got %d after the refused requests, want %d", after, before)
	}
}
