package eventstore

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gowebpki/jcs"

	"github.com/ledger/ledger/domain"
)

// GenesisHash is the prevhash of a tenant's first event.
var GenesisHash = strings.Repeat("0", 64)

// Hash computes an event's chain hash, exactly as contract §9 documents it so
// an auditor can recompute it without our code:
//
//	hash = lowercase hex( SHA-256( prevhash + "\n" + JCS(envelope) ) )
//
// where prevhash is the 64-hex-digit hash of the tenant's previous event in
// position order (64 zeros for its first), and JCS(envelope) is the RFC 8785
// canonical JSON of the stored CloudEvent (as GET /events returns it) with its
// "hash" and "prevhash" members removed.
//
// The sequencer hashes every event, so Hash writes the canonical envelope
// itself (hashCanonical) instead of encoding the envelope and parsing it
// again through JCS (hashReference, the formula spelled out): only the
// event's data goes through the JCS library. Both give the same bytes, which
// TestHashMatchesReference checks; Hash falls back to the reference whenever
// the fast path could differ (a CloudEvent shape it does not know, integers
// beyond 2^53, no data).
func Hash(prevHash string, r domain.Record) (string, error) {
	env := domain.Envelope(r)
	if !envelopeShapeKnown || len(env.Data) == 0 || !exactInteger(env.Position) || !exactInteger(int64(env.StreamVersion)) {
		return hashReference(prevHash, env)
	}
	return hashCanonical(prevHash, env)
}

// hashReference is the documented formula, step by step.
func hashReference(prevHash string, env domain.CloudEvent) (string, error) {
	env.Hash, env.PrevHash = "", ""
	raw, err := json.Marshal(env)
	if err != nil {
		return "", fmt.Errorf("encode envelope %s: %w", env.ID, err)
	}
	canon, err := jcs.Transform(raw)
	if err != nil {
		return "", fmt.Errorf("canonicalise envelope %s: %w", env.ID, err)
	}
	h := sha256.New()
	h.Write([]byte(prevHash))
	h.Write([]byte("\n"))
	h.Write(canon)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// hashCanonical writes JCS(envelope) directly: members in the order of their
// names (all ASCII, so UTF-16 order is byte order), strings escaped as
// RFC 8785 (ECMAScript) does, integers in decimal, and data canonicalised by
// the JCS library.
func hashCanonical(prevHash string, env domain.CloudEvent) (string, error) {
	data, err := jcs.Transform(env.Data)
	if err != nil {
		return "", fmt.Errorf("canonicalise data of %s: %w", env.ID, err)
	}
	b := make([]byte, 0, len(prevHash)+1+400+len(data))
	b = append(b, prevHash...)
	b = append(b, '\n', '{')
	sep := false
	member := func(name string) {
		if sep {
			b = append(b, ',')
		}
		sep = true
		b = append(b, '"')
		b = append(b, name...)
		b = append(b, '"', ':')
	}
	str := func(name, v string, omitEmpty bool) {
		if omitEmpty && v == "" {
			return
		}
		member(name)
		b = appendJCSString(b, v)
	}
	str("actor", env.Actor, true)
	str("causationid", env.CausationID, true)
	str("correlationid", env.CorrelationID, true)
	member("data")
	b = append(b, data...)
	str("datacontenttype", env.DataContentType, false)
	str("id", env.ID, false)
	member("position")
	b = strconv.AppendInt(b, env.Position, 10)
	str("requestid", env.RequestID, true)
	str("source", env.Source, false)
	str("specversion", env.SpecVersion, false)
	str("streamid", env.StreamID, false)
	member("streamversion")
	b = strconv.AppendInt(b, int64(env.StreamVersion), 10)
	str("subject", env.Subject, false)
	str("tenantid", env.TenantID, false)
	str("time", env.Time, false)
	str("type", env.Type, false)
	b = append(b, '}')
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// appendJCSString appends s as a JSON string the way encoding/json then JCS
// leave it: invalid UTF-8 becomes U+FFFD (encoding/json), and only '"', '\\'
// and control characters are escaped, with the short escapes where JSON has
// them and lowercase \u00xx otherwise (RFC 8785 section 3.2.2.2).
func appendJCSString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\b':
				b = append(b, '\\', 'b')
			case c == '\f':
				b = append(b, '\\', 'f')
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', "0123456789abcdef"[c>>4], "0123456789abcdef"[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = utf8.AppendRune(b, utf8.RuneError)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

// exactInteger reports whether n survives JCS's float64 number model.
func exactInteger(n int64) bool { return n > -(1<<53) && n < 1<<53 }

// envelopeShape is the CloudEvent hashCanonical writes: JSON member names,
// omitempty, Go kind. If domain.CloudEvent changes, Hash uses the reference
// formula until hashCanonical is updated to match.
var envelopeShape = []string{
	"specversion,false,string", "id,false,string", "source,false,string", "type,false,string",
	"subject,false,string", "time,false,string", "datacontenttype,false,string", "data,false,slice",
	"tenantid,false,string", "streamid,false,string", "streamversion,false,int", "position,false,int64",
	"actor,true,string", "requestid,true,string", "correlationid,true,string", "causationid,true,string",
	"hash,true,string", "prevhash,true,string",
}

var envelopeShapeKnown = slices.Equal(cloudEventShape(), envelopeShape)

func cloudEventShape() []string {
	t := reflect.TypeFor[domain.CloudEvent]()
	var shape []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		shape = append(shape, fmt.Sprintf("%s,%v,%s", name, opts == "omitempty", f.Type.Kind()))
	}
	return shape
}
