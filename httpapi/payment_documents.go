package httpapi

import (
	"net/http"

	"github.com/google/uuid"

	"github.com/ledger/ledger/domain"
)

// paymentDocumentBody is the 201 of an upload and, with presignedUrl, a list
// item (spec §2.12, contract §6).
type paymentDocumentBody struct {
	PaymentID  string `json:"paymentId"`
	DocumentID string `json:"documentId"`
	documentFile
}

// attachPaymentDocument is POST /payments/{paymentId}/document: one
// supporting document (part file) per call, South African destinations
// only; repeated calls add documents, never replace one.
func (s *Server) attachPaymentDocument(w http.ResponseWriter, r *http.Request) error {
	c, p, err := s.pathPayment(r)
	if err != nil {
		return err
	}
	boundary, err := checkMultipart(r)
	if err != nil {
		return err
	}
	if err := domain.CheckPaymentDocuments(p.Payment); err != nil {
		return err
	}
	up, err := s.receiveUpload(w, r, boundary, c.TenantID, p.ID)
	if err != nil {
		return err
	}
	doc := up.doc
	after, err := s.payments.AttachPaymentDocument(r.Context(), paymentStream(c.TenantID, p.ID), domain.AttachPaymentDocument{
		DocumentID: doc.ID, FileName: doc.FileName, ContentType: doc.ContentType, Size: doc.Size, SHA256: doc.SHA256}, metadata(r))
	if err != nil {
		// As for KYC uploads: a refused event deletes the bytes; an
		// internal error may hide a commit, so its bytes stay.
		if domain.ErrorKind(err) != domain.Internal {
			s.discard(r.Context(), up)
		}
		return err
	}
	return writeJSON(w, http.StatusCreated, paymentDocumentBody{PaymentID: p.ID.String(), DocumentID: doc.ID.String(),
		documentFile: documentFile{FileName: doc.FileName, ContentType: doc.ContentType, Size: doc.Size, SHA256: doc.SHA256,
			CreatedAt: timestamp(after.Payment.UpdatedAt)}})
}

// listPaymentDocuments is GET /payments/{paymentId}/documents: newest
// first, each with a presigned download URL valid 900 s.
func (s *Server) listPaymentDocuments(w http.ResponseWriter, r *http.Request) error {
	c, p, err := s.pathPayment(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	limit, err := pageLimit(q.Get("limit"))
	if err != nil {
		return err
	}
	items, next, err := s.payments.ListPaymentDocuments(r.Context(), c.TenantID, p.ID, limit, q.Get("offset"))
	if err != nil {
		return err
	}
	page, err := presignedPage(r.Context(), s.presigner, items, next, func(d domain.PaymentDocumentItem) uuid.UUID { return d.ID },
		func(d domain.PaymentDocumentItem, link *string) paymentDocumentBody {
			return paymentDocumentBody{PaymentID: d.PaymentID.String(), DocumentID: d.ID.String(),
				documentFile: documentFile{FileName: d.FileName, ContentType: d.ContentType, Size: d.Size, SHA256: d.SHA256,
					PresignedURL: link, CreatedAt: timestamp(d.CreatedAt)}}
		})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, page)
}
