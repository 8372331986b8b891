package httpapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strconv"

	"github.com/google/uuid"

	"github.com/ledger/ledger/domain"
)

// upload is a document streamed into the document store from a
// multipart/form-data request (part file), with the request's small text
// parts.
type upload struct {
	doc    domain.StoredDocument
	texts  map[string]string // the text parts asked for that were sent
	stored bool
}

// discard deletes the upload's bytes when the event that would record them
// is refused. Orphans are harmless, so its error is ignored.
func (s *Server) discard(ctx context.Context, u *upload) {
	if u.stored {
		s.documents.DeleteDocument(context.WithoutCancel(ctx), u.doc.ID)
	}
}

// checkMultipart returns the boundary of a multipart/form-data request, or 415.
func checkMultipart(r *http.Request) (string, error) {
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return "", errNotMultipart
	}
	return params["boundary"], nil
}

// receiveUpload reads a multipart body with exactly one file part and at
// most one of each textParts. The file is streamed into the document store
// (never whole in memory) as a document of owner, counted and hashed on
// the way, its type sniffed from its first bytes: PDF, PNG or JPEG (415
// otherwise), at most domain.MaxDocumentSize (413 at once beyond). On an
// error nothing stays stored.
func (s *Server) receiveUpload(w http.ResponseWriter, r *http.Request, boundary string, tenantID, owner uuid.UUID,
	textParts ...string) (*upload, error) {
	mr := multipart.NewReader(http.MaxBytesReader(w, r.Body, maxRequestBody), boundary)
	u := &upload{texts: map[string]string{}}
	var haveFile bool
	err := func() error {
		for {
			p, err := mr.NextPart()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return multipartError(err)
			}
			name := p.FormName()
			_, seen := u.texts[name]
			switch {
			case name == "file" && !haveFile:
				haveFile = true
				if err := s.storeFile(r.Context(), u, p, tenantID, owner); err != nil {
					return err
				}
			case isOneOf(name, textParts) && !seen && p.FileName() == "":
				raw, err := io.ReadAll(io.LimitReader(p, maxFormField+1))
				if err != nil {
					return multipartError(err)
				}
				if len(raw) > maxFormField {
					return domain.Invalidf(name, "must be at most %d bytes", maxFormField)
				}
				u.texts[name] = string(raw)
			default:
				return &domain.Error{Kind: domain.Invalid, Code: "unknown_field", Message: "unexpected part " + strconv.Quote(name),
					Fields: []domain.FieldError{{Field: name, Message: "is not a part of this request, or is repeated"}}}
			}
		}
	}()
	if err == nil && !haveFile {
		err = domain.Invalidf("file", "is required")
	}
	if err != nil {
		s.discard(r.Context(), u)
		return nil, err
	}
	return u, nil
}

// storeFile streams one file part into the document store.
func (s *Server) storeFile(ctx context.Context, u *upload, p *multipart.Part, tenantID, owner uuid.UUID) error {
	u.doc = domain.StoredDocument{ID: uuid.Must(uuid.NewV7()), TenantID: tenantID, Owner: owner}
	m := &meter{r: p, h: sha256.New(), max: domain.MaxDocumentSize}
	head := make([]byte, 512)
	k, err := io.ReadFull(m, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return multipartError(err)
	}
	if k == 0 {
		return domain.Invalidf("file", "must not be empty")
	}
	if u.doc.ContentType, err = domain.SniffContentType(head[:k]); err != nil {
		return err
	}
	u.doc.FileName = domain.CleanFileName(p.FileName(), u.doc.ContentType)
	size, sum, err := s.documents.PutDocument(ctx, u.doc, io.MultiReader(bytes.NewReader(head[:k]), m))
	if err != nil && m.err != nil {
		return multipartError(m.err)
	}
	if err != nil {
		return err
	}
	u.stored = true
	if sum != hex.EncodeToString(m.h.Sum(nil)) || size != m.n {
		return errors.New("stored document differs from the upload")
	}
	u.doc.Size, u.doc.SHA256 = size, sum
	return nil
}

func isOneOf(s string, list []string) bool {
	for _, x := range list {
		if s == x {
			return true
		}
	}
	return false
}
