package httpapi

import (
	"context"
	"errors"
	"hash"
	"io"
	"mime"
	"net/http"
	"strconv"

	"github.com/google/uuid"

	"github.com/ledger/ledger/domain"
)

// Documents is the document store (bytes in Postgres, shared by every
// instance) and the KYC documents read model.
type Documents interface {
	// PutDocument streams r into the store as d and returns the size and
	// SHA-256 stored; an error of r is returned as is.
	PutDocument(ctx context.Context, d domain.StoredDocument, r io.Reader) (int64, string, error)
	DeleteDocument(ctx context.Context, id uuid.UUID) error
	// OpenDocument returns a document some event recorded, with its bytes.
	OpenDocument(ctx context.Context, id uuid.UUID) (domain.StoredDocument, io.Reader, error)
	ListKYCDocuments(ctx context.Context, tenantID, userID uuid.UUID, limit int, offset string) ([]domain.KYCDocumentItem, string, error)
}

// maxFormField is the largest documentType part read.
const maxFormField = 256

// kycDocumentBody is the 201 of an upload and, with presignedUrl, a list item (contract §3).
type kycDocumentBody struct {
	ID           string `json:"id"`
	UserID       string `json:"userId"`
	DocumentType string `json:"documentType"`
	documentFile
}

var (
	errNotMultipart = domain.Errorf(domain.Unsupported, "unsupported_media_type", "the request body must be multipart/form-data")
	errFileTooLarge = domain.Errorf(domain.TooLarge, "file_too_large", "the file is larger than 10 MiB")
	errMalformed    = domain.Errorf(domain.Invalid, "malformed_multipart", "the multipart body could not be read")
)

// meter counts and hashes what is read through it, and fails with
// errFileTooLarge as soon as more than max bytes have come, without reading
// further.
type meter struct {
	r   io.Reader
	h   hash.Hash
	n   int64
	max int64
	err error // the first error other than io.EOF, to tell body errors from store errors
}

func (m *meter) Read(p []byte) (int, error) {
	if m.err != nil {
		return 0, m.err
	}
	if rest := m.max + 1 - m.n; int64(len(p)) > rest {
		p = p[:rest]
	}
	k, err := m.r.Read(p)
	m.h.Write(p[:k])
	m.n += int64(k)
	if m.n > m.max {
		err = errFileTooLarge
	}
	if err != nil && err != io.EOF && m.err == nil {
		m.err = err
	}
	return k, err
}

// uploadKYCDocument is POST /users/{userId}/kyc-documents (spec §4.2,
// contract §3): multipart parts file and documentType. The file is
// streamed into the document store (never whole in memory), counted and
// hashed on the way, its type sniffed from its first bytes; then the
// user.kyc_document_uploaded event records its metadata.
func (s *Server) uploadKYCDocument(w http.ResponseWriter, r *http.Request) error {
	c, userID, err := pathUser(r)
	if err != nil {
		return err
	}
	boundary, err := checkMultipart(r)
	if err != nil {
		return err
	}
	if _, err := s.activeUser(r.Context(), c.TenantID, userID); err != nil {
		return err
	}
	up, err := s.receiveUpload(w, r, boundary, c.TenantID, userID, "documentType")
	if err != nil {
		return err
	}
	docType, ok := up.texts["documentType"]
	if !ok {
		s.discard(r.Context(), up)
		return domain.Invalidf("documentType", "is required")
	}
	doc := up.doc
	u, err := s.users.UploadKYCDocument(r.Context(), userStream(c.TenantID, userID), domain.UploadKYCDocument{DocumentID: doc.ID,
		DocumentType: docType, FileName: doc.FileName, ContentType: doc.ContentType, Size: doc.Size, SHA256: doc.SHA256}, metadata(r))
	if err != nil {
		// A refused event (any decided error) leaves no event: delete the
		// bytes. An internal error may hide a commit whose outcome is
		// unknown; its document is left as a harmless orphan instead.
		if domain.ErrorKind(err) != domain.Internal {
			s.discard(r.Context(), up)
		}
		return err
	}
	for _, d := range u.KYCDocuments {
		if d.ID == doc.ID {
			return writeJSON(w, http.StatusCreated, kycDocumentBody{ID: d.ID.String(), UserID: userID.String(),
				DocumentType: d.DocumentType, documentFile: documentFile{FileName: d.FileName, ContentType: d.ContentType,
					Size: d.Size, SHA256: d.SHA256, CreatedAt: timestamp(u.UpdatedAt)}})
		}
	}
	return errors.New("uploaded document missing from the user's state")
}

// multipartError maps a failure reading the body: past the request limit
// or the file limit is 413, anything else 400 (store errors never come here).
func multipartError(err error) error {
	var tooBig *http.MaxBytesError
	var de *domain.Error
	switch {
	case errors.As(err, &tooBig):
		return errFileTooLarge
	case errors.As(err, &de):
		return err
	}
	// mime/multipart reports malformed framing with plain errors; a body
	// that breaks off mid-way is the client's too.
	return &domain.Error{Kind: domain.Invalid, Code: errMalformed.Code, Message: errMalformed.Message, Err: err}
}

// listKYCDocuments is GET /users/{userId}/kyc-documents: newest first, each
// with a presigned download URL valid 900 s.
func (s *Server) listKYCDocuments(w http.ResponseWriter, r *http.Request) error {
	c, userID, err := pathUser(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	limit, err := pageLimit(q.Get("limit"))
	if err != nil {
		return err
	}
	if _, err := s.activeUser(r.Context(), c.TenantID, userID); err != nil {
		return err
	}
	items, next, err := s.documents.ListKYCDocuments(r.Context(), c.TenantID, userID, limit, q.Get("offset"))
	if err != nil {
		return err
	}
	page, err := presignedPage(r.Context(), s.presigner, items, next, func(d domain.KYCDocumentItem) uuid.UUID { return d.ID },
		func(d domain.KYCDocumentItem, link *string) kycDocumentBody {
			return kycDocumentBody{ID: d.ID.String(), UserID: d.UserID.String(), DocumentType: d.DocumentType,
				documentFile: documentFile{FileName: d.FileName, ContentType: d.ContentType, Size: d.Size, SHA256: d.SHA256,
					PresignedURL: link, CreatedAt: timestamp(d.CreatedAt)}}
		})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, page)
}

// downloadDocument is GET /documents/{documentId}, the presigned download:
// no Authorization header, 403 unless the URL verifies, then the bytes.
func (s *Server) downloadDocument(w http.ResponseWriter, r *http.Request) error {
	id, err := s.presigner.Verify(r.Context(), r.URL.EscapedPath(), r.URL.RawQuery)
	if err != nil {
		return err
	}
	d, body, err := s.documents.OpenDocument(r.Context(), id)
	if err != nil {
		return err
	}
	disposition := mime.FormatMediaType("attachment", map[string]string{"filename": d.FileName})
	if disposition == "" {
		disposition = `attachment; filename="document"`
	}
	h := w.Header()
	h.Set("Content-Type", d.ContentType)
	h.Set("Content-Length", strconv.FormatInt(d.Size, 10))
	h.Set("Content-Disposition", disposition)
	h.Set("Cache-Control", "private, max-age=0")
	w.WriteHeader(http.StatusOK)
	if _, err := io.Copy(w, body); err != nil {
		s.logger(r).Warn("download document", "document", id, "err", err)
	}
	return nil
}
