package domain

import (
	"path"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestCleanFileName(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 300)
	for _, tc := range []struct{ name, contentType, want string }{
		{"passport.pdf", ContentTypePDF, "passport.pdf"},
		{"Scan.PDF", ContentTypePDF, "Scan.pdf"},
		{"photo.jpeg", ContentTypeJPEG, "photo.jpeg"},
		{"photo.JPG", ContentTypeJPEG, "photo.jpg"},
		// The extension says what the bytes are, not what the client said.
		{"evil.html", ContentTypePDF, "evil.pdf"},
		{"a.svg", ContentTypePNG, "a.png"},
		{"invoice.pdf", ContentTypeJPEG, "invoice.jpg"},
		{"evil.pdf.exe", ContentTypePDF, "evil.pdf.pdf"},
		{"report", ContentTypePDF, "report.pdf"},
		{"report.", ContentTypePDF, "report.pdf"},
		// Bidi controls and other invisible characters go.
		{"inv\u202Efdp.exe", ContentTypePDF, "invfdp.pdf"},
		{"a\u2066b\u2069\u200B\u200D\uFEFF.png", ContentTypePNG, "ab.png"},
		{"x\u061C\u200E\u200Fy.pdf", ContentTypePDF, "xy.pdf"},
		{"line\u2028break\u2029.pdf", ContentTypePDF, "linebreak.pdf"},
		{"a\x00b\n.pdf", ContentTypePDF, "ab.pdf"},
		{"bad\xffutf8.pdf", ContentTypePDF, "badutf8.pdf"},
		// Paths, hidden names and empty names.
		{`C:\Users\ann\scan 1.png`, ContentTypePNG, "scan 1.png"},
		{"../../etc/passwd", ContentTypePDF, "passwd.pdf"},
		{".htaccess", ContentTypePNG, "htaccess.png"},
		{" . ", ContentTypePDF, "document.pdf"},
		{"", ContentTypeJPEG, "document.jpg"},
		{"\u202E", ContentTypePDF, "document.pdf"},
		{".pdf", ContentTypePDF, "pdf.pdf"},
		{long + ".pdf", ContentTypePDF, strings.Repeat("é", 251) + ".pdf"},
	} {
		if got := cleanFileName(tc.name, tc.contentType); got != tc.want {
			t.Errorf("cleanFileName(%q, %s) = %q, want %q", tc.name, tc.contentType, got, tc.want)
		}
	}
}

// FuzzCleanFileName: whatever the client sends, the stored name is valid
// UTF-8 of 1 to 255 characters, one path element, with no control or
// invisible format character, not hidden, ending in an extension of the
// sniffed type; and cleaning it again changes nothing.
func FuzzCleanFileName(f *testing.F) {
	for _, seed := range []string{"passport.pdf", "evil.html", "inv\u202Efdp.exe", `C:\a\b.png`, "", " .. ", "a.JPEG", "x\xff.pdf"} {
		f.Add(seed, uint8(0))
	}
	types := []string{ContentTypePDF, ContentTypePNG, ContentTypeJPEG}
	f.Fuzz(func(t *testing.T, name string, which uint8) {
		contentType := types[int(which)%len(types)]
		got := cleanFileName(name, contentType)
		if n := utf8.RuneCountInString(got); !utf8.ValidString(got) || n == 0 || n > maxFileName {
			t.Fatalf("cleanFileName(%q) = %q: want valid UTF-8 of 1 to %d characters", name, got, maxFileName)
		}
		if path.Base(got) != got || strings.ContainsAny(got, `/\`) || strings.HasPrefix(got, ".") || strings.HasPrefix(got, " ") {
			t.Fatalf("cleanFileName(%q) = %q: want one path element, not hidden", name, got)
		}
		if i := strings.IndexFunc(got, func(r rune) bool { return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp) }); i >= 0 {
			t.Fatalf("cleanFileName(%q) = %q: has an invisible or control character at %d", name, got, i)
		}
		ok := false
		for _, ext := range fileExtensions[contentType] {
			ok = ok || strings.HasSuffix(got, ext)
		}
		if !ok {
			t.Fatalf("cleanFileName(%q, %s) = %q: want an extension of %v", name, contentType, got, fileExtensions[contentType])
		}
		if again := cleanFileName(got, contentType); again != got {
			t.Fatalf("cleanFileName(%q) = %q, but cleaning that gives %q", name, got, again)
		}
	})
}
