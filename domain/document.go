package domain

import (
	"time"

	"github.com/google/uuid"
)

// StoredDocument is a document in the document store: its metadata; the
// bytes are streamed separately. KYC documents are owned by a user, payment
// documents (spec §2.12) by a payment.
type StoredDocument struct {
	ID          uuid.UUID
	TenantID    uuid.UUID
	Owner       uuid.UUID
	ContentType string
	Size        int64
	SHA256      string // lowercase hex
	FileName    string
	CreatedAt   time.Time
}

// KYCDocumentItem is one row of GET /users/{userId}/kyc-documents.
type KYCDocumentItem struct {
	KYCDocument
	UserID    uuid.UUID
	CreatedAt time.Time
}

// CleanFileName is the file name a document is stored and served under:
// the last element of the client's name, without control or invisible
// format characters, ending in an extension of its sniffed content type,
// at most 255 characters, "document.<ext>" when empty (cleanFileName).
func CleanFileName(name, contentType string) string { return cleanFileName(name, contentType) }
