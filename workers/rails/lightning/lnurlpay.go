package lightning

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ledger/ledger/domain"
)

const (
	// lnurlTimeout bounds one resolution (two requests) when ctx allows
	// longer, so a hung service fails the attempt instead of holding a worker.
	lnurlTimeout = 30 * time.Second
	// lnurlMaxBody bounds each answer; a payRequest is well under 10 KiB
	// even with an image in its metadata.
	lnurlMaxBody = 64 << 10
	// lnurlMaxRedirects is net/http's own default limit.
	lnurlMaxRedirects = 10
)

// LNURLPay resolves a payout destination, a Lightning address (LUD-16) or a
// bech32 LNURL (LUD-01), into an invoice for an exact amount (LUD-06).
//
// Each call may return a new invoice with a new payment hash, and LND would
// pay each of them: a payout resolves once, stores the invoice, and retries
// only LND.PayInvoice with that stored invoice.
//
// The destination is user input, so every request is a possible SSRF:
// production passes a Client whose dialer refuses private, loopback and
// link-local addresses. Errors quote a LUD-06 ERROR reason but never an
// answer's body, so probing an internal address learns nothing from them.
type LNURLPay struct {
	Client    *http.Client // nil: http.DefaultClient; its CheckRedirect runs after ours
	AllowHTTP bool         // tests and sandbox only: accept http URLs
}

// PayoutInvoice is an invoice a recipient's service made for a payout.
type PayoutInvoice struct {
	PaymentRequest string // BOLT #11, lower case
	PaymentHash    string // lowercase hex
	AmountMsat     int64
}

// payRequest is the LUD-06 answer of the first request.
type payRequest struct {
	Tag            string `json:"tag"`
	Callback       string `json:"callback"`
	MinSendable    int64  `json:"minSendable"`
	MaxSendable    int64  `json:"maxSendable"`
	Metadata       string `json:"metadata"`
	CommentAllowed int    `json:"commentAllowed"` // LUD-12, in characters
}

// Invoice asks destination's service for an invoice of amountMsat and
// checks it: the amount in the invoice is amountMsat, and its description
// hash is the SHA-256 of the service's metadata (LUD-06), so the invoice
// pays what the service described. comment (LUD-12) is sent only when the
// service allows one that long.
func (p *LNURLPay) Invoice(ctx context.Context, destination string, amountMsat int64, comment string) (PayoutInvoice, error) {
	const op = "lnurl-pay"
	if amountMsat <= 0 || amountMsat > maxSats*1000 {
		return PayoutInvoice{}, reject(op, "amount %d msat out of range", amountMsat)
	}
	target, err := p.resolve(destination)
	if err != nil {
		return PayoutInvoice{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, lnurlTimeout)
	defer cancel()

	var pr payRequest
	if err := p.get(ctx, target, &pr); err != nil {
		return PayoutInvoice{}, err
	}
	callback, err := p.callbackURL(pr, amountMsat, comment)
	if err != nil {
		return PayoutInvoice{}, err
	}
	var answer struct {
		PR string `json:"pr"`
	}
	if err := p.get(ctx, callback, &answer); err != nil {
		return PayoutInvoice{}, err
	}
	terms, err := DecodeBolt11(answer.PR)
	if err != nil {
		return PayoutInvoice{}, reject(op, "callback invoice: %v", err)
	}
	if terms.AmountMsat != uint64(amountMsat) {
		return PayoutInvoice{}, reject(op, "invoice is for %d msat, asked for %d", terms.AmountMsat, amountMsat)
	}
	if want := sha256.Sum256([]byte(pr.Metadata)); terms.DescriptionHash == nil || *terms.DescriptionHash != want {
		return PayoutInvoice{}, reject(op, "invoice description hash is not the SHA-256 of the metadata")
	}
	return PayoutInvoice{
		PaymentRequest: strings.ToLower(answer.PR), // DecodeBolt11 refused mixed case
		PaymentHash:    hex.EncodeToString(terms.PaymentHash[:]),
		AmountMsat:     amountMsat,
	}, nil
}

// resolve turns a destination into the URL of its payRequest.
func (p *LNURLPay) resolve(destination string) (*url.URL, error) {
	const op = "lnurl-pay"
	if local, host, ok := strings.Cut(destination, "@"); ok {
		host = strings.ToLower(host)
		if !domain.IsLightningAddress(local + "@" + host) {
			return nil, reject(op, "%q is not a Lightning address", destination)
		}
		scheme := "https"
		if isOnion(host) { // LUD-16: onion services are reached over http
			scheme = "http"
		}
		return &url.URL{Scheme: scheme, Host: host, Path: "/.well-known/lnurlp/" + local}, nil
	}
	hrp, words, err := domain.DecodeBech32(destination, domain.LNURLMaxLength)
	if err != nil || hrp != "lnurl" {
		return nil, reject(op, "destination is neither a Lightning address nor a bech32 LNURL")
	}
	raw, ok := wordsToBytesExact(words)
	if !ok {
		return nil, reject(op, "LNURL has non-zero padding")
	}
	u, err := url.Parse(string(raw))
	if err != nil {
		return nil, reject(op, "LNURL does not hold a URL: %v", err)
	}
	return u, p.checkURL(u)
}

// EncodeLNURL is u as a bech32 LNURL (LUD-01), the form resolve reads.
func EncodeLNURL(u string) string { return bech32Encode("lnurl", bytesToWords([]byte(u))) }

// checkURL allows https, and http to an onion service (Tor encrypts it, as
// domain.DecodeLNURL allows) or, in tests and the sandbox, anywhere.
func (p *LNURLPay) checkURL(u *url.URL) error {
	switch {
	case !u.IsAbs() || u.Host == "" || u.User != nil:
		return reject("lnurl-pay", "%q is not an absolute URL with a host and no user", u.Redacted())
	case u.Scheme == "https":
	case u.Scheme == "http" && (p.AllowHTTP || isOnion(u.Hostname())):
	default:
		return reject("lnurl-pay", "%s URL %s is not https", u.Scheme, u.Redacted())
	}
	return nil
}

func isOnion(host string) bool {
	return strings.HasSuffix(strings.ToLower(host), ".onion")
}

// callbackURL checks pr per LUD-06 and returns its callback with amount and
// comment appended. The callback's own query is kept byte for byte: some
// services sign it.
func (p *LNURLPay) callbackURL(pr payRequest, amountMsat int64, comment string) (*url.URL, error) {
	const op = "lnurl-pay"
	if pr.Tag != "payRequest" {
		return nil, reject(op, "tag is %q, not payRequest", pr.Tag)
	}
	if pr.MinSendable < 1 || pr.MinSendable > pr.MaxSendable {
		return nil, reject(op, "sendable range %d-%d msat is not valid", pr.MinSendable, pr.MaxSendable)
	}
	if amountMsat < pr.MinSendable || amountMsat > pr.MaxSendable {
		return nil, reject(op, "amount %d msat is outside %d-%d", amountMsat, pr.MinSendable, pr.MaxSendable)
	}
	var entries []json.RawMessage
	if err := json.Unmarshal([]byte(pr.Metadata), &entries); err != nil {
		return nil, reject(op, "metadata is not a JSON array in a string: %v", err)
	}
	u, err := url.Parse(pr.Callback)
	if err != nil {
		return nil, reject(op, "callback is not a URL: %v", err)
	}
	if err := p.checkURL(u); err != nil {
		return nil, err
	}
	query := "amount=" + strconv.FormatInt(amountMsat, 10)
	if comment != "" && utf8.RuneCountInString(comment) <= pr.CommentAllowed {
		query += "&comment=" + url.QueryEscape(comment)
	}
	if u.RawQuery != "" {
		query = u.RawQuery + "&" + query
	}
	u.RawQuery = query
	return u, nil
}

// get fetches u into out. A LUD-06 error answer, {"status":"ERROR"}, is a
// rejection whatever the HTTP status, since services send it with 200 and
// with 4xx alike.
func (p *LNURLPay) get(ctx context.Context, u *url.URL, out any) error {
	const op = "lnurl-pay"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return fmt.Errorf("%s: build request: %w", op, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := p.client().Do(req)
	if err != nil {
		return fmt.Errorf("%s: get %s: %w", op, u.Host, err)
	}
	defer resp.Body.Close()
	body, err := readBody(op, resp.Body, lnurlMaxBody)
	if err != nil {
		return err
	}
	var status struct {
		Status string `json:"status"`
		Reason string `json:"reason"`
	}
	if json.Unmarshal(body, &status) == nil && strings.EqualFold(status.Status, "ERROR") {
		return reject(op, "service says: %s", status.Reason)
	}
	switch code := resp.StatusCode; {
	case permanentStatus(code):
		return reject(op, "%s answered %d", u.Host, code)
	case code != http.StatusOK:
		return fmt.Errorf("%s: %s answered %d", op, u.Host, code)
	}
	if err := json.Unmarshal(body, out); err != nil {
		return reject(op, "%s answered with invalid JSON: %v", u.Host, err)
	}
	return nil
}

// client returns a copy of p.Client that refuses redirects to URLs
// checkURL refuses, so a redirect cannot downgrade a request to http.
func (p *LNURLPay) client() *http.Client {
	c := *http.DefaultClient
	if p.Client != nil {
		c = *p.Client
	}
	next := c.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if err := p.checkURL(req.URL); err != nil {
			return err
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= lnurlMaxRedirects {
			return fmt.Errorf("stopped after %d redirects", lnurlMaxRedirects)
		}
		return nil
	}
	return &c
}
