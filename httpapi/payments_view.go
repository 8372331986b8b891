package httpapi

import (
	"encoding/json"
	"strconv"

	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/domain"
)

// paymentBody is the Payment of spec §2.9 as contract §6 shapes it: every
// member present, null when unset, but isSlowPayment (only when true) and
// statusLogs (only with includeStatusLog=true); webhookSecret never. The
// *Details and lightningInvoice members are strings holding JSON, as the
// spec types them; numbers are exact decimals written as JSON numbers.
type paymentBody struct {
	ID                   string           `json:"id"`
	MerchantID           string           `json:"merchantId"`
	Amount               int64            `json:"amount"`
	Reference            *string          `json:"reference"`
	Tag                  *string          `json:"tag"`
	Type                 *string          `json:"type"`
	FromCountry          string           `json:"fromCountry"`
	IsSlowPayment        *bool            `json:"isSlowPayment,omitempty"`
	BufferRate           json.RawMessage  `json:"bufferRate"`
	WebhookURL           *string          `json:"webhookUrl"`
	Status               string           `json:"status"`
	StatusLog            string           `json:"statusLog"`
	AmountSettled        json.RawMessage  `json:"amountSettled"`
	AmountDeposited      json.RawMessage  `json:"amountDeposited"`
	AmountBtc            *string          `json:"amountBtc"`
	BTCPrice             *string          `json:"btcPrice"`
	FromCurrency         string           `json:"fromCurrency"`
	DestinationCountry   string           `json:"destinationCountry"`
	DestinationCurrency  string           `json:"destinationCurrency"`
	PaymentType          string           `json:"paymentType"`
	LightningInvoice     *string          `json:"lightningInvoice"`
	DepositBankDetails   *string          `json:"depositBankDetails"`
	RecipientBankDetails *string          `json:"recipientBankDetails"`
	IsInstantPayment     bool             `json:"isInstantPayment"`
	ValidityDuration     int64            `json:"validityDuration"`
	OTCFees              json.RawMessage  `json:"otcFees"`
	BufferAmountSats     json.RawMessage  `json:"bufferAmountSats"`
	ChangeRefundAmount   json.RawMessage  `json:"changeRefundAmount"`
	ChangeRefundStatus   *string          `json:"changeRefundStatus"`
	Meta                 *string          `json:"meta"`
	Date                 string           `json:"date"`
	CreatedAt            string           `json:"createdAt"`
	UpdatedAt            string           `json:"updatedAt"`
	StatusLogs           *[]statusLogBody `json:"statusLogs,omitempty"`
}

type statusLogBody struct {
	Status  string `json:"status"`
	Message string `json:"message"`
	At      string `json:"at"`
}

// lightningInvoiceBody is lightningInvoice's JSON (contract §6).
type lightningInvoiceBody struct {
	PaymentRequest string `json:"paymentRequest"`
	PaymentHash    string `json:"paymentHash"`
	AmountSats     int64  `json:"amountSats"`
	ExpiresAt      string `json:"expiresAt"`
}

var jsonNull = json.RawMessage("null")

// number writes d as a JSON number, exactly.
func number(d decimal.Decimal) json.RawMessage { return json.RawMessage(d.String()) }

func optNumber(d *decimal.Decimal) json.RawMessage {
	if d == nil {
		return jsonNull
	}
	return number(*d)
}

func optInt(n *int64) json.RawMessage {
	if n == nil {
		return jsonNull
	}
	return json.RawMessage(strconv.FormatInt(*n, 10))
}

// jsonString is v's JSON as a string (the spec's "JSON string" members).
func jsonString(v any) *string {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	s := string(raw)
	return &s
}

func paymentResponse(p domain.PaymentSnapshot, withLog bool) paymentBody {
	b := paymentBody{ID: p.ID.String(), MerchantID: p.MerchantID.String(), Amount: p.Amount,
		Reference: nullable(p.Reference), Tag: nullable(p.Tag), Type: nullable(p.Type), FromCountry: p.FromCountry,
		BufferRate: optNumber(p.BufferRate), WebhookURL: nullable(p.WebhookURL), Status: p.Status, StatusLog: p.StatusLog,
		AmountSettled: optNumber(p.AmountSettled), AmountDeposited: number(p.AmountDeposited),
		FromCurrency: p.FromCurrency, DestinationCountry: p.DestinationCountry,
		DestinationCurrency: p.DestinationCurrency, PaymentType: p.PaymentType,
		RecipientBankDetails: jsonString(p.RecipientDetails), IsInstantPayment: p.IsInstantPayment,
		ValidityDuration: p.ValidityDuration, OTCFees: number(p.OTCFees),
		BufferAmountSats:   json.RawMessage(strconv.FormatInt(p.BufferAmountSats, 10)),
		ChangeRefundAmount: optInt(p.ChangeRefundSats), ChangeRefundStatus: nullable(p.ChangeRefundStatus),
		Meta: nullable(domain.PublicMeta(p.Meta)), Date: timestamp(p.CreatedAt), CreatedAt: timestamp(p.CreatedAt),
		UpdatedAt: timestamp(p.Payment.UpdatedAt)}
	if p.IsSlowPayment {
		t := true
		b.IsSlowPayment = &t
	}
	if p.AmountSats != nil {
		s := strconv.FormatInt(*p.AmountSats, 10)
		b.AmountBtc = &s
	}
	if !p.BTCPrice.IsZero() {
		s := p.BTCPrice.String()
		b.BTCPrice = &s
	}
	if inv := p.LightningInvoice; inv != nil {
		b.LightningInvoice = jsonString(lightningInvoiceBody{PaymentRequest: inv.PaymentRequest,
			PaymentHash: inv.PaymentHash, AmountSats: inv.AmountSats, ExpiresAt: timestamp(inv.ExpiresAt)})
	}
	if len(p.DepositDetails) > 0 {
		s := string(p.DepositDetails)
		b.DepositBankDetails = &s
	}
	if withLog {
		logs := make([]statusLogBody, 0, len(p.StatusLogs))
		for _, l := range p.StatusLogs {
			logs = append(logs, statusLogBody{Status: l.Status, Message: l.Message, At: timestamp(l.At)})
		}
		b.StatusLogs = &logs
	}
	return b
}
