// Package paystacktest is a fake of Paystack's Transfers API for tests:
// recipients, transfers de-duplicated by reference, verification by
// reference, the bank list, and signed transfer webhooks, with faults a
// test switches on (500s, requests that never answer, webhooks sent twice,
// late, out of order or never).
//
// It is written from Paystack's published documentation:
//   - recipients and their types per currency (nuban NGN, basa ZAR, kepss
//     KES; a duplicate account number returns the existing record):
//     https://paystack.com/docs/transfers/creating-transfer-recipients/
//   - POST /transfer, its reference (lowercase alphanumerics, - and _) and
//     the answer "Transfer has been queued" with status pending:
//     https://docs-v2.paystack.com/docs/api/transfer and
//     https://docs-v2.paystack.com/docs/transfers/single-transfers
//   - the transfer statuses (pending, success, failed, reversed, otp, ...)
//     and retrying a non-conclusive transfer with the same reference to
//     avoid a double credit:
//     https://paystack.com/docs/transfers/how-transfers-work/
//   - GET /transfer/verify/{reference} ("Transfer retrieved"; 404 for an
//     unknown reference):
//     https://docs-v2.paystack.com/docs/api/transfer
//   - GET /transfer?from=&to=&perPage=&page= ("Transfers retrieved", newest
//     first, data with meta {total, skipped, perPage, page, pageCount};
//     perPage defaults to 50): https://paystack.com/docs/api/transfer/ and
//     https://paystack.com/docs/api/pagination/
//   - GET /bank?country=nigeria|south africa|kenya ("Banks retrieved"):
//     https://paystack.com/docs/api/miscellaneous/
//   - webhooks: a JSON POST {"event", "data"} to the integration's URL, the
//     x-paystack-signature header = hex HMAC-SHA512 of the raw body keyed by
//     the secret key, retried until the receiver answers 200:
//     https://paystack.com/docs/payments/webhooks/ (as summarised in
//     https://asyncapi.apis.io/asyncapis/paystack/paystack-webhooks-asyncapi/)
//   - errors: {"status": false, "message": ...}, e.g. 401 "No Authorization
//     Header was found" (same pages), and the balance check before a
//     transfer is created ("Your balance is not enough to fulfil this
//     request"): https://paystack.com/docs/transfers/managing-transfers/
package paystacktest

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// Bank is one entry of the fake's bank list.
type Bank struct {
	Name     string `json:"name"`
	Slug     string `json:"slug"`
	Code     string `json:"code"`
	Country  string `json:"country"`
	Currency string `json:"currency"`
	Type     string `json:"type"`
	Active   bool   `json:"active"`
}

// Banks is the fake's bank list per country query value. The names match
// the sandbox's list for the banks tests use.
var Banks = map[string][]Bank{
	"south africa": {
		{Name: "Capitec Bank", Slug: "capitec-bank-za", Code: "470010", Country: "South Africa", Currency: "ZAR", Type: "basa", Active: true},
		{Name: "Nedbank", Slug: "nedbank", Code: "198765", Country: "South Africa", Currency: "ZAR", Type: "basa", Active: true},
		{Name: "Standard Bank", Slug: "standard-bank-za", Code: "051001", Country: "South Africa", Currency: "ZAR", Type: "basa", Active: true},
	},
	"nigeria": {
		{Name: "Zenith Bank", Slug: "zenith-bank", Code: "057", Country: "Nigeria", Currency: "NGN", Type: "nuban", Active: true},
		{Name: "Access Bank", Slug: "access-bank", Code: "044", Country: "Nigeria", Currency: "NGN", Type: "nuban", Active: true},
	},
	"kenya": {
		{Name: "Equity Bank Kenya", Slug: "equity-bank-kenya", Code: "68", Country: "Kenya", Currency: "KES", Type: "kepss", Active: true},
		{Name: "KCB Bank Kenya", Slug: "kcb-bank-kenya", Code: "01", Country: "Kenya", Currency: "KES", Type: "kepss", Active: true},
	},
}

// recipientTypes is the recipient type each currency's bank accounts take.
var recipientTypes = map[string]string{"NGN": "nuban", "ZAR": "basa", "KES": "kepss"}

// Delivery is how the fake sends a transfer's webhooks.
type Delivery int

const (
	Once  Delivery = iota // each event once, when the transfer reaches its status
	Twice                 // each event twice
	Never                 // none: the receiver must verify
)

// Transfer is a transfer as the fake keeps it.
type Transfer struct {
	ID            int64
	Reference     string
	TransferCode  string
	Amount        int64
	Currency      string
	Recipient     string
	Reason        string
	Status        string
	FailureReason string
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

type recipient struct {
	Code, Type, Name, AccountNumber, BankCode, Currency string
}

// Server is the fake Paystack API.
type Server struct {
	t      Reporter
	srv    *httptest.Server
	secret string
	client *http.Client

	mu         sync.Mutex
	webhookURL string
	delivery   Delivery
	settleWith string           // the status a new transfer reaches by itself; "" leaves it pending
	balance    map[string]int64 // per currency, in subunits; a currency not set is unlimited
	fail       map[string]int
	hang       map[string]int
	recipients map[string]recipient
	transfers  map[string]*Transfer
	posts      int
	nextID     int64
	sent       []string // webhook events sent, in order ("transfer.success ref")
	wg         sync.WaitGroup
}

// Reporter is told of a fake's misuse: a test's testing.TB, or the
// crash harness's own record when it runs the fake under its load.
type Reporter interface {
	Errorf(format string, args ...any)
}

// NewServer starts a fake that accepts secret as its secret key, for the
// test's lifetime. New transfers stay pending until Settle, unless
// SettleWith says otherwise.
func NewServer(t testing.TB, secret string) *Server {
	s := Start(t, secret)
	t.Cleanup(s.Close)
	return s
}

// Start starts a fake outside a test's lifetime; the caller closes it.
func Start(r Reporter, secret string) *Server {
	s := &Server{t: r, secret: secret, client: &http.Client{Timeout: 5 * time.Second},
		fail: map[string]int{}, balance: map[string]int64{}, hang: map[string]int{}, recipients: map[string]recipient{}, transfers: map[string]*Transfer{}, nextID: 1000}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Close stops the fake once the webhooks it is sending have been answered.
func (s *Server) Close() {
	s.srv.CloseClientConnections()
	s.srv.Close()
	s.wg.Wait()
}

// URL is the fake's base URL (LEDGER_PAYSTACK_BASE_URL).
func (s *Server) URL() string { return s.srv.URL }

// SetWebhookURL is the integration's webhook URL, as set on the dashboard.
func (s *Server) SetWebhookURL(u string) { s.mu.Lock(); s.webhookURL = u; s.mu.Unlock() }

// SetDelivery sets how webhooks are sent from now on.
func (s *Server) SetDelivery(d Delivery) { s.mu.Lock(); s.delivery = d; s.mu.Unlock() }

// SettleWith makes every new transfer reach status (success or failed) as
// soon as it is queued, its webhook sent after the POST is answered.
func (s *Server) SettleWith(status string) { s.mu.Lock(); s.settleWith = status; s.mu.Unlock() }

// SetBalance sets the integration's balance in currency (subunits): a
// transfer it cannot pay is refused as the docs say.
func (s *Server) SetBalance(currency string, amount int64) {
	s.mu.Lock()
	s.balance[currency] = amount
	s.mu.Unlock()
}

// FailNext makes the next n requests to route ("METHOD /path", or a path
// under it: "GET /transfer/verify") answer 500 without doing anything.
func (s *Server) FailNext(route string, n int) { s.mu.Lock(); s.fail[route] += n; s.mu.Unlock() }

// HangNext makes the next n requests to route do their work and
// then never answer (until the client gives up): a timeout after which
// the caller cannot know whether it happened.
func (s *Server) HangNext(route string, n int) { s.mu.Lock(); s.hang[route] += n; s.mu.Unlock() }

// Posts is how many POST /transfer requests reached the fake.
func (s *Server) Posts() int { s.mu.Lock(); defer s.mu.Unlock(); return s.posts }

// Transfers is how many transfers exist: never more than one per reference.
func (s *Server) Transfers() int { s.mu.Lock(); defer s.mu.Unlock(); return len(s.transfers) }

// Transfer returns the transfer with reference.
func (s *Server) Transfer(reference string) (Transfer, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tr, ok := s.transfers[reference]
	if !ok {
		return Transfer{}, false
	}
	return *tr, true
}

// Pending lists the references of the transfers still pending, for a
// caller that plays the bank and settles them in its own time.
func (s *Server) Pending() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var refs []string
	for ref, tr := range s.transfers {
		if tr.Status == "pending" {
			refs = append(refs, ref)
		}
	}
	return refs
}

// Sent lists the webhooks sent so far, as "event reference".
func (s *Server) Sent() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.sent...)
}

// Settle moves a transfer to status (success, failed or reversed) and
// sends its webhook as the delivery setting says.
func (s *Server) Settle(reference, status string) {
	s.mu.Lock()
	tr, ok := s.transfers[reference]
	if !ok {
		s.mu.Unlock()
		s.t.Errorf("paystacktest: settle: no transfer %s", reference)
		return
	}
	tr.Status, tr.UpdatedAt = status, time.Now().UTC()
	if status != "success" {
		tr.FailureReason = "Could not credit the account"
	}
	snap := *tr
	times := map[Delivery]int{Once: 1, Twice: 2}[s.delivery]
	s.mu.Unlock()
	for range times {
		s.Send("transfer."+status, snap)
	}
}

// Send posts one signed webhook of event about tr now, whatever the
// transfer's current status (tests send stale and out-of-order events
// so), and returns the status the receiver answered (0: no answer).
func (s *Server) Send(event string, tr Transfer) int {
	body := WebhookBody(event, tr)
	return s.Post(body, Sign(s.secret, body))
}

// Post posts body with signature as its x-paystack-signature header to
// the webhook URL and returns the status answered.
func (s *Server) Post(body []byte, signature string) int {
	s.mu.Lock()
	u := s.webhookURL
	var ev struct {
		Event string
		Data  struct{ Reference string }
	}
	_ = json.Unmarshal(body, &ev)
	s.sent = append(s.sent, ev.Event+" "+ev.Data.Reference)
	s.mu.Unlock()
	if u == "" {
		return 0
	}
	req, err := http.NewRequest(http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		s.t.Errorf("paystacktest: webhook: %v", err)
		return 0
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-paystack-signature", signature)
	resp, err := s.client.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// Sign is the x-paystack-signature of body: hex HMAC-SHA512 keyed by the secret key.
func Sign(secret string, body []byte) string {
	m := hmac.New(sha512.New, []byte(secret))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// WebhookBody is the body of a transfer webhook, shaped as the docs'
// transfer.success sample.
func WebhookBody(event string, tr Transfer) []byte {
	status := strings.TrimPrefix(event, "transfer.")
	b, _ := json.Marshal(map[string]any{"event": event, "data": transferJSON(tr, status)})
	return b
}

func transferJSON(tr Transfer, status string) map[string]any {
	var failures any
	if tr.FailureReason != "" && status != "success" {
		failures = tr.FailureReason
	}
	return map[string]any{"amount": tr.Amount, "currency": tr.Currency, "domain": "test", "failures": failures,
		"id": tr.ID, "integration": 463433, "reason": tr.Reason, "reference": tr.Reference, "source": "balance",
		"source_details": nil, "status": status, "titan_code": nil, "transfer_code": tr.TransferCode,
		"transferred_at": nil, "recipient": map[string]any{"recipient_code": tr.Recipient},
		"createdAt": tr.CreatedAt.Format(time.RFC3339Nano), "updatedAt": tr.UpdatedAt.Format(time.RFC3339Nano)}
}

// referencePattern is what the docs allow in a reference.
var referencePattern = regexp.MustCompile(`^[a-z0-9_-]{1,100}$`)

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	route := r.Method + " " + r.URL.Path
	s.mu.Lock()
	for prefix, n := range s.fail {
		if n > 0 && under(route, prefix) {
			s.fail[prefix]--
			s.mu.Unlock()
			answer(w, http.StatusInternalServerError, false, "An error occurred", nil)
			return
		}
	}
	hang := false
	for prefix, n := range s.hang {
		if n > 0 && under(route, prefix) {
			s.hang[prefix]--
			hang = true
			break
		}
	}
	s.mu.Unlock()
	auth := r.Header.Get("Authorization")
	switch {
	case auth == "":
		answer(w, http.StatusUnauthorized, false, "No Authorization Header was found", nil)
		return
	case !hmac.Equal([]byte(auth), []byte("Bearer "+s.secret)):
		answer(w, http.StatusUnauthorized, false, "Invalid key", nil)
		return
	}
	rec := httptest.NewRecorder()
	after := s.route(rec, r)
	if hang {
		<-r.Context().Done() // the work is done; the answer never comes
		return
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	w.Write(rec.Body.Bytes())
	if after != nil {
		s.wg.Add(1)
		go func() { defer s.wg.Done(); after() }()
	}
}

// under says route is prefix or a path below it.
func under(route, prefix string) bool {
	return route == prefix || strings.HasPrefix(route, strings.TrimSuffix(prefix, "/")+"/")
}

// route does the request's work into rec and returns what to do once it is answered.
func (s *Server) route(w http.ResponseWriter, r *http.Request) func() {
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/bank":
		banks, ok := Banks[strings.ToLower(r.URL.Query().Get("country"))]
		if !ok {
			banks = []Bank{}
		}
		answer(w, http.StatusOK, true, "Banks retrieved", banks)
	case r.Method == http.MethodPost && r.URL.Path == "/transferrecipient":
		s.createRecipient(w, r)
	case r.Method == http.MethodPost && r.URL.Path == "/transfer":
		return s.createTransfer(w, r)
	case r.Method == http.MethodGet && r.URL.Path == "/transfer":
		s.listTransfers(w, r)
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/transfer/verify/"):
		s.mu.Lock()
		tr, ok := s.transfers[strings.TrimPrefix(r.URL.Path, "/transfer/verify/")]
		var data map[string]any
		if ok {
			data = transferJSON(*tr, tr.Status)
		}
		s.mu.Unlock()
		if !ok {
			answer(w, http.StatusNotFound, false, "Transfer not found", nil)
			return nil
		}
		answer(w, http.StatusOK, true, "Transfer retrieved", data)
	default:
		answer(w, http.StatusNotFound, false, "Route not found", nil)
	}
	return nil
}

func (s *Server) createRecipient(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Type          string `json:"type"`
		Name          string `json:"name"`
		AccountNumber string `json:"account_number"`
		BankCode      string `json:"bank_code"`
		Currency      string `json:"currency"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		answer(w, http.StatusBadRequest, false, "Invalid JSON", nil)
		return
	}
	bank, ok := bankOf(req.BankCode, req.Currency)
	switch {
	case req.Name == "" || req.AccountNumber == "":
		answer(w, http.StatusBadRequest, false, "Name and account number are required", nil)
		return
	case recipientTypes[req.Currency] == "" || recipientTypes[req.Currency] != req.Type:
		answer(w, http.StatusBadRequest, false, fmt.Sprintf("Recipient type %q is not valid for %s", req.Type, req.Currency), nil)
		return
	case !ok:
		answer(w, http.StatusBadRequest, false, "Cannot resolve account", nil)
		return
	}
	key := req.Type + "/" + req.BankCode + "/" + req.AccountNumber
	s.mu.Lock()
	rc, found := s.recipients[key]
	if !found {
		s.nextID++
		rc = recipient{Code: fmt.Sprintf("RCP_%d", s.nextID), Type: req.Type, Name: req.Name, AccountNumber: req.AccountNumber,
			BankCode: req.BankCode, Currency: req.Currency}
		s.recipients[key] = rc
	}
	s.mu.Unlock()
	answer(w, http.StatusCreated, true, "Transfer recipient created successfully", map[string]any{
		"active": true, "currency": rc.Currency, "name": rc.Name, "recipient_code": rc.Code, "type": rc.Type,
		"details": map[string]any{"account_number": rc.AccountNumber, "account_name": nil, "bank_code": rc.BankCode, "bank_name": bank.Name}})
}

func bankOf(code, currency string) (Bank, bool) {
	for _, list := range Banks {
		for _, b := range list {
			if b.Code == code && b.Currency == currency {
				return b, true
			}
		}
	}
	return Bank{}, false
}

func (s *Server) createTransfer(w http.ResponseWriter, r *http.Request) func() {
	var req struct {
		Source    string `json:"source"`
		Amount    int64  `json:"amount"`
		Recipient string `json:"recipient"`
		Reason    string `json:"reason"`
		Currency  string `json:"currency"`
		Reference string `json:"reference"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		answer(w, http.StatusBadRequest, false, "Invalid JSON", nil)
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.posts++
	var rc recipient
	found := false
	for _, c := range s.recipients {
		if c.Code == req.Recipient {
			rc, found = c, true
		}
	}
	switch {
	case req.Source != "balance":
		answer(w, http.StatusBadRequest, false, "Invalid source", nil)
		return nil
	case req.Amount <= 0:
		answer(w, http.StatusBadRequest, false, "Invalid amount", nil)
		return nil
	case !referencePattern.MatchString(req.Reference):
		answer(w, http.StatusBadRequest, false, "Invalid reference", nil)
		return nil
	case !found:
		answer(w, http.StatusBadRequest, false, "Recipient specified is invalid", nil)
		return nil
	case req.Currency != rc.Currency:
		answer(w, http.StatusBadRequest, false, "Currency does not match the recipient's", nil)
		return nil
	}
	if tr, dup := s.transfers[req.Reference]; dup {
		// Retrying a reference never makes a second transfer: the answer is
		// the transfer that reference already made.
		answer(w, http.StatusOK, true, "Transfer has been queued", transferJSON(*tr, tr.Status))
		return nil
	}
	if have, limited := s.balance[req.Currency]; limited && have < req.Amount {
		// "Managing Transfers": a balance check runs before a transfer is created.
		answer(w, http.StatusBadRequest, false, "Your balance is not enough to fulfil this request", nil)
		return nil
	} else if limited {
		s.balance[req.Currency] = have - req.Amount
	}
	now := time.Now().UTC()
	s.nextID++
	tr := &Transfer{ID: s.nextID, Reference: req.Reference, TransferCode: fmt.Sprintf("TRF_%d", s.nextID), Amount: req.Amount,
		Currency: req.Currency, Recipient: req.Recipient, Reason: req.Reason, Status: "pending", CreatedAt: now, UpdatedAt: now}
	s.transfers[req.Reference] = tr
	answer(w, http.StatusOK, true, "Transfer has been queued", transferJSON(*tr, tr.Status))
	if status := s.settleWith; status != "" {
		return func() { s.Settle(req.Reference, status) }
	}
	return nil
}

func answer(w http.ResponseWriter, code int, ok bool, message string, data any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	body := map[string]any{"status": ok, "message": message}
	if data != nil {
		body["data"] = data
	}
	_ = json.NewEncoder(w).Encode(body)
}

// RecipientOf is the recipient tr pays, as it was created: its type, bank
// code and account number; all empty if the fake holds no such recipient.
func (s *Server) RecipientOf(tr Transfer) (kind, bankCode, account string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, rc := range s.recipients {
		if rc.Code == tr.Recipient {
			return rc.Type, rc.BankCode, rc.AccountNumber
		}
	}
	return "", "", ""
}
