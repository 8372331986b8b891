package domain

import (
	"time"

	"github.com/google/uuid"
)

// AttachPaymentDocument is POST /payments/{id}/document once its file is stored.
type AttachPaymentDocument struct {
	DocumentID  uuid.UUID
	FileName    string
	ContentType string
	Size        int64
	SHA256      string
	Now         time.Time
}

// CheckPaymentDocuments tells whether p takes supporting documents: only
// payments to South African merchants do (spec §4.6), whatever their
// status, so a partner can attach an invoice before or after funding.
func CheckPaymentDocuments(p Payment) error {
	if p.DestinationCountry != CountrySouthAfrica {
		return Errorf(Invalid, "documents_not_supported",
			"supporting documents apply to payments to South African merchants only")
	}
	return nil
}

// DecideAttachPaymentDocument records one more document on p; documents
// add up, none replaces another.
func DecideAttachPaymentDocument(p Payment, c AttachPaymentDocument) ([]Event, error) {
	if p.ID == uuid.Nil {
		return nil, Errorf(NotFound, "not_found", "the payment does not exist")
	}
	if err := CheckPaymentDocuments(p); err != nil {
		return nil, err
	}
	return []Event{PaymentDocumentAttached{DocumentID: c.DocumentID, FileName: c.FileName,
		ContentType: c.ContentType, Size: c.Size, SHA256: c.SHA256,
		Documents: p.Documents + 1, At: c.Now.UTC().Truncate(time.Millisecond)}}, nil
}
