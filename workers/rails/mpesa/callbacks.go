package mpesa

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/shopspring/decimal"
)

// STKResult is an STK Push callback's stkCallback: how a prompt ended, and
// for a paid one (ResultCode 0) its CallbackMetadata items Amount,
// MpesaReceiptNumber, TransactionDate and PhoneNumber
// (https://developer.safaricom.co.ke/apis/MpesaExpressSimulate, "Callback").
type STKResult struct {
	MerchantRequestID string
	CheckoutRequestID string
	ResultCode        int
	ResultDesc        string
	Amount            int64  // paid only
	Receipt           string // paid only
	TransactionDate   string // paid only: YYYYMMDDHHmmss
	Phone             string // paid only: 2547XXXXXXXX
}

// item is one {"Name", "Value"} of a callback's metadata; a Value may be
// a number or a string, or absent (Balance).
type item struct {
	Name  string          `json:"Name"`
	Value json.RawMessage `json:"Value"`
}

// text reads an item's value, number or string, as text.
func (i item) text() string {
	var s string
	if json.Unmarshal(i.Value, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(i.Value, &n) == nil {
		return n.String()
	}
	return ""
}

// DecodeSTKCallback reads an STK Push callback's body. A paid result must
// carry a positive whole amount, a receipt and the paying phone.
func DecodeSTKCallback(body []byte) (STKResult, error) {
	var cb struct {
		Body struct {
			STK *struct {
				MerchantRequestID string          `json:"MerchantRequestID"`
				CheckoutRequestID string          `json:"CheckoutRequestID"`
				ResultCode        json.RawMessage `json:"ResultCode"`
				ResultDesc        string          `json:"ResultDesc"`
				Metadata          struct {
					Items []item `json:"Item"`
				} `json:"CallbackMetadata"`
			} `json:"stkCallback"`
		} `json:"Body"`
	}
	if err := json.Unmarshal(body, &cb); err != nil {
		return STKResult{}, fmt.Errorf("mpesa stk callback: %w", err)
	}
	s := cb.Body.STK
	if s == nil || s.CheckoutRequestID == "" {
		return STKResult{}, errors.New("mpesa stk callback: no stkCallback.CheckoutRequestID")
	}
	code, err := resultCode(s.ResultCode)
	if err != nil {
		return STKResult{}, fmt.Errorf("mpesa stk callback: %w", err)
	}
	r := STKResult{MerchantRequestID: s.MerchantRequestID, CheckoutRequestID: s.CheckoutRequestID, ResultCode: code,
		ResultDesc: s.ResultDesc}
	if code != 0 {
		return r, nil
	}
	for _, it := range s.Metadata.Items {
		switch it.Name {
		case "Amount":
			amount, err := strconv.ParseInt(it.text(), 10, 64)
			if err != nil || amount <= 0 {
				return STKResult{}, fmt.Errorf("mpesa stk callback: Amount %s is not a whole positive amount", it.Value)
			}
			r.Amount = amount
		case "MpesaReceiptNumber":
			r.Receipt = it.text()
		case "TransactionDate":
			r.TransactionDate = it.text()
		case "PhoneNumber":
			r.Phone = it.text()
		}
	}
	if r.Amount == 0 || r.Receipt == "" || r.Phone == "" {
		return STKResult{}, errors.New("mpesa stk callback: a paid result without Amount, MpesaReceiptNumber or PhoneNumber")
	}
	return r, nil
}

// resultCode reads a ResultCode given as a number or as a string of one.
func resultCode(raw json.RawMessage) (int, error) {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		s = string(raw)
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("ResultCode %q is not a number", raw)
	}
	return n, nil
}

// Result is the body of a B2C or Transaction Status result (ResultURL):
// {"Result": {ResultType, ResultCode, ResultDesc, OriginatorConversationID,
// ConversationID, TransactionID, ResultParameters: {ResultParameter: [{Key,
// Value}]}}} (https://developer.safaricom.co.ke/apis/B2C and
// https://developer.safaricom.co.ke/apis/TransactionStatus, "Results").
type Result struct {
	ResultCode               int
	ResultDesc               string
	OriginatorConversationID string
	ConversationID           string
	TransactionID            string
	Params                   map[string]string // ResultParameters by Key, values as text
}

// DecodeResult reads a B2C or Transaction Status result.
func DecodeResult(body []byte) (Result, error) {
	var cb struct {
		Result *struct {
			ResultCode               json.RawMessage `json:"ResultCode"`
			ResultDesc               string          `json:"ResultDesc"`
			OriginatorConversationID string          `json:"OriginatorConversationID"`
			ConversationID           string          `json:"ConversationID"`
			TransactionID            string          `json:"TransactionID"`
			Parameters               struct {
				Items json.RawMessage `json:"ResultParameter"`
			} `json:"ResultParameters"`
		} `json:"Result"`
	}
	if err := json.Unmarshal(body, &cb); err != nil {
		return Result{}, fmt.Errorf("mpesa result: %w", err)
	}
	res := cb.Result
	if res == nil || res.OriginatorConversationID == "" {
		return Result{}, errors.New("mpesa result: no Result.OriginatorConversationID")
	}
	code, err := resultCode(res.ResultCode)
	if err != nil {
		return Result{}, fmt.Errorf("mpesa result: %w", err)
	}
	r := Result{ResultCode: code, ResultDesc: res.ResultDesc, OriginatorConversationID: res.OriginatorConversationID,
		ConversationID: res.ConversationID, TransactionID: res.TransactionID, Params: map[string]string{}}
	// ResultParameter is a list, or a single object when there is one.
	var items []struct {
		Key   string          `json:"Key"`
		Value json.RawMessage `json:"Value"`
	}
	if raw := res.Parameters.Items; len(raw) > 0 && string(raw) != "null" {
		if raw[0] == '{' {
			raw = append(append([]byte{'['}, raw...), ']')
		}
		if err := json.Unmarshal(raw, &items); err != nil {
			return Result{}, fmt.Errorf("mpesa result: ResultParameter: %w", err)
		}
	}
	for _, it := range items {
		r.Params[it.Key] = item{Value: it.Value}.text()
	}
	return r, nil
}

// amountParam reads a whole-shilling amount parameter ("10" or "10.00").
func (r Result) amountParam(key string) (int64, bool) {
	d, err := decimal.NewFromString(r.Params[key])
	if err != nil || !d.IsInteger() || !d.IsPositive() || !d.BigInt().IsInt64() {
		return 0, false
	}
	return d.IntPart(), true
}
