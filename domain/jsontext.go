package domain

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/gowebpki/jcs"
)

// CheckJSONText reports what in b, a JSON text, encoding/json would change
// without a word when decoding it: bytes that are not UTF-8, and escaped
// UTF-16 surrogates that do not pair. Both become U+FFFD, so a name sent
// as "Cafe\xC3" would be stored as "Cafe\uFFFD". A strict API refuses them
// instead of storing text the partner did not send.
func CheckJSONText(b []byte) error {
	if !utf8.Valid(b) {
		return errors.New("it is not valid UTF-8")
	}
	// Outside strings valid JSON has no backslash, so every backslash
	// starts an escape; each is consumed whole (\\ included).
	for i := bytes.IndexByte(b, '\\'); i >= 0; i = nextBackslash(b, i) {
		if i+1 >= len(b) || b[i+1] != 'u' {
			continue
		}
		r, ok := escapedRune(b[i:])
		switch {
		case !ok:
			continue // malformed: the decoder says so
		case utf16.IsSurrogate(r) && r < 0xdc00:
			low, ok := escapedRune(b[i+6:])
			if !ok || utf16.DecodeRune(r, low) == utf8.RuneError {
				return errors.New(`it holds an escaped UTF-16 high surrogate (\uD800-\uDBFF) without its low surrogate`)
			}
			i += 6 // the pair's second half
		case utf16.IsSurrogate(r):
			return errors.New(`it holds an escaped UTF-16 low surrogate (\uDC00-\uDFFF) without its high surrogate`)
		}
	}
	return nil
}

// nextBackslash is the next backslash after the escape at i.
func nextBackslash(b []byte, i int) int {
	skip := 2
	if i+1 < len(b) && b[i+1] == 'u' {
		skip = 6
	}
	if i+skip >= len(b) {
		return -1
	}
	j := bytes.IndexByte(b[i+skip:], '\\')
	if j < 0 {
		return -1
	}
	return i + skip + j
}

// escapedRune decodes the \uXXXX escape b starts with.
func escapedRune(b []byte) (rune, bool) {
	if len(b) < 6 || b[0] != '\\' || b[1] != 'u' {
		return 0, false
	}
	v, err := strconv.ParseUint(string(b[2:6]), 16, 16)
	return rune(v), err == nil
}

// storableJSON reports why raw, a JSON value taken from a partner as it is
// (a payment's meta), could not be kept in an event. Every event's data is
// canonicalised (RFC 8785) to hash it when it is sequenced, so what the
// canonicalisation refuses (duplicate member names, numbers beyond a
// double, text that is not UTF-8 or holds an unpaired surrogate) would
// stop the sequencer for every tenant; and the read models keep it as
// jsonb, which refuses \u0000 and numbers so small they overflow its
// exponent (1e-999999; RFC 8785 would make it 0).
func storableJSON(raw []byte) error {
	if _, err := jcs.Transform(raw); err != nil {
		return errors.New(strings.ToLower(err.Error()[:1]) + err.Error()[1:])
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		switch v := tok.(type) {
		case string:
			if strings.ContainsRune(v, 0) {
				return errors.New(`it holds \u0000`)
			}
		case json.Number:
			mantissa, _, _ := strings.Cut(strings.ToLower(string(v)), "e")
			if f, _ := strconv.ParseFloat(string(v), 64); f == 0 && strings.ContainsAny(mantissa, "123456789") {
				return errors.New("number " + string(v) + " is too small for a double")
			}
		}
	}
}
