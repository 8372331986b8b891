// Package mpesatest is a fake of Safaricom's M-Pesa Daraja API for tests:
// OAuth tokens, M-Pesa Express (STK Push) prompts a test approves or
// declines, STK Push Query, B2C payments keyed by OriginatorConversationID
// and Transaction Status, with their callbacks POSTed to the URLs the
// requests gave, and faults a test switches on (500s, requests that never
// answer, callbacks dropped or sent twice).
//
// It is written from Daraja's published documentation and the guides that
// restate it:
//   - OAuth: GET /oauth/v1/generate?grant_type=client_credentials, HTTP
//     Basic auth of consumer key:secret, answering {"access_token",
//     "expires_in": "3599"}; calls carry "Authorization: Bearer":
//     https://developer.safaricom.co.ke/apis/Authorization
//   - M-Pesa Express: POST /mpesa/stkpush/v1/processrequest, Password =
//     base64(BusinessShortCode + passkey + Timestamp), Timestamp
//     YYYYMMDDHHmmss, whole-number Amount, the acknowledgement
//     {MerchantRequestID, CheckoutRequestID, ResponseCode "0", ...} and the
//     callback {"Body": {"stkCallback": {..., "ResultCode", "ResultDesc",
//     "CallbackMetadata": {"Item": [Amount, MpesaReceiptNumber, Balance,
//     TransactionDate, PhoneNumber]}}}}, ResultCode 1032 for a prompt the
//     user cancelled: https://developer.safaricom.co.ke/apis/MpesaExpressSimulate,
//     https://dev.to/msnmongare/m-pesa-express-stk-push-api-guide-40a2 and
//     https://tinypesa.com/developers/docs/1.0/webhook
//   - STK Push Query: POST /mpesa/stkpushquery/v1/query {BusinessShortCode,
//     Password, Timestamp, CheckoutRequestID}, answering ResultCode/ResultDesc,
//     or 500 errorCode 500.001.1001 "The transaction is being processed"
//     while the prompt is open: https://developer.safaricom.co.ke/apis/MpesaExpressQuery
//     and https://jeffnyauke.github.io/mpesa-sdk-kotlin/ (StkPushQueryResponse)
//   - B2C: POST /mpesa/b2c/v3/paymentrequest {OriginatorConversationID,
//     InitiatorName, SecurityCredential (the initiator password encrypted
//     with the public key of M-Pesa's certificate), CommandID, Amount,
//     PartyA, PartyB, QueueTimeOutURL, ResultURL}, its acknowledgement and
//     the result {"Result": {ResultType, ResultCode, ResultDesc,
//     OriginatorConversationID, ConversationID, TransactionID,
//     ResultParameters: {ResultParameter: [{Key, Value}]}}} with
//     TransactionAmount and TransactionReceipt: https://developer.safaricom.co.ke/apis/B2C
//     and https://github.com/truehostcloud/mpesa-python-client/blob/main/docs/B2CPaymentRequest.md
//   - Transaction Status: POST /mpesa/transactionstatus/v1/query
//     {Initiator, SecurityCredential, CommandID TransactionStatusQuery,
//     TransactionID or OriginalConversationID, PartyA, IdentifierType,
//     ResultURL, QueueTimeOutURL}, asynchronous, its result carrying
//     ReceiptNo, Amount, TransactionStatus ("Completed") and "Originator
//     Conversation ID": https://developer.safaricom.co.ke/apis/TransactionStatus,
//     https://dev.to/msnmongare/m-pesa-transaction-status-api-1ich and
//     https://github.com/Ghostscypher/php-mpesa/blob/main/mpesa_endpoints.md
//   - errors: an HTTP error status with {"requestId", "errorCode",
//     "errorMessage"}, e.g. 400.002.02 "Bad Request - Invalid ..." and
//     404.001.03 "Invalid Access Token" (the same pages).
//
// The result code of a Transaction Status query for an id M-Pesa does not
// know is not documented; the fake answers 2001 with a description saying so.
package mpesatest

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Credentials are the app's and the initiator's, as Safaricom issues them.
type Credentials struct {
	ConsumerKey, ConsumerSecret  string
	ShortCode, PassKey           string // M-Pesa Express
	B2CShortCode                 string
	Initiator, InitiatorPassword string
}

// Prompt is an STK prompt the fake received.
type Prompt struct {
	CheckoutID, MerchantID string
	AccountReference       string // what the payer's phone shows
	Amount                 int64
	Phone                  string
	CallbackURL            string
	State                  string // processing, paid or cancelled
	Receipt                string
	PaidAt                 time.Time
}

// Payment is a B2C payment the fake made (or refused).
type Payment struct {
	OriginatorID, ConversationID string
	Amount                       int64
	Phone                        string
	ResultURL                    string
	Receipt                      string
	PaidAt                       time.Time
	Requests                     int // B2C requests with this OriginatorConversationID
}

// Fault is what the fake does to requests on a path.
type Fault struct {
	Status500 int  // answer this many requests 500 without acting
	Hang      bool // act on the request, then never answer (the caller times out)
}

// Server is the fake.
type Server struct {
	t     Reporter
	srv   *httptest.Server
	creds Credentials
	key   *rsa.PrivateKey
	cert  []byte

	mu             sync.Mutex
	tokens         map[string]bool
	tokensIssued   int
	prompts        []*Prompt
	payments       map[string]*Payment
	byHand         []ReportRow // report lines of transactions made outside the API
	statusQueries  int
	faults         map[string]*Fault
	dropCallbacks  bool
	dropResults    bool
	twiceCallbacks bool
	seq            int
	hang           chan struct{}
}

// Reporter is told of a fake's misuse: a test's testing.TB, or the crash
// harness's own record when it runs the fake under its load.
type Reporter interface {
	Fatalf(format string, args ...any)
}

// NewServer starts the fake with a certificate of its own, for the test's
// lifetime; Cert is what the adapter encrypts the initiator password with.
func NewServer(t testing.TB, c Credentials) *Server {
	s, err := Start(t, c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// Start starts the fake outside a test's lifetime; the caller closes it.
func Start(r Reporter, c Credentials) (*Server, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "apicrypt.safaricom.co.ke"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	s := &Server{t: r, creds: c, key: key, cert: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		tokens: map[string]bool{}, payments: map[string]*Payment{}, faults: map[string]*Fault{}, hang: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /oauth/v1/generate", s.generate)
	mux.HandleFunc("POST /mpesa/stkpush/v1/processrequest", s.authed(s.stkPush))
	mux.HandleFunc("POST /mpesa/stkpushquery/v1/query", s.authed(s.stkQuery))
	mux.HandleFunc("POST /mpesa/b2c/v3/paymentrequest", s.authed(s.b2c))
	mux.HandleFunc("POST /mpesa/transactionstatus/v1/query", s.authed(s.status))
	s.srv = httptest.NewServer(mux)
	return s, nil
}

// Close releases the requests left hanging and stops the fake.
func (s *Server) Close() {
	close(s.hang)
	s.srv.Close()
}

// URL is the fake's base URL.
func (s *Server) URL() string { return s.srv.URL }

// Cert is the fake's certificate (PEM), standing in for Safaricom's.
func (s *Server) Cert() []byte { return s.cert }

// SetFault sets what happens to the requests on path.
func (s *Server) SetFault(path string, f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[path] = &f
}

// DropCallbacks makes the fake send no callbacks (or send them again).
func (s *Server) DropCallbacks(drop bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropCallbacks = drop
}

// DropResults makes the fake send no B2C results (or send them again);
// prompts' callbacks and Transaction Status results still go.
func (s *Server) DropResults(drop bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropResults = drop
}

// CallbacksTwice makes the fake send every callback twice.
func (s *Server) CallbacksTwice(twice bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.twiceCallbacks = twice
}

// TokensIssued is how many OAuth tokens were generated.
func (s *Server) TokensIssued() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tokensIssued
}

// Prompts are the STK prompts received, oldest first.
func (s *Server) Prompts() []Prompt {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Prompt, 0, len(s.prompts))
	for _, p := range s.prompts {
		out = append(out, *p)
	}
	return out
}

// Payments are the B2C payments made, by OriginatorConversationID.
func (s *Server) Payments() map[string]Payment {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]Payment{}
	for k, p := range s.payments {
		out[k] = *p
	}
	return out
}

// StatusQueries is how many Transaction Status queries were taken.
func (s *Server) StatusQueries() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.statusQueries
}

func (s *Server) next(prefix string) string {
	s.seq++
	return fmt.Sprintf("%s%06d", prefix, s.seq)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func apiError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, map[string]string{"requestId": "fake", "errorCode": code, "errorMessage": msg})
}

func (s *Server) generate(w http.ResponseWriter, r *http.Request) {
	key, secret, ok := r.BasicAuth()
	if !ok || key != s.creds.ConsumerKey || secret != s.creds.ConsumerSecret || r.URL.Query().Get("grant_type") != "client_credentials" {
		apiError(w, http.StatusBadRequest, "400.008.01", "Invalid Authentication passed")
		return
	}
	s.mu.Lock()
	tok := s.next("tok")
	s.tokens[tok] = true
	s.tokensIssued++
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]string{"access_token": tok, "expires_in": "3599"})
}

// authed checks the bearer token, decodes the JSON body into a map and
// applies the path's fault.
func (s *Server) authed(h func(w http.ResponseWriter, body map[string]any)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		ok := s.tokens[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]
		f := s.faults[r.URL.Path]
		fail := f != nil && f.Status500 > 0
		if fail {
			f.Status500--
		}
		hang := f != nil && f.Hang
		s.mu.Unlock()
		if !ok {
			apiError(w, http.StatusUnauthorized, "404.001.03", "Invalid Access Token")
			return
		}
		if fail {
			apiError(w, http.StatusInternalServerError, "500.003.02", "System is busy. Please try again in few minutes.")
			return
		}
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			apiError(w, http.StatusBadRequest, "400.002.02", "Bad Request - Invalid JSON")
			return
		}
		if hang {
			h(httptest.NewRecorder(), body) // acted on; the answer is lost
			select {
			case <-r.Context().Done():
			case <-s.hang:
			}
			return
		}
		h(w, body)
	}
}

func str(body map[string]any, key string) string {
	switch v := body[key].(type) {
	case string:
		return v
	case float64:
		return fmt.Sprintf("%.0f", v)
	}
	return ""
}

// whole reads a whole positive Amount, given as a number or a string.
func whole(body map[string]any) (int64, bool) {
	var n int64
	_, err := fmt.Sscanf(str(body, "Amount"), "%d", &n)
	if err != nil || n <= 0 || fmt.Sprint(n) != str(body, "Amount") {
		return 0, false
	}
	return n, true
}

// password checks an STK request's Password and Timestamp.
func (s *Server) password(w http.ResponseWriter, body map[string]any) bool {
	ts := str(body, "Timestamp")
	if _, err := time.Parse("20060102150405", ts); err != nil {
		apiError(w, http.StatusBadRequest, "400.002.02", "Bad Request - Invalid Timestamp")
		return false
	}
	want := base64.StdEncoding.EncodeToString([]byte(s.creds.ShortCode + s.creds.PassKey + ts))
	if str(body, "BusinessShortCode") != s.creds.ShortCode || str(body, "Password") != want {
		apiError(w, http.StatusBadRequest, "400.002.02", "Bad Request - Invalid Password")
		return false
	}
	return true
}

func (s *Server) stkPush(w http.ResponseWriter, body map[string]any) {
	if !s.password(w, body) {
		return
	}
	amount, ok := whole(body)
	phone := str(body, "PhoneNumber")
	if !ok || len(phone) != 12 || !strings.HasPrefix(phone, "254") || str(body, "CallBackURL") == "" {
		apiError(w, http.StatusBadRequest, "400.002.02", "Bad Request - Invalid Amount, PhoneNumber or CallBackURL")
		return
	}
	s.mu.Lock()
	p := &Prompt{CheckoutID: s.next("ws_CO_"), MerchantID: s.next("29115-"), AccountReference: str(body, "AccountReference"), Amount: amount, Phone: phone,
		CallbackURL: str(body, "CallBackURL"), State: "processing"}
	s.prompts = append(s.prompts, p)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]string{"MerchantRequestID": p.MerchantID, "CheckoutRequestID": p.CheckoutID,
		"ResponseCode": "0", "ResponseDescription": "Success. Request accepted for processing", "CustomerMessage": "Success. Request accepted for processing"})
}

// Approve makes the payer of the prompt checkoutID pay it, and sends its
// callback (unless callbacks are dropped).
func (s *Server) Approve(checkoutID string) {
	s.send(s.approve(checkoutID))
}

// ApproveWithoutCallback makes the payer pay the prompt, whose callback
// never comes: only STK Push Query tells.
func (s *Server) ApproveWithoutCallback(checkoutID string) {
	s.approve(checkoutID)
}

func (s *Server) approve(checkoutID string) (string, []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.prompt(checkoutID)
	p.State, p.Receipt, p.PaidAt = "paid", s.next("SKL"), time.Now()
	return p.CallbackURL, STKCallback(*p, p.PaidAt)
}

// Cancel makes the payer cancel the prompt (ResultCode 1032).
func (s *Server) Cancel(checkoutID string) {
	s.mu.Lock()
	p := s.prompt(checkoutID)
	p.State = "cancelled"
	s.mu.Unlock()
	s.send(p.CallbackURL, STKCallback(*p, time.Now()))
}

func (s *Server) prompt(checkoutID string) *Prompt {
	for _, p := range s.prompts {
		if p.CheckoutID == checkoutID {
			return p
		}
	}
	s.t.Fatalf("mpesatest: no prompt %s", checkoutID)
	return nil
}

// STKCallback is the callback body of prompt p in its state, paid at at.
func STKCallback(p Prompt, at time.Time) []byte {
	cb := map[string]any{"MerchantRequestID": p.MerchantID, "CheckoutRequestID": p.CheckoutID}
	if p.State == "paid" {
		cb["ResultCode"], cb["ResultDesc"] = 0, "The service request is processed successfully."
		var phone int64
		_, _ = fmt.Sscanf(p.Phone, "%d", &phone)
		var date int64
		_, _ = fmt.Sscanf(at.In(time.FixedZone("EAT", 3*3600)).Format("20060102150405"), "%d", &date)
		cb["CallbackMetadata"] = map[string]any{"Item": []map[string]any{{"Name": "Amount", "Value": p.Amount},
			{"Name": "MpesaReceiptNumber", "Value": p.Receipt}, {"Name": "Balance"},
			{"Name": "TransactionDate", "Value": date}, {"Name": "PhoneNumber", "Value": phone}}}
	} else {
		cb["ResultCode"], cb["ResultDesc"] = 1032, "Request cancelled by user"
	}
	b, _ := json.Marshal(map[string]any{"Body": map[string]any{"stkCallback": cb}})
	return b
}

func (s *Server) stkQuery(w http.ResponseWriter, body map[string]any) {
	if !s.password(w, body) {
		return
	}
	s.mu.Lock()
	var p *Prompt
	for _, q := range s.prompts {
		if q.CheckoutID == str(body, "CheckoutRequestID") {
			p = q
		}
	}
	s.mu.Unlock()
	switch {
	case p == nil:
		apiError(w, http.StatusBadRequest, "400.002.02", "Bad Request - Invalid CheckoutRequestID")
		return
	case p.State == "processing":
		apiError(w, http.StatusInternalServerError, "500.001.1001", "The transaction is being processed")
		return
	}
	a := map[string]string{"ResponseCode": "0", "ResponseDescription": "The service request has been accepted successsfully",
		"MerchantRequestID": p.MerchantID, "CheckoutRequestID": p.CheckoutID, "ResultCode": "0",
		"ResultDesc": "The service request is processed successfully."}
	if p.State != "paid" {
		a["ResultCode"], a["ResultDesc"] = "1032", "Request cancelled by user"
	}
	writeJSON(w, http.StatusOK, a)
}

// initiator checks the initiator name and decrypts the SecurityCredential
// with the certificate's private key.
func (s *Server) initiator(w http.ResponseWriter, name, credential string) bool {
	enc, err := base64.StdEncoding.DecodeString(credential)
	var plain []byte
	if err == nil {
		plain, err = rsa.DecryptPKCS1v15(nil, s.key, enc)
	}
	if err != nil || name != s.creds.Initiator || string(plain) != s.creds.InitiatorPassword {
		apiError(w, http.StatusBadRequest, "400.002.02", "Bad Request - Invalid Initiator or SecurityCredential")
		return false
	}
	return true
}

func (s *Server) b2c(w http.ResponseWriter, body map[string]any) {
	if !s.initiator(w, str(body, "InitiatorName"), str(body, "SecurityCredential")) {
		return
	}
	amount, ok := whole(body)
	id := str(body, "OriginatorConversationID")
	if !ok || id == "" || str(body, "PartyA") != s.creds.B2CShortCode || str(body, "ResultURL") == "" {
		apiError(w, http.StatusBadRequest, "400.002.02", "Bad Request - Invalid Amount, PartyA, OriginatorConversationID or ResultURL")
		return
	}
	s.mu.Lock()
	p, seen := s.payments[id]
	if !seen {
		p = &Payment{OriginatorID: id, ConversationID: s.next("AG_20261129_"), Amount: amount, Phone: str(body, "PartyB"),
			ResultURL: str(body, "ResultURL"), Receipt: s.next("TKB"), PaidAt: time.Now()}
		s.payments[id] = p
	}
	p.Requests++
	pay, drop := *p, s.dropResults
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]string{"ConversationID": pay.ConversationID, "OriginatorConversationID": id,
		"ResponseCode": "0", "ResponseDescription": "Accept the service request successfully."})
	if !seen && !drop {
		s.send(pay.ResultURL, B2CResult(pay, 0))
	}
}

// B2CResult is the ResultURL body of payment p with resultCode (0: paid).
func B2CResult(p Payment, resultCode int) []byte {
	res := map[string]any{"ResultType": 0, "ResultCode": resultCode, "OriginatorConversationID": p.OriginatorID,
		"ConversationID": p.ConversationID, "TransactionID": p.Receipt}
	if resultCode == 0 {
		res["ResultDesc"] = "The service request is processed successfully."
		res["ResultParameters"] = map[string]any{"ResultParameter": []map[string]any{
			{"Key": "TransactionAmount", "Value": p.Amount}, {"Key": "TransactionReceipt", "Value": p.Receipt},
			{"Key": "ReceiverPartyPublicName", "Value": p.Phone + " - Merchant"},
			{"Key": "B2CRecipientIsRegisteredCustomer", "Value": "Y"}}}
	} else {
		res["ResultDesc"] = "The initiator information is invalid."
		res["TransactionID"] = ""
	}
	b, _ := json.Marshal(map[string]any{"Result": res})
	return b
}

func (s *Server) status(w http.ResponseWriter, body map[string]any) {
	if !s.initiator(w, str(body, "Initiator"), str(body, "SecurityCredential")) {
		return
	}
	if str(body, "CommandID") != "TransactionStatusQuery" || str(body, "ResultURL") == "" {
		apiError(w, http.StatusBadRequest, "400.002.02", "Bad Request - Invalid CommandID or ResultURL")
		return
	}
	id, receipt := str(body, "OriginalConversationID"), str(body, "TransactionID")
	s.mu.Lock()
	s.statusQueries++
	var found *Payment
	for _, p := range s.payments {
		if p.OriginatorID == id || receipt != "" && p.Receipt == receipt {
			found = p
		}
	}
	own := s.next("AG_20261129_")
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]string{"ConversationID": own, "OriginatorConversationID": own,
		"ResponseCode": "0", "ResponseDescription": "Accept the service request successfully."})
	res := map[string]any{"ResultType": 0, "OriginatorConversationID": own, "ConversationID": own}
	if found == nil {
		res["ResultCode"], res["ResultDesc"] = 2001, "The transaction could not be found."
		res["ResultParameters"] = map[string]any{"ResultParameter": map[string]any{"Key": "Originator Conversation ID", "Value": id}}
	} else {
		res["ResultCode"], res["ResultDesc"], res["TransactionID"] = 0, "The service request is processed successfully.", found.Receipt
		res["ResultParameters"] = map[string]any{"ResultParameter": []map[string]any{
			{"Key": "ReceiptNo", "Value": found.Receipt}, {"Key": "Amount", "Value": found.Amount},
			{"Key": "TransactionStatus", "Value": "Completed"}, {"Key": "Originator Conversation ID", "Value": found.OriginatorID},
			{"Key": "ConversationID", "Value": found.ConversationID}}}
	}
	b, _ := json.Marshal(map[string]any{"Result": res})
	s.send(str(body, "ResultURL"), b)
}

// send POSTs a callback in the background, as Daraja does after it
// answered the request (twice when asked to; not at all when dropped).
func (s *Server) send(url string, body []byte) {
	s.mu.Lock()
	drop, times := s.dropCallbacks, 1
	if s.twiceCallbacks {
		times = 2
	}
	s.mu.Unlock()
	if drop {
		return
	}
	go func() {
		for range times {
			resp, err := http.Post(url, "application/json", bytes.NewReader(body))
			if err == nil {
				resp.Body.Close()
			}
		}
	}()
}
