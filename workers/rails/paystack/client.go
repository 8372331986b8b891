// Package paystack is the production payout rail for bank accounts in
// South Africa (ZAR), Nigeria (NGN) and Kenya (KES), through Paystack
// Transfers (https://paystack.com/docs/transfers/single-transfers/): a
// transfer recipient per bank account, a transfer whose reference is the
// payout's idempotency key, signed webhooks with its outcome, and
// verification by reference when no webhook comes.
package paystack

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// DefaultBaseURL is Paystack's public API.
const DefaultBaseURL = "https://api.paystack.co"

// Client calls Paystack's API with the integration's secret key.
type Client struct {
	base   string
	secret string
	http   *http.Client
}

// NewClient returns a client of the API at base (DefaultBaseURL in production).
func NewClient(base, secret string, hc *http.Client) *Client {
	return &Client{base: strings.TrimRight(base, "/"), secret: secret, http: hc}
}

// APIError is an answer of {"status": false}: Paystack refused the request.
type APIError struct {
	Status  int
	Message string
}

func (e *APIError) Error() string { return fmt.Sprintf("paystack: %d %s", e.Status, e.Message) }

// refused says err is Paystack's refusal of the request itself (400, 404,
// 422), as opposed to no answer or a server error, after which the request
// may have happened, or a refusal of us (401, 403, 429), which the next
// attempt may not meet.
func refused(err error) (*APIError, bool) {
	var api *APIError
	if !errors.As(err, &api) {
		return nil, false
	}
	switch api.Status {
	case http.StatusBadRequest, http.StatusNotFound, http.StatusUnprocessableEntity:
		return api, true
	}
	return nil, false
}

// errNotFound is the 404 of a lookup.
var errNotFound = errors.New("paystack: not found")

// envelope is every answer's shape; a list's answer adds meta.
type envelope struct {
	Status  bool            `json:"status"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
	Meta    json.RawMessage `json:"meta"`
}

// maxAnswer bounds an answer read into memory; the bank list is the largest.
const maxAnswer = 4 << 20

func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	env, err := c.exchange(ctx, method, path, body)
	if err != nil || out == nil {
		return err
	}
	if err := json.Unmarshal(env.Data, out); err != nil {
		return fmt.Errorf("paystack: %s %s: decode data: %w", method, path, err)
	}
	return nil
}

// exchange sends one request and returns Paystack's answer, or its refusal.
func (c *Client) exchange(ctx context.Context, method, path string, body any) (envelope, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return envelope{}, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return envelope{}, err
	}
	req.Header.Set("Authorization", "Bearer "+c.secret)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return envelope{}, fmt.Errorf("paystack: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return envelope{}, fmt.Errorf("paystack: %s %s: read answer: %w", method, path, err)
	}
	var env envelope
	if jerr := json.Unmarshal(raw, &env); jerr != nil || resp.StatusCode >= 300 || !env.Status {
		if resp.StatusCode == http.StatusNotFound && method == http.MethodGet {
			return env, errNotFound
		}
		msg := env.Message
		if jerr != nil {
			msg = fmt.Sprintf("unreadable answer (%v)", jerr)
		}
		return env, &APIError{Status: resp.StatusCode, Message: msg}
	}
	return env, nil
}

// Bank is one bank of GET /bank.
type Bank struct {
	Name     string `json:"name"`
	Code     string `json:"code"`
	Currency string `json:"currency"`
	Type     string `json:"type"`
	Active   bool   `json:"active"`
}

// Banks lists the banks of country ("south africa", "nigeria", "kenya").
// One page of 100 covers each of the three countries' lists.
func (c *Client) Banks(ctx context.Context, country string) ([]Bank, error) {
	var banks []Bank
	err := c.do(ctx, http.MethodGet, "/bank?perPage=100&country="+url.QueryEscape(country), nil, &banks)
	return banks, err
}

// RecipientRequest is POST /transferrecipient's body for a bank account.
type RecipientRequest struct {
	Type          string `json:"type"` // nuban, basa or kepss
	Name          string `json:"name"`
	AccountNumber string `json:"account_number"`
	BankCode      string `json:"bank_code"`
	Currency      string `json:"currency"`
}

// CreateRecipient creates a transfer recipient and returns its code. A
// repeated account number answers the existing recipient.
func (c *Client) CreateRecipient(ctx context.Context, r RecipientRequest) (string, error) {
	var out struct {
		RecipientCode string `json:"recipient_code"`
	}
	if err := c.do(ctx, http.MethodPost, "/transferrecipient", r, &out); err != nil {
		return "", err
	}
	if out.RecipientCode == "" {
		return "", errors.New("paystack: recipient created without a recipient_code")
	}
	return out.RecipientCode, nil
}

// TransferRequest is POST /transfer's body.
type TransferRequest struct {
	Source    string `json:"source"` // always "balance"
	Amount    int64  `json:"amount"` // in the currency's subunit
	Recipient string `json:"recipient"`
	Reason    string `json:"reason"`
	Currency  string `json:"currency"`
	Reference string `json:"reference"`
}

// Transfer is a transfer as Paystack reports it (the initiate and verify
// answers, and a webhook's data).
type Transfer struct {
	Reference    string `json:"reference"`
	TransferCode string `json:"transfer_code"`
	Amount       int64  `json:"amount"`
	Currency     string `json:"currency"`
	Status       string `json:"status"`
	Failures     any    `json:"failures"`
}

// Initiate queues a transfer. Paystack makes one transfer per reference.
func (c *Client) Initiate(ctx context.Context, r TransferRequest) (Transfer, error) {
	var t Transfer
	err := c.do(ctx, http.MethodPost, "/transfer", r, &t)
	return t, err
}

// Verify returns the transfer made with reference, or errNotFound.
func (c *Client) Verify(ctx context.Context, reference string) (Transfer, error) {
	var t Transfer
	err := c.do(ctx, http.MethodGet, "/transfer/verify/"+url.PathEscape(reference), nil, &t)
	return t, err
}

// ListedTransfer is a transfer as GET /transfer lists it: a Transfer and
// when it was created, which is what the list's from and to filter on.
type ListedTransfer struct {
	Transfer
	CreatedAt time.Time `json:"createdAt"`
}

// Page is what Paystack's offset pagination says of a list
// (https://paystack.com/docs/api/pagination/).
type Page struct {
	Total     int `json:"total"`
	PerPage   int `json:"perPage"`
	Page      int `json:"page"`
	PageCount int `json:"pageCount"`
}

// ListTransfers returns page (from 1) of the transfers created between
// from and to, perPage to a page: GET /transfer?from=&to=&perPage=&page=
// ("List Transfers", https://paystack.com/docs/api/transfer/, as the
// PaystackOSS client documents it in docs/Transfer.md).
func (c *Client) ListTransfers(ctx context.Context, from, to time.Time, page, perPage int) ([]ListedTransfer, Page, error) {
	q := url.Values{"from": {from.UTC().Format(time.RFC3339Nano)}, "to": {to.UTC().Format(time.RFC3339Nano)},
		"page": {strconv.Itoa(page)}, "perPage": {strconv.Itoa(perPage)}}
	path := "/transfer?" + q.Encode()
	env, err := c.exchange(ctx, http.MethodGet, path, nil)
	if err != nil {
		return nil, Page{}, err
	}
	var list []ListedTransfer
	var meta Page
	if err := json.Unmarshal(env.Data, &list); err != nil {
		return nil, Page{}, fmt.Errorf("paystack: GET /transfer: decode data: %w", err)
	}
	if err := json.Unmarshal(env.Meta, &meta); err != nil {
		return nil, Page{}, fmt.Errorf("paystack: GET /transfer: decode meta: %w", err)
	}
	return list, meta, nil
}
