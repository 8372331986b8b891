package httpapi

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ledger/ledger/domain"
)

// fakeKeys is a SigningKeys with fixed keys; the newest is "k2".
type fakeKeys map[string]SigningKey

func (k fakeKeys) CurrentSigningKey(context.Context) (SigningKey, error) {
	return k["k2"], nil
}

func (k fakeKeys) SigningKey(_ context.Context, kid string) (SigningKey, error) {
	if key, ok := k[kid]; ok {
		return key, nil
	}
	return SigningKey{}, domain.Errorf(domain.Unauthenticated, "invalid_token", "unknown signing key")
}

// k1RetiredAt is when k1 stopped signing: the fixture's clock.
var k1RetiredAt = time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)

// testKeys sign tenant tokens for an hour and user tokens for a day.
var testKeys = fakeKeys{
	"k1": {ID: "k1", Secret: []byte("first secret"), RetiredAt: k1RetiredAt, TenantTokenTTL: time.Hour, UserTokenTTL: 24 * time.Hour},
	"k2": {ID: "k2", Secret: []byte("second secret"), TenantTokenTTL: time.Hour, UserTokenTTL: 24 * time.Hour},
}

// testPresigner signs at a fixed clock that the test moves.
func testPresigner(now *time.Time) *Presigner {
	return NewPresigner(testKeys, "https://ledger.example/", func() time.Time { return *now })
}

func splitURL(t testing.TB, u string) (path, query string) {
	t.Helper()
	rest, ok := strings.CutPrefix(u, "https://ledger.example")
	if !ok {
		t.Fatalf("presigned URL: got %s, want it under https://ledger.example", u)
	}
	path, query, _ = strings.Cut(rest, "?")
	return path, query
}

func TestPresignRoundTrip(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_800_000_000, 0)
	p := testPresigner(&now)
	id := uuid.Must(uuid.NewV7())
	u, err := p.Sign(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	want := "https://ledger.example/documents/" + id.String() + "?expires=" + strconv.FormatInt(now.Unix()+900, 10) + "&kid=k2&signature="
	if !strings.HasPrefix(u, want) {
		t.Fatalf("Sign: got %s, want prefix %s", u, want)
	}
	path, query := splitURL(t, u)
	for _, tt := range []struct {
		name string
		at   time.Time
		code string
	}{
		{"at once", now, ""},
		{"one second before expiry", now.Add(899 * time.Second), ""},
		{"at expiry", now.Add(900 * time.Second), "presigned_url_expired"},
		{"a day later", now.Add(24 * time.Hour), "presigned_url_expired"},
	} {
		at := tt.at
		got, err := testPresigner(&at).Verify(context.Background(), path, query)
		if tt.code == "" && (err != nil || got != id) {
			t.Errorf("%s: got %v %v, want %s", tt.name, got, err, id)
		}
		if tt.code != "" && errorCode(err) != tt.code {
			t.Errorf("%s: got %v, want %s", tt.name, err, tt.code)
		}
	}
	// Every single-byte change of the path or query is refused.
	whole := path + "?" + query
	for i := range whole {
		for _, c := range []byte{'0', 'a', 'f', 'A', '&', '=', '%', '/', '?', ';', 'x', '+'} {
			if whole[i] == c {
				continue
			}
			bad := []byte(whole)
			bad[i] = c
			bp, bq, _ := strings.Cut(string(bad), "?")
			if _, err := p.Verify(context.Background(), bp, bq); domain.ErrorKind(err) != domain.Forbidden {
				t.Fatalf("changed %q: got %v, want 403", bad, err)
			}
		}
	}
	// Unknown kid, missing parameters, a key of another label.
	for _, q := range []string{"", "expires=1&kid=k2", strings.Replace(query, "kid=k2", "kid=k9", 1),
		strings.Replace(query, "kid=k2", "kid=k1", 1), query + "&extra=1", "kid=k2&" + query} {
		if _, err := p.Verify(context.Background(), path, q); domain.ErrorKind(err) != domain.Forbidden {
			t.Errorf("query %q: got %v, want 403", q, err)
		}
	}
}

// FuzzPresignVerify feeds arbitrary paths and queries to the verifier: it
// never panics, refuses with 403 only, and accepts nothing but exactly the
// URL the signer writes for that document, kid and expiry.
func FuzzPresignVerify(f *testing.F) {
	now := time.Unix(1_800_000_000, 0)
	p := testPresigner(&now)
	id := uuid.MustParse("01936f52-4c1e-7a2b-9d3e-1f2a3b4c5d6e")
	u, _ := p.Sign(context.Background(), id)
	path, query := splitURL(f, u)
	f.Add(path, query)
	f.Add(path, strings.Replace(query, "kid=k2", "kid=k1", 1))
	f.Add(path+"/", query)
	f.Add("/documents/"+strings.ToUpper(id.String()), query)
	f.Add(path, "expires=9999999999&kid=k2&signature="+strings.Repeat("0", 64))
	f.Add("", "")
	f.Add("/documents/", "%zz")
	f.Fuzz(func(t *testing.T, path, query string) {
		got, err := p.Verify(context.Background(), path, query)
		if err != nil {
			if domain.ErrorKind(err) != domain.Forbidden {
				t.Fatalf("Verify(%q, %q): got %v, want a 403", path, query, err)
			}
			return
		}
		exp, _ := strconv.ParseInt(strings.TrimPrefix(strings.Split(query, "&")[0], "expires="), 10, 64)
		kid := strings.TrimPrefix(strings.Split(query, "&")[1], "kid=")
		if want := presignedPath(got, exp, kid, testKeys[kid].Secret); path+"?"+query != want {
			t.Fatalf("Verify(%q, %q): accepted, want only the signed URL %q", path, query, want)
		}
	})
}

func errorCode(err error) string {
	var de *domain.Error
	if errors.As(err, &de) {
		return de.Code
	}
	return ""
}

// FuzzPresignRoundTrip signs a URL for any document at any time and
// checks it against the verifier: it verifies, for that document, until
// exactly 900 s after signing and never after; a copy with one byte
// replaced, inserted or removed, anywhere in its path or query, never
// verifies.
func FuzzPresignRoundTrip(f *testing.F) {
	f.Add([]byte{1, 2, 3}, int64(1_800_000_000), int64(0), uint8(0), uint16(0), byte('x'))
	f.Add([]byte{}, int64(0), int64(899), uint8(1), uint16(40), byte('0'))
	f.Add([]byte("sixteen bytes id"), int64(253402300799), int64(900), uint8(2), uint16(90), byte('&'))
	f.Add([]byte{0xff}, int64(-1), int64(-5000), uint8(0), uint16(120), byte('%'))
	f.Fuzz(func(t *testing.T, idBytes []byte, signedAt, age int64, edit uint8, at uint16, c byte) {
		id := uuid.UUID(append(idBytes, make([]byte, 16)...)[:16])
		signed := time.Unix(signedAt%253402300000, 0) // any second within 8,000 years of 1970
		now := signed
		u, err := testPresigner(&now).Sign(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		path, query := splitURL(t, u)
		age %= 1 << 33 // some 270 years either way, within a time.Duration
		now = signed.Add(time.Duration(age) * time.Second)
		got, err := testPresigner(&now).Verify(context.Background(), path, query)
		if fresh := age < int64(presignTTL/time.Second); fresh && (err != nil || got != id) {
			t.Fatalf("%s verified %ds after signing: got %v, %v, want %s", u, age, got, err, id)
		} else if !fresh && errorCode(err) != "presigned_url_expired" {
			t.Fatalf("%s verified %ds after signing: got %v, %v, want presigned_url_expired", u, age, got, err)
		}

		whole := []byte(path + "?" + query)
		i := int(at) % (len(whole) + 1)
		var bad []byte
		switch edit % 3 {
		case 0:
			if i == len(whole) || whole[i] == c {
				return
			}
			bad = slices.Concat(whole[:i], []byte{c}, whole[i+1:])
		case 1:
			bad = slices.Concat(whole[:i], []byte{c}, whole[i:])
		default:
			if i == len(whole) {
				return
			}
			bad = slices.Concat(whole[:i], whole[i+1:])
		}
		bp, bq, _ := strings.Cut(string(bad), "?")
		if got, err := testPresigner(&signed).Verify(context.Background(), bp, bq); domain.ErrorKind(err) != domain.Forbidden {
			t.Fatalf("edited %s into %s: got %v, %v, want 403", whole, bad, got, err)
		}
	})
}
