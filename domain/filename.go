package domain

import (
	"path"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxFileName bounds a stored file name, in characters, its extension
// included.
const maxFileName = 255

// fileExtensions are the extensions a document's name may end in, by its
// sniffed content type; the first is the one given when it ends in none
// of them.
var fileExtensions = map[string][]string{
	ContentTypePDF:  {".pdf"},
	ContentTypePNG:  {".png"},
	ContentTypeJPEG: {".jpg", ".jpeg"},
}

// cleanFileName is the name a document is shown and downloaded under,
// made from the client's: its last path element, without what can make a
// name read other than it is, and ending in an extension of contentType
// (sniffed from the bytes), so a PDF named evil.html becomes evil.pdf and
// a PNG named a.svg becomes a.png. Dropped: control characters, invalid
// UTF-8, and invisible format characters (Unicode Cf: the bidi controls
// that show "inv\u202Efdp.exe" as "invexe.pdf", zero-width characters),
// line and paragraph separators; leading and trailing spaces and dots. An
// empty name becomes "document". At most maxFileName characters.
func cleanFileName(name, contentType string) string {
	name = strings.ReplaceAll(name, `\`, "/")
	name = strings.Map(func(r rune) rune {
		if r == '/' || r == utf8.RuneError || unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp) { // "/" is path.Base("/")
			return -1
		}
		return r
	}, path.Base(name))
	stem, ext := splitExtension(strings.Trim(name, " ."), fileExtensions[contentType])
	stem = strings.TrimRight(stem, " .")
	if stem == "" {
		stem = "document"
	}
	if r := []rune(stem); len(r)+len(ext) > maxFileName {
		stem = strings.TrimRight(string(r[:maxFileName-len(ext)]), " .")
	}
	return stem + ext
}

// splitExtension returns name's stem and the extension it keeps: its own,
// in lower case, when allowed lists it; else allowed's first (none when
// allowed is empty) in place of the last one it has.
func splitExtension(name string, allowed []string) (stem, ext string) {
	stem = name
	if i := strings.LastIndexByte(name, '.'); i > 0 {
		stem, ext = name[:i], strings.ToLower(name[i:])
	}
	for _, a := range allowed {
		if ext == a {
			return stem, ext
		}
	}
	if len(allowed) == 0 {
		return stem, ""
	}
	return stem, allowed[0]
}
