package projections

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ledger/ledger/domain"
)

// markerLists are the lists that page with an offsetMarker.
var markerLists = []string{"users", "payments", "payment-documents", "merchants", "kyc-documents"}

// FuzzOffsetMarker checks the offset markers the list endpoints hand out
// and read back: any offset a caller sends is a position or a 400 naming
// offset, never a panic; a marker decodes to the row it was made from,
// only for the list, tenant and filter that made it, and only as issued.
func FuzzOffsetMarker(f *testing.F) {
	tenant := uuid.MustParse("01937f4e-5a00-7000-8000-000000000001")
	id := uuid.MustParse("01937f4e-5a00-7000-8000-000000000002")
	at := time.Date(2026, 11, 22, 10, 15, 30, 123456789, time.UTC)
	f.Add(encodeMarker("users", tenant, "Active", at, id), uint8(0), "Active", at.Unix(), uint32(at.Nanosecond()), id[:])
	f.Add(encodeMarker("payments", tenant, "<nil>,created,<nil>", at, id), uint8(1), "<nil>,created,<nil>", int64(0), uint32(0), []byte{})
	f.Add("", uint8(2), id.String(), int64(253402300799), uint32(999999999), []byte{1})
	f.Add("dXNlcnN8eA", uint8(3), "", int64(-1), uint32(1e9), []byte{2})
	f.Add("!!!", uint8(4), "|", int64(1), uint32(1), []byte{3})
	f.Fuzz(func(t *testing.T, offset string, which uint8, filter string, sec int64, nsec uint32, idBytes []byte) {
		list := markerLists[int(which)%len(markerLists)]
		if m, err := decodeMarker(offset, list, tenant, filter); err != nil {
			var de *domain.Error
			if !errors.As(err, &de) || de.Kind != domain.Invalid || len(de.Fields) != 1 || de.Fields[0].Field != "offset" {
				t.Fatalf("decodeMarker(%q): got %v, want a 400 naming offset", offset, err)
			}
		} else if (m.at == nil) != (offset == "") {
			t.Fatalf("decodeMarker(%q): got %+v, want a position exactly when an offset is sent", offset, m)
		} else if m.at != nil && encodeMarker(list, tenant, filter, *m.at, m.id) != offset {
			t.Fatalf("decodeMarker(%q): accepted a marker never issued, want only encodeMarker's spelling", offset)
		} else if m.at != nil {
			checkMarker(t, list, tenant, filter, *m.at, m.id)
		}

		// Filters are statuses, ids and commas; never the separator.
		filter = strings.ReplaceAll(filter, "|", "")
		row := time.Unix(sec%253402300800, int64(nsec%1e9)).UTC() // a timestamptz read back: 1970 to 9999
		if sec < 0 {
			row = time.Unix(sec%62135596800, 0).UTC() // and before 1970, back to year 1
		}
		checkMarker(t, list, tenant, filter, row, uuid.UUID(append(idBytes, make([]byte, 16)...)[:16]))
	})
}

// checkMarker fails unless the marker of (at, id) reads back as them for
// its list, tenant and filter, and is refused for any other.
func checkMarker(t *testing.T, list string, tenant uuid.UUID, filter string, at time.Time, id uuid.UUID) {
	t.Helper()
	s := encodeMarker(list, tenant, filter, at, id)
	got, err := decodeMarker(s, list, tenant, filter)
	if err != nil || got.at == nil || !got.at.Equal(at) || got.id != id {
		t.Fatalf("marker of %s %s in %s/%q: got %+v, %v", at, id, list, filter, got, err)
	}
	for _, other := range markerLists {
		if _, err := decodeMarker(s, other, tenant, filter); other != list && err == nil {
			t.Fatalf("marker of %s read as one of %s", list, other)
		}
	}
	if _, err := decodeMarker(s, list, uuid.New(), filter); err == nil {
		t.Fatalf("marker of tenant %s read for another", tenant)
	}
	if _, err := decodeMarker(s, list, tenant, filter+"x"); err == nil {
		t.Fatalf("marker of filter %q read for %q", filter, filter+"x")
	}
}
