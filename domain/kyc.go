package domain

import (
	"bytes"
	"strings"

	"github.com/google/uuid"
)

// MaxDocumentSize is the largest KYC document accepted: exactly 10 MiB is
// accepted, one byte more is 413 (contract §3).
const MaxDocumentSize = 10 << 20

// Document content types, decided from the file's bytes (contract §3).
const (
	ContentTypePDF  = "application/pdf"
	ContentTypePNG  = "image/png"
	ContentTypeJPEG = "image/jpeg"
)

// documentTypes are the allowed KYC document types (spec §4.2).
var documentTypes = []string{"passport", "national_id", "drivers_license", "proof_of_address", "selfie",
	"cert_of_incorp", "articles", "board_resolution", "ubo_register", "other"}

// KYCDocument is the metadata of one uploaded document; the bytes live in
// the document store, never in an event.
type KYCDocument struct {
	ID           uuid.UUID
	DocumentType string
	FileName     string
	ContentType  string
	Size         int64
	SHA256       string
}

// KYCDocumentUploaded records POST /users/{userId}/kyc-documents: metadata
// only.
type KYCDocumentUploaded struct {
	DocumentID   uuid.UUID `json:"documentId"`
	DocumentType string    `json:"documentType"`
	FileName     string    `json:"fileName" ledger:"personal"`
	ContentType  string    `json:"contentType"`
	Size         int64     `json:"size"`   // bytes
	SHA256       string    `json:"sha256"` // lowercase hex of the file's SHA-256
}

func (KYCDocumentUploaded) EventType() string { return "user.kyc_document_uploaded" }

var _ = register(EventDef{Type: "user.kyc_document_uploaded", Version: 1,
	New: func() Event { return new(KYCDocumentUploaded) },
	Doc: "A KYC/KYB document was uploaded for the user; data is its metadata, never its bytes."})

// UploadKYCDocument is a stored upload: the caller has streamed the file
// into the document store, counting its bytes and hashing them.
type UploadKYCDocument struct {
	DocumentID   uuid.UUID // a new UUIDv7, made by the caller
	DocumentType string    // as sent: case-insensitive
	FileName     string    // the multipart part's file name
	ContentType  string    // from SniffContentType
	Size         int64
	SHA256       string
}

// DecideUploadKYCDocument records a document's metadata (spec §4.2,
// contract §3): an allowed document type, stored lowercase; a PDF, PNG or
// JPEG (415 otherwise); 1 byte to 10 MiB (413 over).
func DecideUploadKYCDocument(u User, c UploadKYCDocument) ([]Event, error) {
	if err := requireActive(u); err != nil {
		return nil, err
	}
	docType, err := NormaliseDocumentType(c.DocumentType)
	if err != nil {
		return nil, err
	}
	switch {
	case c.Size > MaxDocumentSize:
		return nil, Errorf(TooLarge, "file_too_large", "the file is larger than 10 MiB")
	case c.Size <= 0:
		return nil, Invalidf("file", "must not be empty")
	case c.ContentType != ContentTypePDF && c.ContentType != ContentTypePNG && c.ContentType != ContentTypeJPEG:
		return nil, errUnsupportedDocument()
	case len(c.SHA256) != 64 || strings.Trim(c.SHA256, "0123456789abcdef") != "" || c.DocumentID == uuid.Nil:
		return nil, Errorf(Internal, "bad_upload", "upload %s has no document id or no lowercase hex sha256", c.DocumentID)
	}
	for _, d := range u.KYCDocuments {
		if d.ID == c.DocumentID {
			return nil, Errorf(Internal, "bad_upload", "document id %s is not new", c.DocumentID)
		}
	}
	return []Event{KYCDocumentUploaded{DocumentID: c.DocumentID, DocumentType: docType,
		FileName: cleanFileName(c.FileName, c.ContentType), ContentType: c.ContentType, Size: c.Size, SHA256: c.SHA256}}, nil
}

// NormaliseDocumentType returns a KYC document type in lowercase, or a 400
// naming documentType when it is not in spec §4.2's list.
func NormaliseDocumentType(s string) (string, error) {
	var fe fieldErrors
	t := s
	if strings.TrimSpace(t) == "" {
		fe.add("documentType", "is required")
	} else {
		t = fe.oneOf("documentType", strings.ToLower(strings.TrimSpace(s)), documentTypes)
	}
	if err := fe.err(); err != nil {
		return "", err
	}
	return t, nil
}

// errUnsupportedDocument is the 415 of a file that is not a PDF, PNG or JPEG.
func errUnsupportedDocument() error {
	return Errorf(Unsupported, "unsupported_document", "the file must be a PDF, PNG or JPEG document")
}

// SniffContentType decides a document's content type from its first bytes,
// whatever the upload's header says (contract §3): a PDF starts "%PDF-", a
// PNG with its 8-byte signature, a JPEG with FF D8 FF. Anything else is 415.
func SniffContentType(head []byte) (string, error) {
	switch {
	case bytes.HasPrefix(head, []byte("%PDF-")):
		return ContentTypePDF, nil
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		return ContentTypePNG, nil
	case bytes.HasPrefix(head, []byte{0xFF, 0xD8, 0xFF}):
		return ContentTypeJPEG, nil
	}
	return "", errUnsupportedDocument()
}
