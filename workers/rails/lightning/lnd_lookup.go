package lightning

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// InvoiceState is a deposit invoice as LND reports it.
type InvoiceState struct {
	State          string // OPEN, ACCEPTED (HTLCs held, not settled), SETTLED or CANCELED
	AmountPaidSats int64  // what the payer paid; LND may accept more than the invoice asks
	SettledAt      time.Time
}

// Settled reports whether the payer's money is ours: only a settled
// invoice is final (an accepted one may still be canceled).
func (s InvoiceState) Settled() bool { return s.State == "SETTLED" }

// LookupInvoice returns the state of the invoice with paymentHash (lowercase
// hex), as GET /v1/invoice/{r_hash_str}. An invoice this node does not know
// (made by another node, or a malformed hash) is a *RejectedError: asking
// again will not find it, and it cannot be paid to this node.
func (n *LND) LookupInvoice(ctx context.Context, paymentHash string) (InvoiceState, error) {
	const op = "lnd lookup invoice"
	if b, err := hex.DecodeString(paymentHash); err != nil || len(b) != 32 {
		return InvoiceState{}, reject(op, "payment hash %q is not 32 bytes of hex", paymentHash)
	}
	var inv lndInvoice
	if err := n.call(ctx, op, http.MethodGet, "/v1/invoice/"+paymentHash, nil, &inv); err != nil {
		return InvoiceState{}, classify(op, err)
	}
	s := InvoiceState{State: inv.State}
	if !s.Settled() {
		return s, nil
	}
	paid, err1 := strconv.ParseInt(inv.AmtPaidSat, 10, 64)
	settled, err2 := strconv.ParseInt(inv.SettleDate, 10, 64)
	if err := errors.Join(err1, err2); err != nil || paid <= 0 {
		return InvoiceState{}, fmt.Errorf("%s: settled invoice with amount %q sats at %q", op, inv.AmtPaidSat, inv.SettleDate)
	}
	s.AmountPaidSats, s.SettledAt = paid, time.Unix(settled, 0)
	return s, nil
}

// ErrInvoiceSettled says an invoice could not be canceled because it was
// paid: the payer's money is ours, and the deposit must be recorded.
var ErrInvoiceSettled = errors.New("lnd cancel invoice: the invoice is settled")

// lnd's answers to CancelInvoice for a settled invoice and for one it does
// not know (its invoices package's ErrInvoiceAlreadySettled and
// ErrInvoiceNotFound), both sent as gRPC Unknown (HTTP 500).
const (
	invoiceAlreadySettled = "invoice already settled"
	invoiceNotFound       = "unable to locate invoice"
)

// CancelInvoice cancels the deposit invoice with paymentHash (lowercase
// hex), as POST /v2/invoices/cancel (invoicesrpc CancelInvoice), so that it
// can never be paid: the step before a payment expires. Canceling a
// canceled invoice succeeds. ErrInvoiceSettled says it was paid first; an
// invoice this node does not know is a *RejectedError.
func (n *LND) CancelInvoice(ctx context.Context, paymentHash string) error {
	const op = "lnd cancel invoice"
	hash, err := hex.DecodeString(paymentHash)
	if err != nil || len(hash) != 32 {
		return reject(op, "payment hash %q is not 32 bytes of hex", paymentHash)
	}
	req := struct {
		PaymentHash []byte `json:"payment_hash"`
	}{hash}
	err = n.call(ctx, op, http.MethodPost, "/v2/invoices/cancel", req, &struct{}{})
	var le *lndError
	switch {
	case errors.As(err, &le) && strings.Contains(le.Message, invoiceAlreadySettled):
		return ErrInvoiceSettled
	case errors.As(err, &le) && strings.Contains(le.Message, invoiceNotFound):
		return reject(op, "%s", le.Message)
	case err != nil:
		return classify(op, err)
	}
	return nil
}

// ErrPaymentNotFound says LND never started a payment for the hash: paying
// the invoice now is the first attempt.
var ErrPaymentNotFound = errors.New("lnd track: no payment for this hash")

// paymentNotInitiated is lnd's channeldb.ErrPaymentNotInitiated, sent as
// gRPC NotFound (HTTP 404).
const paymentNotInitiated = "payment isn't initiated"

// TrackPayment returns the outcome of the payment LND made for paymentHash
// (GET /v2/router/track/{payment_hash}, TrackPaymentV2), without waiting:
// the stream's first message is the payment's current state. So:
//   - no error: it succeeded (Status PaymentSucceeded, with the preimage);
//   - ErrPaymentInFlight: HTLCs are out, or the payment is initiated;
//   - *RejectedError: it failed, and nothing is in flight;
//   - ErrPaymentNotFound: LND has no payment for the hash;
//   - any other error: no answer; ask again later.
//
// Only a FAILED state is a rejection. Any other refusal of the lookup (a
// 401 or 403 from a proxy, a 400 from the REST gateway) says nothing about
// the payment, which an earlier call may have made: taken for a failure, it
// would refund a payout that was paid.
func (n *LND) TrackPayment(ctx context.Context, paymentHash [32]byte) (PaymentResult, error) {
	const op = "lnd track"
	// lnd's REST proxy reads a bytes path parameter as base64; the URL
	// alphabet keeps '/' and '+' out of the path.
	resp, err := n.send(ctx, op, http.MethodGet, "/v2/router/track/"+base64.URLEncoding.EncodeToString(paymentHash[:]), nil)
	var le *lndError
	if errors.As(err, &le) && (le.StatusCode == http.StatusNotFound || strings.Contains(le.Message, paymentNotInitiated)) {
		return PaymentResult{}, ErrPaymentNotFound
	}
	if err != nil {
		return PaymentResult{}, fmt.Errorf("%s: %w", op, err)
	}
	defer resp.Body.Close()
	var chunk struct {
		Result *lndPayment `json:"result"`
		Error  *grpcStatus `json:"error"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, lndMaxBody)).Decode(&chunk); err != nil {
		return PaymentResult{}, fmt.Errorf("%s: stream ended before the first state: %w", op, err)
	}
	switch {
	case chunk.Error != nil && strings.Contains(chunk.Error.Message, paymentNotInitiated):
		return PaymentResult{}, ErrPaymentNotFound
	case chunk.Error != nil:
		return PaymentResult{}, fmt.Errorf("%s: %w", op, &lndError{StatusCode: resp.StatusCode, Message: chunk.Error.Message})
	case chunk.Result == nil:
		return PaymentResult{}, fmt.Errorf("%s: stream sent neither result nor error", op)
	case chunk.Result.Status == "SUCCEEDED":
		return succeeded(op, paymentHash, chunk.Result)
	case chunk.Result.Status == "FAILED":
		reason := strings.ToLower(strings.TrimPrefix(chunk.Result.FailureReason, "FAILURE_REASON_"))
		return PaymentResult{}, reject(op, "payment failed: %s", reason)
	}
	return PaymentResult{}, ErrPaymentInFlight // IN_FLIGHT, INITIATED (lnd 0.18+) or UNKNOWN
}
