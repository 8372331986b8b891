package domain

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/shopspring/decimal"
)

// PaymentRequest is the body of POST /payments (spec §2.9) as sent: the
// numbers and meta are raw JSON so that their rules (a whole number, an
// exact decimal, an object or a string holding one) are checked here rather
// than lost to a float. Nil or empty means the member was not sent or null.
type PaymentRequest struct {
	MerchantID    string
	Amount        json.RawMessage
	Reference     string
	Tag           string
	Type          string
	FromCountry   string
	IsSlowPayment bool
	BufferRate    json.RawMessage
	WebhookURL    string
	WebhookSecret string
	Meta          json.RawMessage
}

// PaymentOrder is a PaymentRequest whose fields are each valid on their own;
// the rules that need the merchant come in PlanPayment.
type PaymentOrder struct {
	MerchantID       string
	Amount           int64
	Reference        string
	Tag              string
	Type             string
	FromCountry      string // as sent, BTC when omitted
	FromCurrency     string
	IsSlowPayment    bool
	BufferRate       *decimal.Decimal // nil when not sent: 0 sent is echoed as 0
	WebhookURL       string
	WebhookSecret    string
	Meta             json.RawMessage // an object, or nil
	CollectionMethod string          // meta.collectionMethod for Kenyan funding: MOMO (default) or BANK_TRANSFER
}

// Payment request limits of our own (the spec gives none): generous for a
// partner's own references, small enough to keep events and rows compact.
const (
	maxTag           = 100
	maxWebhookURL    = 2048
	maxWebhookSecret = 256
	maxMetaBytes     = 8 << 10
	maxAmount        = 1_000_000_000_000 // far above every corridor limit; keeps sats arithmetic small
)

// PaymentTypes are the values of type (spec §2.9).
var PaymentTypes = []string{"PURCHASE", "SERVICE", "SALARY", "BILL", "LOAN"}

// fromCurrencies maps fromCountry to fromCurrency (contract §6).
var fromCurrencies = map[string]string{
	"BTC": "BTC", "Kenya": "KES", "KE": "KES", "KES": "KES", "Nigeria": "NGN", "UK": "GBP", "Europe": "EUR", "USDT": "USDT",
}

var referencePattern = regexp.MustCompile(`^[a-zA-Z0-9 ]{1,20}$`)

// Collection methods of meta.collectionMethod (spec §2.11).
const (
	CollectMomo         = "MOMO"
	CollectBankTransfer = "BANK_TRANSFER"
)

// ValidatePaymentRequest checks every field of r on its own (spec §2.9):
// amount a whole number above 10, reference 1-20 letters, digits and
// spaces, type one of PaymentTypes, fromCountry one of contract §6's,
// bufferRate an exact decimal from 0 to 0.10, webhookUrl an absolute http(s)
// URL (https only unless insecureWebhooks), webhookSecret only with a
// webhookUrl, meta an object or a string holding one. All problems are
// reported at once as validation_failed.
func ValidatePaymentRequest(r PaymentRequest, insecureWebhooks bool) (PaymentOrder, error) {
	var fe fieldErrors
	o := PaymentOrder{Reference: r.Reference, Type: r.Type, IsSlowPayment: r.IsSlowPayment,
		WebhookSecret: r.WebhookSecret}
	o.MerchantID = r.MerchantID
	if o.MerchantID == "" {
		fe.add("merchantId", "is required")
	}
	o.Amount = fe.wholeAmount("amount", r.Amount)
	if r.Reference != "" && !referencePattern.MatchString(r.Reference) {
		fe.add("reference", "must be 1 to 20 letters, digits or spaces")
	}
	o.Tag = fe.optText("tag", r.Tag, maxTag)
	if r.Type != "" {
		fe.oneOf("type", r.Type, PaymentTypes)
	}
	o.FromCountry = r.FromCountry
	if o.FromCountry == "" {
		o.FromCountry = "BTC"
	}
	if cur, ok := fromCurrencies[o.FromCountry]; ok {
		o.FromCurrency = cur
	} else {
		fe.add("fromCountry", "must be one of BTC, Kenya, KE, KES, Nigeria, UK, Europe, USDT")
	}
	if r.IsSlowPayment && o.FromCurrency != "" && o.FromCurrency != "BTC" {
		fe.add("isSlowPayment", "applies to Lightning funding only (fromCountry BTC)")
	}
	o.BufferRate = fe.bufferRate("bufferRate", r.BufferRate)
	if o.FromCurrency == "USDT" && o.BufferRate != nil && o.BufferRate.IsPositive() {
		fe.add("bufferRate", "does not apply to USDT funding: the amount sent is fixed")
	}
	o.WebhookURL = fe.webhookURL("webhookUrl", r.WebhookURL, insecureWebhooks)
	switch {
	case r.WebhookSecret != "" && r.WebhookURL == "":
		fe.add("webhookSecret", "is only used with a webhookUrl")
	case len(r.WebhookSecret) > maxWebhookSecret:
		fe.add("webhookSecret", "must be at most 256 bytes")
	case r.WebhookSecret != "":
		if _, err := WebhookSigningKey(r.WebhookSecret); err != nil {
			fe.add("webhookSecret", "cannot sign: "+err.Error())
		}
	}
	o.Meta, o.CollectionMethod = fe.meta("meta", r.Meta)
	if o.CollectionMethod != "" && o.FromCurrency != "KES" {
		fe.add("meta.collectionMethod", "applies to Kenyan funding only (fromCountry Kenya)")
	}
	if o.FromCurrency == "KES" && o.CollectionMethod == "" {
		o.CollectionMethod = CollectMomo
	}
	return o, fe.err()
}

// wholeAmount reads a JSON number that must be a whole number above 10.
func (fe *fieldErrors) wholeAmount(field string, raw json.RawMessage) int64 {
	if isNull(raw) {
		fe.add(field, "is required")
		return 0
	}
	d, ok := jsonDecimal(raw)
	switch {
	case !ok:
		fe.add(field, "must be a number")
	case !d.IsInteger():
		fe.add(field, "must be a whole number")
	case d.LessThanOrEqual(decimal.NewFromInt(10)):
		fe.add(field, "must be greater than 10")
	case d.GreaterThan(decimal.NewFromInt(maxAmount)):
		fe.add(field, "is too large")
	default:
		return d.IntPart()
	}
	return 0
}

// bufferRate reads an optional JSON number from 0 to 0.10, exactly; nil
// when it was not sent (or sent as null).
func (fe *fieldErrors) bufferRate(field string, raw json.RawMessage) *decimal.Decimal {
	if isNull(raw) {
		return nil
	}
	d, ok := jsonDecimal(raw)
	switch {
	case !ok:
		fe.add(field, "must be a number")
	case d.IsNegative() || d.GreaterThan(decimal.RequireFromString("0.10")):
		fe.add(field, "must be between 0 and 0.10")
	case d.Exponent() < -maxBufferRatePlaces && !d.Equal(d.Truncate(maxBufferRatePlaces)):
		// 1e-10000 is between 0 and 0.10, and would be stored as a
		// 10,000-digit decimal in every copy of the payment.
		fe.add(field, fmt.Sprintf("must have at most %d decimal places", maxBufferRatePlaces))
	default:
		return &d
	}
	return nil
}

// BufferRateOrZero is the buffer rate a quote applies: the one sent, or none.
func (o PaymentOrder) BufferRateOrZero() decimal.Decimal {
	if o.BufferRate == nil {
		return decimal.Zero
	}
	return *o.BufferRate
}

// maxBufferRatePlaces bounds a bufferRate's decimal places: a rate finer
// than a millionth of a percent means nothing to a quote in sats or cents.
const maxBufferRatePlaces = 8

// jsonDecimal parses a JSON number literal (not a string holding one) exactly.
func jsonDecimal(raw json.RawMessage) (decimal.Decimal, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || !(raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') || !json.Valid(raw) {
		return decimal.Zero, false
	}
	d, err := decimal.NewFromString(string(raw))
	return d, err == nil
}

func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

// webhookURL checks an optional webhook target: an absolute http(s) URL
// with a host and no credentials. Outside sandbox mode it must be https;
// where it resolves is checked again at delivery (contract §8).
func (fe *fieldErrors) webhookURL(field, s string, insecure bool) string {
	if s == "" {
		return ""
	}
	u, err := url.Parse(s)
	switch {
	case len(s) > maxWebhookURL:
		fe.add(field, "must be at most 2048 characters")
	case err != nil || u.Host == "" || u.Opaque != "" || (u.Scheme != "https" && u.Scheme != "http"):
		fe.add(field, "must be an absolute http or https URL")
	case u.Scheme != "https" && !insecure:
		fe.add(field, "must be an https URL")
	case u.User != nil:
		fe.add(field, "must not carry credentials; use webhookSecret to authenticate deliveries")
	default:
		return s
	}
	return ""
}

// meta reads meta: an object, or a JSON string holding one (spec §2.9),
// returned as the object's compact JSON, with meta.collectionMethod.
func (fe *fieldErrors) meta(field string, raw json.RawMessage) (json.RawMessage, string) {
	if isNull(raw) {
		return nil, ""
	}
	raw = bytes.TrimSpace(raw)
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			fe.add(field, "must be an object or a string holding a JSON object")
			return nil, ""
		}
		raw = bytes.TrimSpace([]byte(s))
	}
	var members map[string]json.RawMessage
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &members) != nil {
		fe.add(field, "must be an object or a string holding a JSON object")
		return nil, ""
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil || compact.Len() > maxMetaBytes {
		fe.add(field, "must be at most 8 KiB of JSON")
		return nil, ""
	}
	if err := storableJSON(compact.Bytes()); err != nil {
		fe.add(field, "cannot be stored: "+err.Error())
		return nil, ""
	}
	var method string
	if m, ok := members["collectionMethod"]; ok && !isNull(m) {
		if json.Unmarshal(m, &method) != nil || (method != CollectMomo && method != CollectBankTransfer) {
			fe.add(field+".collectionMethod", "must be MOMO or BANK_TRANSFER")
			method = ""
		}
	}
	return compact.Bytes(), method
}

// internalMetaKeys are meta members the service keeps for itself and never
// returns (spec §2.9: "internal keys, e.g. a refund configuration, are
// stripped"): these names, and any name starting with an underscore.
var internalMetaKeys = map[string]bool{"refundConfig": true, "refundConfiguration": true}

// PublicMeta returns meta without its internal members, as the JSON string
// the API returns, or "" when there is none.
func PublicMeta(meta json.RawMessage) string {
	if isNull(meta) {
		return ""
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(meta, &members); err != nil {
		return ""
	}
	for k := range members {
		if internalMetaKeys[k] || strings.HasPrefix(k, "_") {
			delete(members, k)
		}
	}
	out, _ := json.Marshal(members)
	return string(out)
}
