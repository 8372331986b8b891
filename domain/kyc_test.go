package domain

import (
	"strings"
	"testing"

	"github.com/google/uuid"
)

func TestSniffContentType(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		head string
		want string // "" means 415
	}{
		{name: "pdf", head: "%PDF-1.7\n%\xe2\xe3", want: ContentTypePDF},
		{name: "png", head: "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", want: ContentTypePNG},
		{name: "jpeg jfif", head: "\xff\xd8\xff\xe0\x00\x10JFIF", want: ContentTypeJPEG},
		{name: "jpeg exif", head: "\xff\xd8\xff\xe1", want: ContentTypeJPEG},
		{name: "empty", head: ""},
		{name: "pdf without dash", head: "%PDF1.7"},
		{name: "pdf lower case", head: "%pdf-1.7"},
		{name: "pdf after whitespace", head: " %PDF-1.7"},
		{name: "png cut short", head: "\x89PNG\r\n"},
		{name: "jpeg two bytes", head: "\xff\xd8"},
		{name: "gif", head: "GIF89a"},
		{name: "html", head: "<!DOCTYPE html>"},
		{name: "zip", head: "PK\x03\x04"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := SniffContentType([]byte(tt.head))
			if tt.want == "" {
				wantError(t, err, Unsupported, "unsupported_document")
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("got %q, %v, want %q", got, err, tt.want)
			}
		})
	}
}

func TestDecideUploadKYCDocument(t *testing.T) {
	t.Parallel()
	sum := strings.Repeat("ab", 32)
	valid := UploadKYCDocument{DocumentType: "Passport", FileName: "passport.pdf", ContentType: ContentTypePDF, Size: 1234, SHA256: sum}
	tests := []struct {
		name         string
		state        User
		mutate       func(*UploadKYCDocument)
		wantType     string
		wantFileName string
		wantKind     Kind
		wantCode     string
		wantFld      []string
	}{
		{name: "passport, case-insensitive", wantType: "passport", wantFileName: "passport.pdf"},
		{name: "every allowed type", mutate: func(c *UploadKYCDocument) { c.DocumentType = " UBO_Register " }, wantType: "ubo_register",
			wantFileName: "passport.pdf"},
		{name: "exactly 10 MiB", mutate: func(c *UploadKYCDocument) { c.Size = 10 << 20 }, wantType: "passport",
			wantFileName: "passport.pdf"},
		{name: "path in the file name", mutate: func(c *UploadKYCDocument) { c.FileName, c.ContentType = `C:\Users\ann\scan 1.png`, ContentTypePNG },
			wantType: "passport", wantFileName: "scan 1.png"},
		{name: "no file name", mutate: func(c *UploadKYCDocument) { c.FileName, c.ContentType = "", ContentTypeJPEG },
			wantType: "passport", wantFileName: "document.jpg"},
		{name: "control characters in the file name", mutate: func(c *UploadKYCDocument) { c.FileName = "a\x00b\n.pdf" },
			wantType: "passport", wantFileName: "ab.pdf"},
		{name: "one byte over 10 MiB", mutate: func(c *UploadKYCDocument) { c.Size = 10<<20 + 1 },
			wantKind: TooLarge, wantCode: "file_too_large"},
		{name: "empty file", mutate: func(c *UploadKYCDocument) { c.Size = 0 },
			wantKind: Invalid, wantCode: "validation_failed", wantFld: []string{"file"}},
		{name: "document type not allowed", mutate: func(c *UploadKYCDocument) { c.DocumentType = "residence_permit" },
			wantKind: Invalid, wantCode: "validation_failed", wantFld: []string{"documentType"}},
		{name: "document type missing", mutate: func(c *UploadKYCDocument) { c.DocumentType = "" },
			wantKind: Invalid, wantCode: "validation_failed", wantFld: []string{"documentType"}},
		{name: "gif", mutate: func(c *UploadKYCDocument) { c.ContentType = "image/gif" },
			wantKind: Unsupported, wantCode: "unsupported_document"},
		{name: "disabled user", state: disabled(newUser()), wantKind: NotFound, wantCode: "not_found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			state := tt.state
			if state.ID == uuid.Nil {
				state = newUser()
			}
			c := valid
			c.DocumentID = uuid.New()
			if tt.mutate != nil {
				tt.mutate(&c)
			}
			events, err := DecideUploadKYCDocument(state, c)
			if tt.wantCode != "" {
				wantError(t, err, tt.wantKind, tt.wantCode, tt.wantFld...)
				return
			}
			wantTypes(t, events, err, "user.kyc_document_uploaded")
			want := KYCDocumentUploaded{DocumentID: c.DocumentID, DocumentType: tt.wantType, FileName: tt.wantFileName,
				ContentType: c.ContentType, Size: c.Size, SHA256: sum}
			if got := events[0]; got != want {
				t.Errorf("got %+v, want %+v", got, want)
			}
			if docs := fold(state, events...).KYCDocuments; len(docs) != 1 || docs[0].ID != c.DocumentID {
				t.Errorf("got %+v, want the document's metadata", docs)
			}
		})
	}
}

func TestEveryDocumentTypeIsAccepted(t *testing.T) {
	t.Parallel()
	for _, d := range documentTypes {
		if got, err := NormaliseDocumentType(strings.ToUpper(d)); err != nil || got != d {
			t.Errorf("got %q, %v, want %q", got, err, d)
		}
	}
}
