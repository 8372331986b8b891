// Package mpesa is the production rail for Kenyan mobile money through
// Safaricom's M-Pesa Daraja API (https://developer.safaricom.co.ke/apis):
// M-Pesa Express (STK Push) prompts a payer to pay a payment in, STK Push
// Query asks how a prompt ended, B2C pays momo merchants out, and
// Transaction Status recovers a B2C payment whose result never came.
// Daraja callbacks carry no signature: each callback URL holds a random
// per-payment token, and a callback moves money only when its ids and
// amounts match what was asked for.
package mpesa

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultBaseURL is Daraja's production API.
const DefaultBaseURL = "https://api.safaricom.co.ke"

// nairobi is the zone of Daraja's timestamps (YYYYMMDDHHmmss, East Africa Time).
var nairobi = time.FixedZone("EAT", 3*60*60)

// Client calls Daraja with an app's consumer key and secret. Its OAuth
// token is cached until shortly before it expires: Daraja limits how
// often tokens may be generated, and each lasts an hour.
type Client struct {
	base, key, secret string
	http              *http.Client
	now               func() time.Time

	mu      sync.Mutex
	token   string
	expires time.Time
}

// NewClient returns a client of the API at base (DefaultBaseURL in production).
func NewClient(base, consumerKey, consumerSecret string, hc *http.Client) *Client {
	return &Client{base: strings.TrimRight(base, "/"), key: consumerKey, secret: consumerSecret, http: hc, now: time.Now}
}

// APIError is Daraja's refusal: an HTTP error status with its
// {"requestId", "errorCode", "errorMessage"} body, or an answer whose
// ResponseCode is not "0".
type APIError struct {
	Status  int
	Code    string
	Message string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("mpesa: %d %s %s", e.Status, e.Code, e.Message)
}

// refused says err is Daraja's refusal of the request itself (a 4xx
// other than 401 and 429, or an acknowledgement with a ResponseCode that
// is not 0): the request was not taken, and sending it again fails again.
// No answer, a timeout and a 5xx leave it unknown whether it was taken.
func refused(err error) (*APIError, bool) {
	var api *APIError
	if !errors.As(err, &api) {
		return nil, false
	}
	if api.Status == http.StatusOK || (api.Status >= 400 && api.Status < 500 &&
		api.Status != http.StatusUnauthorized && api.Status != http.StatusTooManyRequests) {
		return api, true
	}
	return nil, false
}

// tokenMargin renews a token this long before Daraja says it expires, so a
// request made with it does not arrive after it.
const tokenMargin = time.Minute

// accessToken returns the cached token, generating one when there is none
// or it is about to expire (GET /oauth/v1/generate?grant_type=client_credentials
// with HTTP Basic auth of key:secret; https://developer.safaricom.co.ke/apis/Authorization).
func (c *Client) accessToken(ctx context.Context) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.token != "" && c.now().Before(c.expires) {
		return c.token, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/oauth/v1/generate?grant_type=client_credentials", nil)
	if err != nil {
		return "", err
	}
	req.SetBasicAuth(c.key, c.secret)
	var out struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   string `json:"expires_in"` // seconds, as a string
	}
	if err := c.send(req, &out); err != nil {
		return "", fmt.Errorf("mpesa: access token: %w", err)
	}
	secs, err := strconv.Atoi(out.ExpiresIn)
	if err != nil || out.AccessToken == "" {
		return "", fmt.Errorf("mpesa: access token: unreadable answer (expires_in %q)", out.ExpiresIn)
	}
	c.token, c.expires = out.AccessToken, c.now().Add(time.Duration(secs)*time.Second-tokenMargin)
	return c.token, nil
}

// forget drops a token Daraja refused, so the next call generates one.
func (c *Client) forget(token string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.token == token {
		c.token = ""
	}
}

// maxAnswer bounds an answer read into memory: Daraja's are a few hundred bytes.
const maxAnswer = 1 << 20

func (c *Client) send(req *http.Request, out any) error {
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return fmt.Errorf("%s %s: read answer: %w", req.Method, req.URL.Path, err)
	}
	if resp.StatusCode >= 300 {
		var e struct {
			Code    string `json:"errorCode"`
			Message string `json:"errorMessage"`
		}
		if json.Unmarshal(raw, &e) != nil || e.Message == "" {
			e.Message = http.StatusText(resp.StatusCode)
		}
		return &APIError{Status: resp.StatusCode, Code: e.Code, Message: e.Message}
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s %s: decode answer: %w", req.Method, req.URL.Path, err)
	}
	return nil
}

// post sends body to path with the access token and decodes the answer.
func (c *Client) post(ctx context.Context, path string, body, out any) error {
	token, err := c.accessToken(ctx)
	if err != nil {
		return err
	}
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	err = c.send(req, out)
	var api *APIError
	if errors.As(err, &api) && api.Status == http.StatusUnauthorized {
		c.forget(token) // revoked or expired early: the next call asks for another
	}
	if err != nil {
		return fmt.Errorf("mpesa: %w", err)
	}
	return nil
}

// Timestamp is t as Daraja's requests give it: YYYYMMDDHHmmss in Nairobi.
func Timestamp(t time.Time) string { return t.In(nairobi).Format("20060102150405") }

// ParseTimestamp reads a Daraja timestamp (a callback's TransactionDate).
func ParseTimestamp(s string) (time.Time, error) {
	return time.ParseInLocation("20060102150405", s, nairobi)
}

// Password is an STK request's Password: base64(shortcode + passkey + timestamp).
func Password(shortcode, passkey, timestamp string) string {
	return base64.StdEncoding.EncodeToString([]byte(shortcode + passkey + timestamp))
}

// SecurityCredential encrypts the initiator's password with the public key
// of Safaricom's certificate (PEM), RSA PKCS #1 v1.5, base64: what B2C and
// Transaction Status requests authenticate the initiator with
// (https://developer.safaricom.co.ke/apis/B2C, "Getting Started").
func SecurityCredential(password string, certPEM []byte) (string, error) {
	block, _ := pem.Decode(certPEM)
	if block == nil {
		return "", errors.New("mpesa: no PEM certificate")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return "", fmt.Errorf("mpesa: certificate: %w", err)
	}
	pub, ok := cert.PublicKey.(*rsa.PublicKey)
	if !ok {
		return "", errors.New("mpesa: the certificate's key is not RSA")
	}
	enc, err := rsa.EncryptPKCS1v15(rand.Reader, pub, []byte(password))
	if err != nil {
		return "", fmt.Errorf("mpesa: encrypt the initiator password: %w", err)
	}
	return base64.StdEncoding.EncodeToString(enc), nil
}

// Ack is the synchronous answer of STK Push, B2C and Transaction Status:
// the request was taken (ResponseCode "0"); its outcome comes later.
type Ack struct {
	MerchantRequestID        string `json:"MerchantRequestID,omitempty"`
	CheckoutRequestID        string `json:"CheckoutRequestID,omitempty"`
	OriginatorConversationID string `json:"OriginatorConversationID,omitempty"`
	ConversationID           string `json:"ConversationID,omitempty"`
	ResponseCode             string `json:"ResponseCode"`
	ResponseDescription      string `json:"ResponseDescription"`
}

func (a Ack) err() error {
	if a.ResponseCode != "0" {
		return &APIError{Status: http.StatusOK, Code: a.ResponseCode, Message: a.ResponseDescription}
	}
	return nil
}

// ask POSTs a request that Daraja acknowledges now and answers later (a
// callback), returning the acknowledgement, or the refusal it carries in
// an answer of 200.
func (c *Client) ask(ctx context.Context, path string, body any) (Ack, error) {
	var a Ack
	if err := c.post(ctx, path, body, &a); err != nil {
		return a, err
	}
	refused := a.err()
	return a, refused
}

// STKPush is POST /mpesa/stkpush/v1/processrequest's body
// (https://developer.safaricom.co.ke/apis/MpesaExpressSimulate).
type STKPush struct {
	BusinessShortCode string `json:"BusinessShortCode"`
	Password          string `json:"Password"`
	Timestamp         string `json:"Timestamp"`
	TransactionType   string `json:"TransactionType"` // CustomerPayBillOnline
	Amount            int64  `json:"Amount"`          // whole shillings
	PartyA            string `json:"PartyA"`          // the payer's MSISDN, 2547XXXXXXXX
	PartyB            string `json:"PartyB"`
	PhoneNumber       string `json:"PhoneNumber"`
	CallBackURL       string `json:"CallBackURL"`
	AccountReference  string `json:"AccountReference"` // up to 12 characters
	TransactionDesc   string `json:"TransactionDesc"`
}

// Push sends an STK prompt. Its Ack's CheckoutRequestID names it.
func (c *Client) Push(ctx context.Context, r STKPush) (Ack, error) {
	return c.ask(ctx, "/mpesa/stkpush/v1/processrequest", r)
}

// STKQueryResult is POST /mpesa/stkpushquery/v1/query's answer
// (https://developer.safaricom.co.ke/apis/MpesaExpressQuery): ResultCode
// "0" paid, anything else ended unpaid (1032 cancelled, 1037 no answer
// from the phone, 1 insufficient balance, ...).
type STKQueryResult struct {
	ResponseCode string `json:"ResponseCode"`
	ResultCode   string `json:"ResultCode"`
	ResultDesc   string `json:"ResultDesc"`
}

// errProcessing is Daraja's answer to a query of a prompt still open:
// 500 with errorCode 500.001.1001 "The transaction is being processed".
var errProcessing = errors.New("mpesa: the transaction is being processed")

// Query asks how the prompt checkoutID ended; errProcessing while it is open.
func (c *Client) Query(ctx context.Context, shortcode, passkey, checkoutID string) (STKQueryResult, error) {
	ts := Timestamp(c.now())
	var r STKQueryResult
	err := c.post(ctx, "/mpesa/stkpushquery/v1/query", map[string]string{"BusinessShortCode": shortcode,
		"Password": Password(shortcode, passkey, ts), "Timestamp": ts, "CheckoutRequestID": checkoutID}, &r)
	var api *APIError
	if errors.As(err, &api) && api.Code == "500.001.1001" {
		return r, errProcessing
	}
	return r, err
}

// B2C is POST /mpesa/b2c/v3/paymentrequest's body
// (https://developer.safaricom.co.ke/apis/B2C).
type B2C struct {
	OriginatorConversationID string `json:"OriginatorConversationID"`
	InitiatorName            string `json:"InitiatorName"`
	SecurityCredential       string `json:"SecurityCredential"`
	CommandID                string `json:"CommandID"` // BusinessPayment
	Amount                   int64  `json:"Amount"`    // whole shillings
	PartyA                   string `json:"PartyA"`    // our B2C shortcode
	PartyB                   string `json:"PartyB"`    // the recipient's MSISDN
	Remarks                  string `json:"Remarks"`
	QueueTimeOutURL          string `json:"QueueTimeOutURL"`
	ResultURL                string `json:"ResultURL"`
	Occasion                 string `json:"Occasion"`
}

// Pay asks for a B2C payment; its result is POSTed to r.ResultURL.
func (c *Client) Pay(ctx context.Context, r B2C) (Ack, error) {
	return c.ask(ctx, "/mpesa/b2c/v3/paymentrequest", r)
}

// StatusQuery is POST /mpesa/transactionstatus/v1/query's body
// (https://developer.safaricom.co.ke/apis/TransactionStatus): a
// transaction named by its receipt or, without one, by the
// OriginalConversationID we gave it.
type StatusQuery struct {
	Initiator              string `json:"Initiator"`
	SecurityCredential     string `json:"SecurityCredential"`
	CommandID              string `json:"CommandID"` // TransactionStatusQuery
	TransactionID          string `json:"TransactionID,omitempty"`
	OriginalConversationID string `json:"OriginalConversationID,omitempty"`
	PartyA                 string `json:"PartyA"`
	IdentifierType         string `json:"IdentifierType"` // 4: an organisation shortcode
	ResultURL              string `json:"ResultURL"`
	QueueTimeOutURL        string `json:"QueueTimeOutURL"`
	Remarks                string `json:"Remarks"`
	Occasion               string `json:"Occasion"`
}

// Status asks for a transaction's status; the answer is POSTed to r.ResultURL.
func (c *Client) Status(ctx context.Context, r StatusQuery) (Ack, error) {
	return c.ask(ctx, "/mpesa/transactionstatus/v1/query", r)
}
