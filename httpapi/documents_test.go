package httpapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/uuid"
	"github.com/gorilla/mux"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ledger/ledger/domain"
)

// fakeUsers is a Users over one active user held in memory.
type fakeUsers struct{ user domain.User }

func (f *fakeUsers) ExecuteUser(_ context.Context, _ domain.StreamRef, _ domain.Metadata,
	decide func(domain.User) ([]domain.Event, error)) (domain.UserSnapshot, error) {
	evs, err := decide(f.user)
	if err != nil {
		return domain.UserSnapshot{}, err
	}
	u := f.user
	for _, e := range evs {
		u = domain.ApplyUser(u, e)
	}
	return domain.UserSnapshot{User: u}, nil
}

func (f *fakeUsers) User(context.Context, uuid.UUID, uuid.UUID) (domain.UserSnapshot, error) {
	return domain.UserSnapshot{User: f.user}, nil
}
func (f *fakeUsers) UserIDByEmail(context.Context, uuid.UUID, string) (uuid.UUID, error) {
	return uuid.Nil, errNotFound
}
func (f *fakeUsers) ListUsers(context.Context, uuid.UUID, string, int, string) ([]domain.UserListItem, string, error) {
	return nil, "", nil
}
func (f *fakeUsers) OwnerUserID(context.Context, uuid.UUID) (uuid.UUID, error) {
	return uuid.Nil, errNotFound
}

// fakeDocuments hashes what it is given and keeps nothing.
type fakeDocuments struct{}

func (fakeDocuments) PutDocument(_ context.Context, _ domain.StoredDocument, r io.Reader) (int64, string, error) {
	h := sha256.New()
	n, err := io.Copy(h, r)
	return n, hex.EncodeToString(h.Sum(nil)), err
}
func (fakeDocuments) DeleteDocument(context.Context, uuid.UUID) error { return nil }
func (fakeDocuments) OpenDocument(context.Context, uuid.UUID) (domain.StoredDocument, io.Reader, error) {
	return domain.StoredDocument{}, nil, errNotFound
}
func (fakeDocuments) ListKYCDocuments(context.Context, uuid.UUID, uuid.UUID, int, string) ([]domain.KYCDocumentItem, string, error) {
	return nil, "", nil
}

// FuzzUploadKYCDocument feeds arbitrary multipart bodies to the upload
// handler: it never panics and never answers 500.
func FuzzUploadKYCDocument(f *testing.F) {
	userID := uuid.Must(uuid.NewV7())
	s := New(Config{}, Deps{Registry: prometheus.NewRegistry(), Log: slog.New(slog.DiscardHandler),
		Keys: testKeys, Users: &fakeUsers{user: domain.User{ID: userID, Status: domain.UserActive}}, Documents: fakeDocuments{}})
	h := s.route(s.uploadKYCDocument)
	const boundary = "XyZ"
	seed := func(parts ...[2]string) []byte {
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		mw.SetBoundary(boundary)
		for _, p := range parts {
			if p[0] == "file" {
				w, _ := mw.CreateFormFile("file", "a.pdf")
				w.Write([]byte(p[1]))
			} else {
				mw.WriteField(p[0], p[1])
			}
		}
		mw.Close()
		return b.Bytes()
	}
	f.Add(seed([2]string{"file", "%PDF-1.4 hello"}, [2]string{"documentType", "passport"}))
	f.Add(seed([2]string{"documentType", "SELFIE"}, [2]string{"file", "\x89PNG\r\n\x1a\nxx"}))
	f.Add(seed([2]string{"file", "text"}, [2]string{"documentType", "passport"}))
	f.Add(seed([2]string{"file", ""}, [2]string{"other", "x"}))
	f.Add([]byte("--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x\"\r\n\r\n\xff\xd8\xff"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, body []byte) {
		r := httptest.NewRequest(http.MethodPost, "/users/"+userID.String()+"/kyc-documents", bytes.NewReader(body))
		r.Header.Set("Content-Type", "multipart/form-data; boundary="+boundary)
		r = mux.SetURLVars(r, map[string]string{"userId": userID.String()})
		r = r.WithContext(context.WithValue(r.Context(), callerKey{}, Caller{TenantID: uuid.Must(uuid.NewV7()), Kind: KindTenant}))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if rec.Code >= 500 {
			t.Fatalf("body %q: got %d %s, want no 5xx", body, rec.Code, rec.Body)
		}
		if rec.Code == http.StatusCreated {
			return
		}
		if rec.Code != 400 && rec.Code != 413 && rec.Code != 415 {
			t.Fatalf("body %q: got %d %s, want 201, 400, 413 or 415", body, rec.Code, rec.Body)
		}
	})
}
