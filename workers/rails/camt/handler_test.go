package camt

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ledger/ledger/domain"
)

// TestHandler: only a POST with the operator token reaches the importer,
// whose report is the body; an oversized file is 413, a file it refuses
// as invalid 400.
func TestHandler(t *testing.T) {
	t.Parallel()
	const token = "0123456789abcdef0123456789abcdef"
	var imported int
	h := NewHandler(token, func(_ context.Context, r io.Reader) (any, error) {
		imported++
		f, err := Parse(r)
		if err != nil {
			return nil, invalid(err)
		}
		return map[string]int{"credits": len(f.Credits)}, nil
	}, slog.New(slog.DiscardHandler))
	doc := `<Document><BkToCstmrDbtCdtNtfctn><Ntfctn><Acct><Id><IBAN>X</IBAN></Id></Acct><Ntry><Amt Ccy="EUR">5</Amt>` +
		`<CdtDbtInd>CRDT</CdtDbtInd><AcctSvcrRef>R</AcctSvcrRef></Ntry></Ntfctn></BkToCstmrDbtCdtNtfctn></Document>`
	for _, tc := range []struct {
		name, method, auth, body string
		want                     int
		wantBody                 string
	}{
		{"imported", http.MethodPost, "Bearer " + token, doc, http.StatusOK, `{"credits":1}`},
		{"no token", http.MethodPost, "", doc, http.StatusUnauthorized, ""},
		{"wrong token", http.MethodPost, "Bearer " + token + "x", doc, http.StatusUnauthorized, ""},
		{"not bearer", http.MethodPost, token, doc, http.StatusUnauthorized, ""},
		{"GET", http.MethodGet, "Bearer " + token, "", http.StatusMethodNotAllowed, ""},
		{"not camt", http.MethodPost, "Bearer " + token, "<Document/>", http.StatusBadRequest, ""},
		{"too large", http.MethodPost, "Bearer " + token, strings.Repeat(" ", MaxSize+1), http.StatusRequestEntityTooLarge, ""},
	} {
		before := imported
		req := httptest.NewRequest(tc.method, ImportPath, strings.NewReader(tc.body))
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tc.want || (tc.wantBody != "" && strings.TrimSpace(rec.Body.String()) != tc.wantBody) {
			t.Errorf("%s: got %d %q, want %d %q", tc.name, rec.Code, rec.Body, tc.want, tc.wantBody)
		}
		if reached := imported > before; reached != (tc.want == http.StatusOK || tc.want == http.StatusBadRequest || tc.want == http.StatusRequestEntityTooLarge) {
			t.Errorf("%s: the importer ran: %v", tc.name, reached)
		}
	}
}

func invalid(err error) error {
	return &domain.Error{Kind: domain.Invalid, Code: "camt_invalid", Message: err.Error(), Err: err}
}
