// Package rawjson walks the members of a JSON object, or the elements of a
// JSON array, as slices of the input, without decoding them. It is for
// JSON that was valid when it was stored (encoding/json's output, as an
// event's json column keeps it, or Postgres's text of a jsonb value), read
// back many times: a rebuild folds every payment's state from it, where
// encoding/json's Decoder spent most of its time allocating tokens that
// were thrown away.
//
// It checks the structure it walks (quotes, brackets, colons, commas) and
// returns ErrSyntax when that is wrong, but it does not validate the
// values themselves (a number's digits, a literal's spelling): they are
// passed on as they are. Callers that need more run json.Valid first.
package rawjson

import (
	"encoding/binary"
	"encoding/json"
	"errors"
)

// ErrSyntax means the input is not a JSON object (Object) or array (Array)
// as this package reads one.
var ErrSyntax = errors.New("rawjson: malformed JSON")

// Object calls f with each member of the JSON object raw, in order: its
// name unescaped (a slice of raw, unless the name has escapes: no string
// is made for it, since most callers only compare it), the name as
// written (quotes included), and its value. It stops at f's first error
// and returns it.
func Object(raw []byte, f func(name, rawName, value []byte) error) error {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return ErrSyntax
	}
	return members(raw, i, '}', func(i int) (int, error) {
		if raw[i] != '"' {
			return 0, ErrSyntax
		}
		end, special := skipString(raw, i)
		if end < 0 {
			return 0, ErrSyntax
		}
		name := raw[i+1 : end-1 : end-1]
		if special {
			var unescaped string
			if json.Unmarshal(raw[i:end], &unescaped) != nil {
				return 0, ErrSyntax
			}
			name = []byte(unescaped)
		}
		colon := skipSpace(raw, end)
		if colon >= len(raw) || raw[colon] != ':' {
			return 0, ErrSyntax
		}
		start := skipSpace(raw, colon+1)
		vend := skipValue(raw, start)
		if vend < 0 {
			return 0, ErrSyntax
		}
		return vend, f(name, raw[i:end:end], raw[start:vend:vend])
	})
}

// Array calls f with each element of the JSON array raw, in order. It
// stops at f's first error and returns it.
func Array(raw []byte, f func(value []byte) error) error {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return ErrSyntax
	}
	return members(raw, i, ']', func(i int) (int, error) {
		end := skipValue(raw, i)
		if end < 0 {
			return 0, ErrSyntax
		}
		return end, f(raw[i:end:end])
	})
}

// members walks the comma-separated members of the object or array that
// opens at raw[open] and ends with closing, the last non-space byte of raw;
// member reads the one starting at its index and returns the index after it.
func members(raw []byte, open int, closing byte, member func(int) (int, error)) error {
	i := skipSpace(raw, open+1)
	if i < len(raw) && raw[i] == closing {
		if skipSpace(raw, i+1) != len(raw) {
			return ErrSyntax
		}
		return nil
	}
	for i < len(raw) {
		end, err := member(i)
		if err != nil {
			return err
		}
		switch i = skipSpace(raw, end); {
		case i < len(raw) && raw[i] == ',':
			i = skipSpace(raw, i+1)
		case i < len(raw) && raw[i] == closing && skipSpace(raw, i+1) == len(raw):
			return nil
		default:
			return ErrSyntax
		}
	}
	return ErrSyntax
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i], and
// whether it needs encoding/json to read it (escapes, or bytes beyond
// ASCII, which it checks for valid UTF-8); -1 if it does not end. Eight
// bytes at a time pass while none of them is a quote, a backslash or
// beyond ASCII: strings are most of an event's bytes (ids, times, messages
// and invoices), so walking them byte by byte showed in a rebuild's profile
// (docs/performance.md, "Replay").
func skipString(b []byte, i int) (int, bool) {
	special := false
	j := i + 1
	for {
		for j+8 <= len(b) && !mayEndOrEscape(binary.LittleEndian.Uint64(b[j:])) {
			j += 8
		}
		for j < len(b) && b[j] != '"' && b[j] != '\\' && b[j] < 0x80 {
			j++
		}
		if j >= len(b) {
			return -1, false
		}
		switch b[j] {
		case '\\':
			special = true
			j += 2
		case '"':
			return j + 1, special
		default: // beyond ASCII
			special = true
			j++
		}
	}
}

// mayEndOrEscape reports whether one of w's eight bytes may be a quote, a
// backslash or a byte beyond ASCII (never false when one is).
func mayEndOrEscape(w uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	zeroByte := func(x uint64) uint64 { return (x - ones) &^ x & highs } // non-zero iff x has a zero byte
	return (zeroByte(w^(ones*'"'))|zeroByte(w^(ones*'\\'))|w)&highs != 0
}

// skipValue returns the index after the value starting at b[i], or -1.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		end, _ := skipString(b, i)
		return end
	case '{', '[':
		var stack [16]byte
		open := stack[:0] // the brackets still open, innermost last: a mismatched one is an error
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, _ := skipString(b, j)
				if end < 0 {
					return -1
				}
				j = end - 1
			case '{', '[':
				open = append(open, b[j])
			case '}', ']':
				if len(open) == 0 || open[len(open)-1] != b[j]-2 { // '{' is '}'-2, '[' is ']'-2
					return -1
				}
				if open = open[:len(open)-1]; len(open) == 0 {
					return j + 1
				}
			}
		}
		return -1
	case ',', '}', ']', ':':
		return -1
	default:
		j := i
		for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
			j++
		}
		return j
	}
}
