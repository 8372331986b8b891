package httpapi

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ledger/ledger/domain"
)

// presignTTL is how long a presigned document URL works (spec §4.6, §8).
const presignTTL = 900 * time.Second

// presignLabel derives the presigning key from a JWT signing key, so a
// presigned URL's signature can never pass as a JWT's and the other way round.
const presignLabel = "ledger presigned-url v1"

// maxKIDLength bounds the kid a URL may name before any key lookup.
const maxKIDLength = 128

// Presigner signs and verifies the download URLs of documents (contract §6,
// last bullet), shared by KYC and payment documents:
//
//	GET {publicURL}/documents/{documentId}?expires=<unix s>&kid=<kid>&signature=<hex>
//
// signature is lowercase hex HMAC-SHA256, keyed with HMAC(signing key of kid,
// presignLabel), over "GET\n<path>\n<expires>\n<kid>". A URL verifies only in
// exactly the form Sign writes it, so changing any byte of it is 403.
type Presigner struct {
	keys      SigningKeys
	publicURL string // no trailing slash
	now       func() time.Time
}

// NewPresigner returns a Presigner for URLs under publicURL.
func NewPresigner(keys SigningKeys, publicURL string, now func() time.Time) *Presigner {
	if now == nil {
		now = time.Now
	}
	return &Presigner{keys: keys, publicURL: strings.TrimRight(publicURL, "/"), now: now}
}

// Sign returns the absolute presigned URL of a document, valid presignTTL.
func (p *Presigner) Sign(ctx context.Context, documentID uuid.UUID) (string, error) {
	key, err := p.keys.CurrentSigningKey(ctx)
	if err != nil {
		return "", err
	}
	return p.publicURL + presignedPath(documentID, p.now().Add(presignTTL).Unix(), key.ID, key.Secret), nil
}

// presignedPath is the path and query of a presigned URL.
func presignedPath(documentID uuid.UUID, expires int64, kid string, secret []byte) string {
	path := documentPath(documentID)
	exp := strconv.FormatInt(expires, 10)
	return path + "?" + presignQuery(exp, kid, presignSignature(secret, path, exp, kid))
}

func documentPath(id uuid.UUID) string { return "/documents/" + id.String() }

// presignQuery is the one encoding of the query Verify accepts.
func presignQuery(expires, kid, signature string) string {
	return "expires=" + url.QueryEscape(expires) + "&kid=" + url.QueryEscape(kid) + "&signature=" + url.QueryEscape(signature)
}

func presignSignature(secret []byte, path, expires, kid string) string {
	k := hmac.New(sha256.New, secret)
	k.Write([]byte(presignLabel))
	m := hmac.New(sha256.New, k.Sum(nil))
	m.Write([]byte("GET\n" + path + "\n" + expires + "\n" + kid))
	return hex.EncodeToString(m.Sum(nil))
}

var (
	errPresignInvalid = domain.Errorf(domain.Forbidden, "invalid_signature", "the presigned URL is not valid")
	errPresignExpired = domain.Errorf(domain.Forbidden, "presigned_url_expired", "the presigned URL has expired; list the documents again for a fresh one")
)

// Verify checks a request's escaped path and raw query and returns the
// document id they name. Anything but a URL Sign wrote, unexpired, is 403:
// missing, repeated, extra or re-encoded parameters, an unknown kid, a wrong
// signature (compared in constant time), an expired one.
func (p *Presigner) Verify(ctx context.Context, escapedPath, rawQuery string) (uuid.UUID, error) {
	idText, ok := strings.CutPrefix(escapedPath, "/documents/")
	if !ok {
		return uuid.Nil, errPresignInvalid
	}
	id, err := uuid.Parse(idText)
	if err != nil || documentPath(id) != escapedPath {
		return uuid.Nil, errPresignInvalid
	}
	q, err := url.ParseQuery(rawQuery)
	if err != nil || len(q) != 3 || len(q["expires"]) != 1 || len(q["kid"]) != 1 || len(q["signature"]) != 1 {
		return uuid.Nil, errPresignInvalid
	}
	exp, kid, sig := q.Get("expires"), q.Get("kid"), q.Get("signature")
	expires, err := strconv.ParseInt(exp, 10, 64)
	if err != nil || strconv.FormatInt(expires, 10) != exp || kid == "" || len(kid) > maxKIDLength ||
		len(sig) != 2*sha256.Size || presignQuery(exp, kid, sig) != rawQuery {
		return uuid.Nil, errPresignInvalid
	}
	got, err := hex.DecodeString(sig)
	if err != nil || hex.EncodeToString(got) != sig {
		return uuid.Nil, errPresignInvalid
	}
	key, err := p.keys.SigningKey(ctx, kid)
	if domain.ErrorKind(err) == domain.Unauthenticated || err == nil && !signedBeforeRetirement(key.RetiredAt, time.Unix(expires, 0), presignTTL) {
		return uuid.Nil, errPresignInvalid
	}
	if err != nil {
		return uuid.Nil, err
	}
	want, _ := hex.DecodeString(presignSignature(key.Secret, escapedPath, exp, kid))
	if !hmac.Equal(got, want) {
		return uuid.Nil, errPresignInvalid
	}
	if !p.now().Before(time.Unix(expires, 0)) {
		return uuid.Nil, errPresignExpired
	}
	return id, nil
}
