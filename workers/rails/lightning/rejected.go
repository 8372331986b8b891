package lightning

import (
	"errors"
	"fmt"
	"io"
	"net/http"
)

// RejectedError is a refusal on the request's merits: the recipient's LNURL
// service, LND, or this package's own checks of their answers said no, and
// the same request would meet the same answer. A payout worker fails the
// payout (and refunds) rather than retrying. Every other error from this
// package (transport failures, timeouts, 5xx, 408 and 429 answers, a
// truncated stream) may pass on a later attempt, and retrying is safe:
// LND.CreateInvoice and LND.PayInvoice are idempotent, and LNURLPay.Invoice
// has no effect until its invoice is paid.
type RejectedError struct {
	Op     string // the step: "lnurl-pay", "lnd invoice" or "lnd pay"
	Reason string
}

func (e *RejectedError) Error() string {
	return e.Op + ": rejected: " + e.Reason
}

func reject(op, format string, args ...any) *RejectedError {
	return &RejectedError{Op: op, Reason: fmt.Sprintf(format, args...)}
}

// ErrPaymentInFlight says LND already has a payment for this invoice's hash
// under way. It is not a rejection: the payment may still succeed, so the
// payout must neither be refunded nor paid with another invoice. Retry
// PayInvoice later with the same invoice to learn the outcome.
var ErrPaymentInFlight = errors.New("lnd pay: payment is in flight")

// permanentStatus reports whether an HTTP status refuses the request itself.
// 408 and 429 are about timing, and 5xx about the server, so those may pass
// later.
func permanentStatus(code int) bool {
	return code >= 400 && code < 500 && code != http.StatusRequestTimeout && code != http.StatusTooManyRequests
}

// readBody reads at most limit bytes of r; a longer body is refused rather
// than truncated, since a truncated JSON answer cannot be trusted anyway.
func readBody(op string, r io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: read answer: %w", op, err)
	}
	if int64(len(b)) > limit {
		return nil, reject(op, "answer exceeds %d bytes", limit)
	}
	return b, nil
}
