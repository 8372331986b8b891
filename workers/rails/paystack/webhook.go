package paystack

import (
	"context"
	"crypto/hmac"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// WebhookPath is the route Paystack's dashboard must send webhooks to.
const WebhookPath = "/rails/paystack/webhook"

// maxWebhook bounds a webhook's body: Paystack's are a few kilobytes.
const maxWebhook = 1 << 20

// Webhook is the part of a Paystack webhook the rail reads.
type Webhook struct {
	Event string `json:"event"`
	Data  struct {
		Reference string `json:"reference"`
	} `json:"data"`
}

// DecodeWebhook reads a webhook's body. A transfer event must name its
// transfer's reference.
func DecodeWebhook(body []byte) (Webhook, error) {
	var w Webhook
	if err := json.Unmarshal(body, &w); err != nil {
		return w, fmt.Errorf("paystack webhook: %w", err)
	}
	if w.Event == "" {
		return w, errors.New("paystack webhook: no event")
	}
	if strings.HasPrefix(w.Event, "transfer.") && w.Data.Reference == "" {
		return w, fmt.Errorf("paystack webhook: %s without a reference", w.Event)
	}
	return w, nil
}

// signed says signature (hex) is the HMAC-SHA512 of body under the secret
// key, compared in constant time.
func (p *Rail) signed(body []byte, signature string) bool {
	got, err := hex.DecodeString(strings.TrimSpace(signature))
	if err != nil {
		return false
	}
	m := hmac.New(sha512.New, []byte(p.client.secret))
	m.Write(body)
	return hmac.Equal(m.Sum(nil), got)
}

// ServeHTTP is POST /rails/paystack/webhook. A webhook is only a prompt:
// once its signature holds, the transfer it names is verified with
// Paystack and that answer, not the webhook's body, is recorded. Webhooks
// delivered twice, late or out of order thus all record the transfer's
// current status. Any answer but 200 makes Paystack send it again.
func (p *Rail) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxWebhook))
	if err != nil {
		p.metrics.webhooks.WithLabelValues("unreadable").Inc()
		http.Error(w, "unreadable body", http.StatusBadRequest)
		return
	}
	if !p.signed(body, r.Header.Get("x-paystack-signature")) {
		p.metrics.webhooks.WithLabelValues("bad_signature").Inc()
		p.log.Warn("paystack webhook: bad signature; ignored", "remote", r.RemoteAddr, "bytes", len(body))
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	hook, err := DecodeWebhook(body)
	if err != nil {
		// Signed, so from Paystack: a shape we do not read. Retrying will
		// not help, and an operator should know.
		p.metrics.webhooks.WithLabelValues("unreadable").Inc()
		p.log.Error("paystack webhook: signed but unreadable", "err", err)
		w.WriteHeader(http.StatusOK)
		return
	}
	if !strings.HasPrefix(hook.Event, "transfer.") {
		p.metrics.webhooks.WithLabelValues("ignored").Inc()
		w.WriteHeader(http.StatusOK)
		return
	}
	switch err := p.Reconcile(r.Context(), hook.Data.Reference); {
	case errors.Is(err, errUnknownReference):
		p.metrics.webhooks.WithLabelValues("ignored").Inc()
		p.log.Info("paystack webhook: not a payout of ours", "event", hook.Event, "reference", hook.Data.Reference)
		w.WriteHeader(http.StatusOK)
	case err != nil:
		p.metrics.webhooks.WithLabelValues("error").Inc()
		p.log.Warn("paystack webhook: not recorded; Paystack will send it again", "event", hook.Event,
			"reference", hook.Data.Reference, "err", err)
		http.Error(w, "try again", http.StatusServiceUnavailable)
	default:
		p.metrics.webhooks.WithLabelValues("ok").Inc()
		w.WriteHeader(http.StatusOK)
	}
}

var _ http.Handler = (*Rail)(nil)

// errUnknownReference is a transfer this rail did not make.
var errUnknownReference = errors.New("paystack: no payout with this reference")

// Reconcile verifies the transfer of reference with Paystack, records its
// status and tells Outcomes: a pending payout ends (success or failed), a
// successful one may be reversed. Safe to repeat, and the Outcomes calls
// are made again each time, so a repeat completes what a failed one left.
func (p *Rail) Reconcile(ctx context.Context, reference string) error {
	row, found, err := p.load(ctx, reference)
	if err != nil {
		return err
	}
	if !found {
		return errUnknownReference
	}
	t, err := p.client.Verify(ctx, reference)
	if err != nil {
		return fmt.Errorf("paystack: verify %s: %w", reference, err)
	}
	switch {
	case row.status == "pending":
		if _, err := p.record(ctx, row, t); err != nil && !errors.Is(err, errPending) {
			return err
		}
	case row.status == "success" && t.Status == "reversed":
		if err := p.reverse(ctx, row, t); err != nil {
			return err
		}
	case row.status == "success" && t.Status != "success", row.status == "failed" && t.Status == "success":
		// Paystack's status contradicts a conclusive one recorded: no rule
		// of theirs allows it, so a person must look.
		p.metrics.alerts.WithLabelValues("contradiction").Inc()
		p.log.Error("paystack: a transfer's status contradicts the recorded outcome; an operator must reconcile it",
			"reference", reference, "payment", row.paymentID, "recorded", row.status, "paystack", t.Status)
	}
	if row, _, err = p.load(ctx, reference); err != nil {
		return err
	}
	switch row.status {
	case "success", "failed":
		return p.outcomes.PayoutSettled(ctx, row.tenantID, row.paymentID)
	case "reversed":
		return p.outcomes.PayoutReversed(ctx, row.tenantID, row.paymentID, row.reference, row.transferCode, row.reason)
	}
	return nil
}

// reverse records that a successful transfer was reversed, and alerts the
// operators the first time: the recipient's money came back to the
// Paystack balance, and the payment, already success, needs a person.
func (p *Rail) reverse(ctx context.Context, row transfer, t Transfer) error {
	reason := failureReason(t)
	tag, err := p.pool.Exec(ctx, `UPDATE paystack_transfers SET status = 'reversed', reason = $2, updated_at = now()
		WHERE reference = $1 AND status = 'success'`, row.reference, reason)
	if err != nil {
		return fmt.Errorf("paystack: record reversal of %s: %w", row.reference, err)
	}
	if tag.RowsAffected() == 1 {
		p.metrics.alerts.WithLabelValues("reversed").Inc()
		p.log.Error("paystack: a successful payout was reversed; the money is back in the Paystack balance and an operator must act",
			"reference", row.reference, "payment", row.paymentID, "tenant", row.tenantID, "transfer", row.transferCode, "reason", reason)
	}
	return nil
}
