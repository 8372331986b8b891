package lightning

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// Outcomes of a PayInvoice that returns no error: the payee has the money.
const (
	PaymentSucceeded   = "SUCCEEDED"    // this call paid
	PaymentAlreadyPaid = "ALREADY_PAID" // an earlier call paid, and lnd refused to pay twice
)

// PaymentResult is a paid invoice.
type PaymentResult struct {
	Preimage string // lowercase hex, the proof of payment; empty for PaymentAlreadyPaid
	FeeMsat  int64
	FeeSats  int64 // FeeMsat rounded up, so the ledger never books less than the node spent
	Status   string
}

// payTimeoutSeconds is lnd's default wait for a route before the first
// HTLC. Once HTLCs are out, lnd waits for them however long that takes.
const payTimeoutSeconds = 60

// lnd's refusals to start a payment for a hash it already has one for
// (paymentsdb errors, sent as gRPC AlreadyExists, HTTP 409).
const (
	alreadyPaid      = "invoice is already paid"
	paymentInFlight  = "payment is in transition"
	paymentInitiated = "payment already exists" // recorded, no HTLC sent yet
)

// invoiceExpired begins lnd's refusal to pay an invoice past its expiry,
// which it sends as gRPC Unknown (HTTP 500): no retry can pay it.
const invoiceExpired = "invoice expired"

// lndPayment holds the fields of lnrpc.Payment we read.
type lndPayment struct {
	Status          string `json:"status"`
	PaymentPreimage string `json:"payment_preimage"` // hex, unlike most bytes in lnd's JSON
	FeeMsat         string `json:"fee_msat"`
	FailureReason   string `json:"failure_reason"`
}

// PayInvoice pays paymentRequest, spending at most maxFeeSats on routing,
// and waits for the outcome. It uses POST /v2/router/send (SendPaymentV2):
// lnd 0.21 removed the synchronous POST /v1/channels/transactions.
//
// Retrying a payout is safe because lnd keys payments by payment hash and
// will not start a second payment for a hash while one is in flight or
// after one succeeded. So, for one invoice:
//   - no error: paid exactly once (PaymentSucceeded or PaymentAlreadyPaid);
//   - ErrPaymentInFlight: an earlier attempt is still out; retry later;
//   - *RejectedError: nothing was paid (lnd marks a payment failed only when
//     no HTLC is left in flight), so the payout may be refunded;
//   - any other error (ctx ended, connection lost): the payment may be under
//     way; retry later, and lnd answers with one of the above.
//
// The guarantee is per invoice: a retry must pay the same invoice, never a
// new one from LNURLPay.
func (n *LND) PayInvoice(ctx context.Context, paymentRequest string, maxFeeSats int64) (PaymentResult, error) {
	const op = "lnd pay"
	if maxFeeSats < 0 {
		return PaymentResult{}, reject(op, "negative fee limit %d sats", maxFeeSats)
	}
	terms, err := DecodeBolt11(paymentRequest)
	if err != nil {
		return PaymentResult{}, reject(op, "%v", err)
	}
	if terms.AmountMsat == 0 { // lnd would pay whatever amount we named
		return PaymentResult{}, reject(op, "invoice names no amount")
	}
	req := struct {
		PaymentRequest    string `json:"payment_request"`
		TimeoutSeconds    int32  `json:"timeout_seconds"`
		FeeLimitSat       string `json:"fee_limit_sat"`
		NoInflightUpdates bool   `json:"no_inflight_updates"`
	}{strings.ToLower(paymentRequest), payTimeoutSeconds, strconv.FormatInt(maxFeeSats, 10), true}
	resp, err := n.send(ctx, op, http.MethodPost, "/v2/router/send", req)
	if err != nil {
		return refused(op, err)
	}
	defer resp.Body.Close()

	// The answer is a stream of {"result": Payment} or {"error": status}
	// objects; without in-flight updates, lnd sends only the final state.
	dec := json.NewDecoder(io.LimitReader(resp.Body, lndMaxBody))
	for {
		var chunk struct {
			Result *lndPayment `json:"result"`
			Error  *grpcStatus `json:"error"`
		}
		if err := dec.Decode(&chunk); err != nil {
			return PaymentResult{}, fmt.Errorf("%s: stream ended before the outcome: %w", op, err)
		}
		switch {
		case chunk.Error != nil:
			return refused(op, &lndError{StatusCode: resp.StatusCode, Message: chunk.Error.Message})
		case chunk.Result == nil:
			return PaymentResult{}, fmt.Errorf("%s: stream sent neither result nor error", op)
		case chunk.Result.Status == "SUCCEEDED":
			return succeeded(op, terms.PaymentHash, chunk.Result)
		case chunk.Result.Status == "FAILED":
			reason := strings.ToLower(strings.TrimPrefix(chunk.Result.FailureReason, "FAILURE_REASON_"))
			return PaymentResult{}, reject(op, "payment failed: %s", reason)
		}
	}
}

// refused maps lnd's refusals to start a payment; see PayInvoice.
func refused(op string, err error) (PaymentResult, error) {
	var le *lndError
	if errors.As(err, &le) {
		switch {
		case strings.Contains(le.Message, alreadyPaid):
			return PaymentResult{Status: PaymentAlreadyPaid}, nil
		case strings.Contains(le.Message, paymentInFlight), strings.Contains(le.Message, paymentInitiated):
			return PaymentResult{}, ErrPaymentInFlight
		case strings.HasPrefix(le.Message, invoiceExpired):
			return PaymentResult{}, reject(op, "%s", le.Message)
		}
	}
	return PaymentResult{}, classify(op, err)
}

// succeeded checks that the preimage opens the invoice's payment hash: it is
// the payee's receipt, and the ledger keeps it as proof of payment.
func succeeded(op string, hash [32]byte, p *lndPayment) (PaymentResult, error) {
	preimage, err := hex.DecodeString(p.PaymentPreimage)
	if err != nil || sha256.Sum256(preimage) != hash {
		return PaymentResult{}, fmt.Errorf("%s: lnd reports success with preimage %q, which does not hash to %x", op, p.PaymentPreimage, hash)
	}
	fee, err := strconv.ParseInt(p.FeeMsat, 10, 64)
	if err != nil || fee < 0 {
		return PaymentResult{}, fmt.Errorf("%s: fee %q msat is not a count", op, p.FeeMsat)
	}
	return PaymentResult{Preimage: hex.EncodeToString(preimage), FeeMsat: fee, FeeSats: (fee + 999) / 1000, Status: PaymentSucceeded}, nil
}
