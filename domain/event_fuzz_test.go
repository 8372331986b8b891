package domain

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
)

// FuzzDecodeEvent feeds any stored data, type and schema version to the
// event decoder, as a replay or the relay reads rows: it never panics; it
// decodes data (and metadata) to what encoding/json decodes it to, and
// refuses what encoding/json refuses; what it decodes stores again as the
// same bytes, and can be published (otherwise the relay would stall on
// the row) without any member the struct's ledger tags withhold.
func FuzzDecodeEvent(f *testing.F) {
	for _, def := range EventDefs() {
		e, n := def.New(), 0
		fillExample(reflect.ValueOf(e).Elem(), "", &n)
		data, err := json.Marshal(e)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(def.Type, def.Version, data)
	}
	f.Add("user.created", 1, []byte(`{"userId":"01937f4e-5a00-7000-8000-000000000001","EMAIL":"a@b.example","em\u0061il":"c","name":null}`))
	f.Add("user.kyc_updated", 1, []byte(`{"businessPersons":[{"firstName":"x","ownership":1e308},null],"business":{"phone":"+1"}}`))
	f.Add("payment.created", 1, []byte(`{"payment":{"amount":"1e-7","meta":{"a":[1,{"b":null}]}},"at":"2026-11-22T10:15:30Z"}`))
	f.Add("user.created", 2, []byte(`{}`))
	f.Add("user.created", 0, []byte(`{}`))
	f.Add("user.created", 1, []byte(`[]`))
	f.Add("user.created", 1, []byte(`null`))
	f.Add("nope.created", 1, []byte(`{}`))
	f.Add("payment.webhook_attempted", 1, []byte(`{"Attempt":2,"attempt":3,"statusCode":null,"at":"2026-11-26T06:00:00+02:00","x":[1e400]}`))
	f.Add("payment.deposited", 1, []byte(`{"amount":null,"total":1500,"postings":[{"amount":"1.50","side":"debit"},null],"message":"caf`+"\xc3"+`"}`))
	f.Add("payment.created", 1, []byte(`{"meta":{ "a" : [1, 2] },"depositDetails":null,"amount":"12"}`))
	f.Add("payment.success", 1, []byte(`{"actor":"apikey:lk_1","Actor":"x","requestId":"\u00e9","causationId":7}`))
	f.Fuzz(func(t *testing.T, eventType string, version int, data []byte) {
		e, err := DecodeEvent(eventType, version, data)
		if def, ok := LookupEvent(eventType); ok && version == def.Version {
			want := def.New()
			wantErr := json.Unmarshal(data, want)
			if (err == nil) != (wantErr == nil) || err == nil && !reflect.DeepEqual(e, derefEvent(want)) {
				t.Fatalf("%s %q: decoded %#v (%v), encoding/json %#v (%v)", eventType, data, e, err, want, wantErr)
			}
		}
		var wantMeta Metadata
		wantErr := json.Unmarshal(data, &wantMeta)
		if meta, metaErr := DecodeMetadata(data); (metaErr == nil) != (wantErr == nil) || metaErr == nil && meta != wantMeta {
			t.Fatalf("metadata %q: decoded %+v (%v), encoding/json %+v (%v)", data, meta, metaErr, wantMeta, wantErr)
		}
		public, pubErr := PublicData(Record{Type: eventType, SchemaVersion: version, Data: data})
		if err != nil {
			return
		}
		if e.EventType() != eventType {
			t.Fatalf("decoded %s as %s", eventType, e.EventType())
		}
		if pubErr != nil {
			t.Fatalf("%s %s decodes but does not publish: %v", eventType, data, pubErr)
		}
		checkWithheld(t, eventType, public)
		stored := mustStore(t, e)
		again, err := DecodeEvent(eventType, stored.SchemaVersion, stored.Data)
		if err != nil {
			t.Fatalf("decode %s as stored: %v", stored.Data, err)
		}
		if restored := mustStore(t, again); string(restored.Data) != string(stored.Data) {
			t.Fatalf("stored %s, then %s after a round trip", stored.Data, restored.Data)
		}
	})
}

// FuzzEventRoundTrip builds an event of every registered type from fuzzed
// bytes (every string, number, time, id and decimal inside it) and checks
// that it stores and decodes to itself and publishes without its withheld
// members.
func FuzzEventRoundTrip(f *testing.F) {
	f.Add(uint16(0), []byte{})
	f.Add(uint16(1), []byte("\x05hello\x00\xff\xfe\x80\x01\x02\x03\x04\x05\x06\x07\x08\x09"))
	f.Add(uint16(7), []byte("\x03\xc3\xa9\xff\x7f\xff\xff\xff\xff\xff\xff\xff\x80"))
	defs := EventDefs()
	f.Fuzz(func(t *testing.T, which uint16, src []byte) {
		def := defs[int(which)%len(defs)]
		e := def.New()
		fillFrom(reflect.ValueOf(e).Elem(), &fuzzSource{b: src})
		stored := mustStore(t, derefEvent(e))
		got, err := stored.Decode()
		if err != nil {
			t.Fatalf("decode %s: %v", stored.Data, err)
		}
		if reflect.TypeOf(got) != reflect.TypeOf(derefEvent(e)) {
			t.Fatalf("got a %T, want a %T", got, derefEvent(e))
		}
		if again := mustStore(t, got); string(again.Data) != string(stored.Data) {
			t.Fatalf("stored %s, decoded and stored again %s", stored.Data, again.Data)
		}
		public, err := PublicData(stored)
		if err != nil {
			t.Fatalf("publish %s: %v", stored.Data, err)
		}
		checkWithheld(t, def.Type, public)
	})
}

// mustStore is the record of e as the event store writes it.
func mustStore(t *testing.T, e Event) Record {
	t.Helper()
	rec, err := NewRecord(StreamRef{TenantID: uuid.New(), Type: "user", ID: uuid.New()}, 1, e, Metadata{}, uuid.New(), testNow)
	if err != nil {
		t.Fatalf("store %+v: %v", e, err)
	}
	return rec
}

// checkWithheld reads published data as a subscriber would, into the
// event's struct, and fails if any member with a ledger tag came through.
// It reads the tags itself rather than trusting the registry's tree.
func checkWithheld(t *testing.T, eventType string, public json.RawMessage) {
	t.Helper()
	def, _ := LookupEvent(eventType)
	e := def.New()
	if err := json.Unmarshal(public, e); err != nil {
		t.Fatalf("published data of %s does not decode: %v: %s", eventType, err, public)
	}
	if path := leak(reflect.ValueOf(e).Elem(), eventType); path != "" {
		t.Fatalf("published %s carries withheld %s: %s", eventType, path, public)
	}
}

// leak returns the path of the first non-zero field with a ledger tag in v.
func leak(v reflect.Value, path string) string {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			return leak(v.Elem(), path)
		}
	case reflect.Slice:
		if opaque(v.Type()) {
			return ""
		}
		for i := range v.Len() {
			if p := leak(v.Index(i), path+"[]"); p != "" {
				return p
			}
		}
	case reflect.Struct:
		if opaque(v.Type()) {
			return ""
		}
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() && !f.Anonymous {
				continue
			}
			p := path + "." + f.Name
			if f.Tag.Get("ledger") != "" && !v.Field(i).IsZero() {
				return p
			}
			if q := leak(v.Field(i), p); q != "" {
				return q
			}
		}
	}
	return ""
}

// fuzzSource hands out fuzzed bytes; zeros once they run out.
type fuzzSource struct{ b []byte }

func (s *fuzzSource) bytes(n int) []byte {
	out := make([]byte, n)
	k := copy(out, s.b)
	s.b = s.b[k:]
	return out
}

func (s *fuzzSource) uint64() uint64 { return binary.BigEndian.Uint64(s.bytes(8)) }

// fillFrom sets v and everything inside it from src: valid UTF-8 strings,
// any integers, finite floats, times in the years JSON can hold, decimals
// of modest exponent, slices of up to three elements.
func fillFrom(v reflect.Value, src *fuzzSource) {
	switch v.Type() {
	case timeType:
		sec := int64(src.uint64() % 253402300800) // 1970 to 9999: RFC 3339 holds four-digit years
		v.Set(reflect.ValueOf(time.Unix(sec, int64(src.uint64()%1e9)).UTC()))
		return
	case uuidType:
		v.Set(reflect.ValueOf(uuid.UUID(src.bytes(16))))
		return
	case decimalType:
		v.Set(reflect.ValueOf(decimal.New(int64(src.uint64()), int32(int8(src.bytes(1)[0])))))
		return
	case rawType:
		raw, _ := json.Marshal(string(src.bytes(int(src.bytes(1)[0]) % 16)))
		v.Set(reflect.ValueOf(json.RawMessage(raw)))
		return
	}
	switch v.Kind() {
	case reflect.String:
		// Strings reach events through JSON requests, whose decoder has
		// already replaced invalid UTF-8.
		v.SetString(strings.ToValidUTF8(string(src.bytes(int(src.bytes(1)[0])%32)), "\uFFFD"))
	case reflect.Bool:
		v.SetBool(src.bytes(1)[0]&1 == 1)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(src.uint64()) >> (64 - v.Type().Bits()))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(src.uint64() >> (64 - v.Type().Bits()))
	case reflect.Float32, reflect.Float64:
		x := math.Float64frombits(src.uint64())
		if math.IsNaN(x) || math.IsInf(x, 0) {
			x = 0 // JSON has no NaN or infinity
		}
		v.SetFloat(x)
	case reflect.Pointer:
		if src.bytes(1)[0]&1 == 1 {
			v.Set(reflect.New(v.Type().Elem()))
			fillFrom(v.Elem(), src)
		}
	case reflect.Slice:
		n := int(src.bytes(1)[0] % 4)
		v.Set(reflect.MakeSlice(v.Type(), n, n))
		for i := range n {
			fillFrom(v.Index(i), src)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Field(i).CanSet() {
				fillFrom(v.Field(i), src)
			}
		}
	}
}
