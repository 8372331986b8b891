package lightning

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// lndMaxBody bounds an answer from our own node; a payment with many
// multi-path HTLCs runs to tens of KiB.
const lndMaxBody = 1 << 20

// preimageLabel separates the preimages LND derives from any other use of
// the same key; v1 leaves room to change the derivation.
const preimageLabel = "ledger lnd preimage v1"

// LND is a Node backed by lnd's REST API. Every call is bounded by its ctx.
//
// Production passes an *http.Client that trusts only the node's tls.cert:
//
//	pool := x509.NewCertPool()
//	pool.AppendCertsFromPEM(tlsCert) // ~/.lnd/tls.cert
//	client := &http.Client{Transport: &http.Transport{
//		TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
//
// and a macaroon baked for exactly what this type calls:
// lncli bakemacaroon invoices:read invoices:write offchain:read offchain:write.
type LND struct {
	url      string
	macaroon string // hex, as lnd's REST proxy wants it
	key      []byte
	client   *http.Client
}

// NewLND returns a client of the node at baseURL (https://host:8080).
// preimageKey (at least 32 random bytes) derives each deposit invoice's
// preimage from its payment id, which is what makes CreateInvoice
// idempotent. Anyone holding it knows every deposit's preimage before it is
// paid, and a routing node that knows a preimage can settle the HTLC
// without forwarding it: keep it as secret as the macaroon, and never
// change it while invoices may still be created for existing payments.
func NewLND(baseURL string, macaroon, preimageKey []byte, client *http.Client) (*LND, error) {
	u, err := url.Parse(baseURL)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("lnd: base URL %q is not https://host[:port]", baseURL)
	}
	if len(macaroon) == 0 {
		return nil, errors.New("lnd: empty macaroon")
	}
	if len(preimageKey) < 32 {
		return nil, errors.New("lnd: preimage key shorter than 32 bytes")
	}
	if client == nil {
		client = http.DefaultClient
	}
	return &LND{url: strings.TrimRight(baseURL, "/"), macaroon: hex.EncodeToString(macaroon),
		key: bytes.Clone(preimageKey), client: client}, nil
}

// lndInvoice holds the fields of lnrpc.Invoice and AddInvoiceResponse we
// read. lnd's JSON spells int64 as strings and bytes as base64.
type lndInvoice struct {
	RHash          []byte `json:"r_hash"`
	PaymentRequest string `json:"payment_request"`
	Value          string `json:"value"`
	CreationDate   string `json:"creation_date"`
	Expiry         string `json:"expiry"`
	State          string `json:"state"`
	AmtPaidSat     string `json:"amt_paid_sat"`
	SettleDate     string `json:"settle_date"`
}

// duplicateInvoice is lnd's invoices.ErrDuplicateInvoice, which its REST
// proxy returns as a gRPC Unknown status (HTTP 500).
const duplicateInvoice = "invoice with payment hash already exists"

// CreateInvoice asks LND for an invoice whose preimage derives from
// r.PaymentID. LND takes no idempotency key for invoices, but it refuses a
// second invoice with the same payment hash: a retry, or another ledgerd
// process, meets that refusal and gets the first invoice back from a
// lookup. So one payment has one invoice however often it is asked for.
func (n *LND) CreateInvoice(ctx context.Context, r InvoiceRequest) (Invoice, error) {
	const op = "lnd invoice"
	if r.AmountSats <= 0 || r.AmountSats > maxSats {
		return Invoice{}, reject(op, "amount %d sats out of range", r.AmountSats)
	}
	if r.Expiry < time.Second || r.Expiry%time.Second != 0 || r.Expiry > MaxInvoiceExpiry {
		return Invoice{}, reject(op, "expiry %v is not whole seconds from 1s to %v", r.Expiry, MaxInvoiceExpiry)
	}
	preimage := n.preimage(r.PaymentID)
	hash := sha256.Sum256(preimage[:])
	req := struct {
		Memo            string `json:"memo,omitempty"`
		DescriptionHash []byte `json:"description_hash,omitempty"`
		RPreimage       []byte `json:"r_preimage"`
		Value           string `json:"value"`
		Expiry          string `json:"expiry"`
	}{
		Memo:      r.Description,
		RPreimage: preimage[:],
		Value:     strconv.FormatInt(r.AmountSats, 10),
		Expiry:    strconv.FormatInt(int64(r.Expiry/time.Second), 10),
	}
	if len(r.Description) > MaxDescriptionLen { // as SandboxNode: too long for `d`
		h := sha256.Sum256([]byte(r.Description))
		req.Memo, req.DescriptionHash = "", h[:]
	}
	var added lndInvoice
	err := n.call(ctx, op, http.MethodPost, "/v1/invoices", req, &added)
	var le *lndError
	if errors.As(err, &le) && strings.Contains(le.Message, duplicateInvoice) {
		return n.lookup(ctx, hash, r.AmountSats)
	}
	if err != nil {
		return Invoice{}, classify(op, err)
	}
	if !bytes.Equal(added.RHash, hash[:]) {
		return Invoice{}, fmt.Errorf("%s: lnd answered payment hash %x, want %x", op, added.RHash, hash)
	}
	terms, err := DecodeBolt11(added.PaymentRequest)
	if err != nil {
		return Invoice{}, fmt.Errorf("%s: lnd answered an invalid invoice: %w", op, err)
	}
	if terms.Expiry != r.Expiry { // the payment would expire at another time than its invoice
		return Invoice{}, fmt.Errorf("%s: lnd answered an invoice expiring %v after its timestamp, asked %v", op, terms.Expiry, r.Expiry)
	}
	return Invoice{
		PaymentRequest: strings.ToLower(added.PaymentRequest),
		PaymentHash:    hex.EncodeToString(hash[:]),
		AmountSats:     r.AmountSats,
		ExpiresAt:      terms.ExpiresAt(),
	}, nil
}

// lookup returns the invoice an earlier call made for the same payment. A
// different amount means the payment id was reused for another request,
// and a canceled invoice can never be paid; a retry cannot change either.
func (n *LND) lookup(ctx context.Context, hash [32]byte, amountSats int64) (Invoice, error) {
	const op = "lnd invoice"
	var inv lndInvoice
	if err := n.call(ctx, op, http.MethodGet, "/v1/invoice/"+hex.EncodeToString(hash[:]), nil, &inv); err != nil {
		return Invoice{}, classify(op, fmt.Errorf("look up existing invoice: %w", err))
	}
	if inv.Value != strconv.FormatInt(amountSats, 10) {
		return Invoice{}, reject(op, "payment already has an invoice for %s sats, not %d", inv.Value, amountSats)
	}
	if inv.State == "CANCELED" {
		return Invoice{}, reject(op, "payment's invoice %x was canceled", hash)
	}
	created, err1 := strconv.ParseInt(inv.CreationDate, 10, 64)
	expiry, err2 := strconv.ParseInt(inv.Expiry, 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return Invoice{}, fmt.Errorf("%s: existing invoice: %w", op, err)
	}
	return Invoice{
		PaymentRequest: strings.ToLower(inv.PaymentRequest),
		PaymentHash:    hex.EncodeToString(hash[:]),
		AmountSats:     amountSats,
		ExpiresAt:      time.Unix(created+expiry, 0),
	}, nil
}

// preimage is HMAC-SHA256(key, label || payment id).
func (n *LND) preimage(paymentID uuid.UUID) [32]byte {
	mac := hmac.New(sha256.New, n.key)
	mac.Write([]byte(preimageLabel))
	mac.Write(paymentID[:])
	return [32]byte(mac.Sum(nil))
}

// lndError is a non-2xx answer with the gRPC status lnd's REST proxy puts
// in the body.
type lndError struct {
	StatusCode int
	Message    string
}

func (e *lndError) Error() string {
	return fmt.Sprintf("lnd answered %d: %s", e.StatusCode, e.Message)
}

// grpcStatus is the part of an error answer we read. The proxy sends it
// bare for a unary call and as {"error": ...} for a stream.
type grpcStatus struct {
	Message string `json:"message"`
}

// classify makes a refusal of the request itself a RejectedError.
func classify(op string, err error) error {
	var le *lndError
	if errors.As(err, &le) && permanentStatus(le.StatusCode) {
		return reject(op, "%s", le.Message)
	}
	return fmt.Errorf("%s: %w", op, err)
}

// call sends in (nil: no body) and decodes a 2xx answer into out.
func (n *LND) call(ctx context.Context, op, method, path string, in, out any) error {
	resp, err := n.send(ctx, op, method, path, in)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := readBody(op, resp.Body, lndMaxBody)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("decode answer: %w", err)
	}
	return nil
}

// send makes the request and returns a 2xx answer for the caller to read
// and close; any other answer becomes an *lndError.
func (n *LND) send(ctx context.Context, op, method, path string, in any) (*http.Response, error) {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return nil, fmt.Errorf("encode request: %w", err)
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, n.url+path, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Grpc-Metadata-macaroon", n.macaroon)
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := n.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp, nil
	}
	defer resp.Body.Close()
	raw, err := readBody(op, resp.Body, lndMaxBody)
	if err != nil {
		return nil, err
	}
	var st struct {
		grpcStatus
		Error *grpcStatus `json:"error"`
	}
	if json.Unmarshal(raw, &st) == nil && st.Error != nil {
		st.grpcStatus = *st.Error
	}
	if st.Message == "" {
		st.Message = http.StatusText(resp.StatusCode)
	}
	return nil, &lndError{StatusCode: resp.StatusCode, Message: st.Message}
}
