package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	crand "crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/workers/rails/lightning/lndtest"
	"github.com/ledger/ledger/workers/rails/mpesa/mpesatest"
	"github.com/ledger/ledger/workers/rails/paystack"
	"github.com/ledger/ledger/workers/rails/paystack/paystacktest"
)

// The rails scenario runs ledgerd in production mode against the fakes of
// its providers, inside ledgerchaos so they outlive every ledgerd kill: a
// Lightning node (LND) funding bank payouts paid by Paystack Transfers,
// and M-Pesa Daraja taking STK prompts and paying B2C. ledgerchaos plays
// the payers (it pays each invoice and approves each prompt) and the bank
// (it settles each pending transfer), so it decides when a webhook or
// callback comes: twice, late, out of order, or never.

const (
	paystackChaosKey = "sk_test_ledgerchaos"
	b2cPath          = "/mpesa/b2c/v3/paymentrequest"
	stkPath          = "/mpesa/stkpush/v1/processrequest"
	statusPath       = "/mpesa/transactionstatus/v1/query"
)

var mpesaChaosCreds = mpesatest.Credentials{ConsumerKey: "ck_chaos", ConsumerSecret: "cs_chaos", ShortCode: "174379",
	PassKey: "bfb279f9aa9bdbcf158e97dd71a467cd", B2CShortCode: "600997", Initiator: "ledgerapi", InitiatorPassword: "Chaos999!"}

// railsFakes are the providers of a rails scenario and the payers' and
// bank's side of them.
type railsFakes struct {
	node     *lndtest.Node
	paystack *paystacktest.Server
	mpesa    *mpesatest.Server
	feed     *http.Server
	front    *railsFront
	env      []string
	// receiverCert is the partners' webhook receiver's: ledgerd trusts it
	// through SSL_CERT_FILE.
	receiverCert *tls.Certificate

	mu        sync.Mutex
	misuse    []string        // what a fake was told it should not have been
	approved  map[string]bool // STK prompts approved, by CheckoutRequestID
	delivery  string          // "once", "twice" or "never": how webhooks and callbacks go now
	withheld  []string        // transfers settled while webhooks were withheld, to send late
	lateSends int             // webhooks and callbacks sent late, out of order or again
	holding   bool            // the payers approve no prompt for now
	stop      chan struct{}
	done      sync.WaitGroup
}

// Errorf and Fatalf record a fake's misuse: the scenario fails on any.
func (f *railsFakes) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.misuse = append(f.misuse, fmt.Sprintf(format, args...))
}

func (f *railsFakes) Fatalf(format string, args ...any) { f.Errorf(format, args...) }

// startRailsFakes starts the providers and the front every callback and
// webhook reaches ledgerd through, and writes the secrets ledgerd reads
// from files under dir.
func startRailsFakes(dir string) (*railsFakes, error) {
	f := &railsFakes{approved: map[string]bool{}, delivery: "once", stop: make(chan struct{})}
	f.node = lndtest.StartNode(f)
	f.paystack = paystacktest.Start(f, paystackChaosKey)
	var err error
	if f.mpesa, err = mpesatest.Start(f, mpesaChaosCreds); err != nil {
		f.close()
		return nil, err
	}
	if f.front, err = startRailsFront(); err != nil {
		f.close()
		return nil, err
	}
	f.paystack.SetWebhookURL(f.front.url + paystack.WebhookPath)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.close()
		return nil, err
	}
	f.feed = &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"bitcoin":{"zar":1800000,"kes":12900000,"ngn":150000000,"gbp":76000,"eur":87000,"usd":100000}}`)
	})}
	go func() { _ = f.feed.Serve(ln) }()
	files := map[string][]byte{"ledger.macaroon": lndtest.Macaroon, "tls.cert": f.node.CertPEM(),
		"preimage.key": bytes.Repeat([]byte{3}, 32), "mpesa-secret": []byte(mpesaChaosCreds.ConsumerSecret),
		"mpesa-passkey": []byte(mpesaChaosCreds.PassKey), "mpesa-initiator": []byte(mpesaChaosCreds.InitiatorPassword),
		"mpesa-cert.pem": f.mpesa.Cert()}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			f.close()
			return nil, err
		}
	}
	file := func(name string) string { return filepath.Join(dir, name) }
	certPEM, cert, err := loopbackCert()
	if err != nil {
		f.close()
		return nil, err
	}
	f.receiverCert = cert
	if err := os.WriteFile(file("receiver.pem"), certPEM, 0o600); err != nil {
		f.close()
		return nil, err
	}
	f.env = []string{"LEDGER_MODE=production", "LEDGER_PRICE_FEED_URL=http://" + ln.Addr().String(),
		"LEDGER_LND_URL=" + f.node.URL(), "LEDGER_LND_MACAROON_FILE=" + file("ledger.macaroon"),
		"LEDGER_LND_TLS_CERT_FILE=" + file("tls.cert"), "LEDGER_LND_PREIMAGE_KEY_FILE=" + file("preimage.key"),
		"LEDGER_LND_INVOICE_POLL=100ms",
		"LEDGER_PAYSTACK_SECRET_KEY=" + paystackChaosKey, "LEDGER_PAYSTACK_BASE_URL=" + f.paystack.URL(),
		"LEDGER_MPESA_CONSUMER_KEY=" + mpesaChaosCreds.ConsumerKey, "LEDGER_MPESA_CONSUMER_SECRET_FILE=" + file("mpesa-secret"),
		"LEDGER_MPESA_SHORTCODE=" + mpesaChaosCreds.ShortCode, "LEDGER_MPESA_PASSKEY_FILE=" + file("mpesa-passkey"),
		"LEDGER_MPESA_B2C_SHORTCODE=" + mpesaChaosCreds.B2CShortCode, "LEDGER_MPESA_INITIATOR=" + mpesaChaosCreds.Initiator,
		"LEDGER_MPESA_INITIATOR_PASSWORD_FILE=" + file("mpesa-initiator"), "LEDGER_MPESA_CERT_FILE=" + file("mpesa-cert.pem"),
		"LEDGER_MPESA_BASE_URL=" + f.mpesa.URL(), "LEDGER_PUBLIC_URL=" + f.front.url,
		// Partners' webhooks go to https URLs only in production: the
		// receiver's on loopback, under a certificate of its own.
		"SSL_CERT_FILE=" + file("receiver.pem"), "LEDGER_WEBHOOK_ALLOW_PRIVATE=true",
		// A payout left transferring by a crash or a lost webhook is
		// verified with its provider within seconds, so the run settles.
		"LEDGER_STALLED_AFTER=3s",
		// A payment whose funding never came (the load stopped between
		// the request and the payer) expires while the scenario settles;
		// a prompt's payer answers within a second, unless a crash holds
		// the prompt back.
		"LEDGER_VALIDITY=lightning=" + chaosValidity.String() + ",momo=60s"}
	return f, nil
}

// loopbackCert makes a self-signed certificate for 127.0.0.1, and returns
// it as PEM and for a TLS listener.
func loopbackCert() ([]byte, *tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), crand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ledgerchaos receiver"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(crand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

// play runs the payers' and the bank's side until close: every STK prompt
// approved, every pending transfer settled, each as the delivery mode says.
func (f *railsFakes) play() {
	f.done.Add(1)
	go func() {
		defer f.done.Done()
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-f.stop:
				return
			case <-t.C:
			}
			f.mu.Lock()
			mode, holding := f.delivery, f.holding
			f.mu.Unlock()
			for _, p := range f.mpesa.Prompts() {
				if holding {
					break
				}
				f.mu.Lock()
				fresh := p.State == "processing" && !f.approved[p.CheckoutID]
				f.approved[p.CheckoutID] = true
				f.mu.Unlock()
				switch {
				case !fresh:
				case mode == "never":
					f.mpesa.ApproveWithoutCallback(p.CheckoutID)
				default:
					f.mpesa.Approve(p.CheckoutID)
				}
			}
			for _, ref := range f.paystack.Pending() {
				f.paystack.Settle(ref, "success")
				if mode == "never" {
					f.mu.Lock()
					f.withheld = append(f.withheld, ref)
					f.mu.Unlock()
				}
			}
		}
	}()
}

// setDelivery switches how webhooks and callbacks go from now on.
func (f *railsFakes) setDelivery(mode string) {
	f.mu.Lock()
	f.delivery = mode
	f.mu.Unlock()
	f.paystack.SetDelivery(map[string]paystacktest.Delivery{"once": paystacktest.Once, "twice": paystacktest.Twice,
		"never": paystacktest.Never}[mode])
	f.mpesa.CallbacksTwice(mode == "twice")
	f.mpesa.DropCallbacks(mode == "never")
}

// sendWithheld sends the webhooks withheld so far, newest first (late and
// out of order), each twice.
func (f *railsFakes) sendWithheld() {
	f.mu.Lock()
	refs := f.withheld
	f.withheld = nil
	f.mu.Unlock()
	for _, ref := range slices.Backward(refs) {
		tr, ok := f.paystack.Transfer(ref)
		if !ok {
			continue
		}
		f.paystack.Send("transfer.success", tr)
		f.paystack.Send("transfer.success", tr)
		f.mu.Lock()
		f.lateSends += 2
		f.mu.Unlock()
	}
}

func (f *railsFakes) close() {
	select {
	case <-f.stop:
	default:
		close(f.stop)
	}
	f.done.Wait()
	if f.front != nil {
		f.front.close()
	}
	if f.feed != nil {
		_ = f.feed.Close()
	}
	if f.mpesa != nil {
		f.mpesa.Close()
	}
	f.paystack.Close()
	f.node.Close()
}

// railsFront is ledgerd's public address (LEDGER_PUBLIC_URL) as a load
// balancer gives it: a callback goes to a ledgerd that runs, the next one
// when the first does not answer.
type railsFront struct {
	url    string
	srv    *http.Server
	client *http.Client

	mu       sync.Mutex
	backends []string
}

func startRailsFront() (*railsFront, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	fr := &railsFront{url: "http://" + ln.Addr().String(), client: &http.Client{Timeout: 10 * time.Second}}
	fr.srv = &http.Server{Handler: fr, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = fr.srv.Serve(ln) }()
	return fr, nil
}

func (fr *railsFront) setBackends(urls []string) {
	fr.mu.Lock()
	fr.backends = urls
	fr.mu.Unlock()
}

func (fr *railsFront) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	fr.mu.Lock()
	backends := fr.backends
	fr.mu.Unlock()
	first := rand.IntN(max(len(backends), 1))
	for i := range backends {
		req, err := http.NewRequestWithContext(r.Context(), r.Method, backends[(first+i)%len(backends)]+r.URL.RequestURI(), bytes.NewReader(body))
		if err != nil {
			break
		}
		req.Header = r.Header.Clone()
		resp, err := fr.client.Do(req)
		if err != nil {
			continue
		}
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
		resp.Body.Close()
		return
	}
	http.Error(w, "no ledgerd answers", http.StatusBadGateway)
}

func (fr *railsFront) close() { _ = fr.srv.Close() }

// railsPartner is what a partner pays in the rails scenario: bank
// merchants in three countries (Paystack), a Kenyan momo merchant (B2C),
// and a payer whose momo number the STK prompts go to.
type railsPartner struct {
	banks    []string // merchant ids: South Africa (the partner's own), Nigeria, Kenya
	momo     string   // merchant id
	payerTok string   // the payer's user token
}

// setupRailsPartners creates each partner's merchants and payer.
func setupRailsPartners(ctx context.Context, c *chaosClient, l *chaosLoad) ([]railsPartner, error) {
	post := func(path, tok string, body map[string]string, want int) (map[string]any, error) {
		b, _ := json.Marshal(body)
		a, err := c.do(ctx, http.MethodPost, path, tok, b)
		if err != nil || a.Status != want {
			return nil, orStatus(err, "POST "+path, a)
		}
		var out map[string]any
		return out, json.Unmarshal(a.Body, &out)
	}
	var out []railsPartner
	for i, p := range l.partners {
		rp := railsPartner{banks: []string{p.MerchantID}}
		for _, m := range []map[string]string{
			{"name": "Jumia", "country": "Nigeria", "bankName": "Zenith Bank", "accountNumber": "0123456789"},
			{"name": "Java House", "country": "Kenya", "bankName": "Equity Bank Kenya", "accountNumber": "0123456789012"},
			{"name": "Mama Mboga", "country": "Kenya", "phoneNumber": fmt.Sprintf("+2547220%05d", i)},
		} {
			got, err := post("/merchants", p.Token, m, http.StatusCreated)
			if err != nil {
				return nil, err
			}
			if m["phoneNumber"] != "" {
				rp.momo, _ = got["id"].(string)
			} else {
				rp.banks = append(rp.banks, got["id"].(string))
			}
		}
		u, err := post("/users", p.Token, map[string]string{"email": "payer-" + uuid.NewString() + "@example.com", "name": "Payer"}, http.StatusCreated)
		if err != nil {
			return nil, err
		}
		payer, _ := u["userId"].(string)
		tok, err := post("/users/token", p.Token, map[string]string{"userId": payer}, http.StatusOK)
		if err != nil {
			return nil, err
		}
		rp.payerTok, _ = tok["accessToken"].(string)
		if _, err := post("/profile/momo", rp.payerTok, map[string]string{"phoneNumber": fmt.Sprintf("+2547123%05d", i),
			"mobileNetwork": "MOMO", "countryCode": "KE"}, http.StatusCreated); err != nil {
			return nil, err
		}
		if rp.momo == "" || rp.payerTok == "" {
			return nil, errors.New("rails setup: a merchant or the payer's token is missing from the answers")
		}
		out = append(out, rp)
	}
	return out, nil
}

// payRails creates a payment on a production corridor: half Lightning to a
// bank merchant (the invoice paid at once by ledgerchaos's payer), half an
// M-Pesa prompt to the partner's payer for a momo merchant (approved by
// play). Both are funded as far as the payer goes: each must succeed.
func (l *chaosLoad) payRails(ctx context.Context, p int) error {
	n := l.payments.Add(1)
	hook := l.webhookURL(n)
	rp := l.rails[p]
	req := map[string]any{"reference": fmt.Sprintf("Rails %d", n), "webhookUrl": hook, "webhookSecret": l.secret}
	tok := l.partners[p].Token
	momo := rand.IntN(2) == 0
	if momo {
		req["merchantId"], req["fromCountry"], tok, req["amount"] = rp.momo, "Kenya", rp.payerTok, 150+rand.IntN(4851)
	} else {
		// Within each country's limits: ZAR, NGN, KES.
		i := rand.IntN(len(rp.banks))
		low := []int{100, 1000, 150}[i]
		req["merchantId"], req["amount"] = rp.banks[i], low+rand.IntN(10*low)
	}
	body, _ := json.Marshal(req)
	a, err := l.c.do(ctx, http.MethodPost, "/payments", tok, body)
	if err != nil || a.Status != http.StatusCreated {
		return orStatus(err, "POST /payments", a)
	}
	var created struct{ ID, LightningInvoice string }
	if err := json.Unmarshal(a.Body, &created); err != nil || created.ID == "" {
		return fmt.Errorf("POST /payments answer %q", a.Body)
	}
	rec := ackedPayment{ackedResource: ackedResource{Partner: p, ID: created.ID}, WebhookURL: hook}
	// A momo payment is funded once its payer approves the prompt
	// (markPrompted); a prompt answered 500 is never sent again, and its
	// payment expires unpaid.
	if !momo {
		var inv struct{ PaymentHash string }
		if err := json.Unmarshal([]byte(created.LightningInvoice), &inv); err != nil || inv.PaymentHash == "" {
			return fmt.Errorf("POST /payments: lightningInvoice %q", created.LightningInvoice)
		}
		if l.fakes.node.Settle(inv.PaymentHash, time.Now()) {
			rec.Deposited, rec.DepositedAt = true, time.Now()
		}
	}
	l.mu.Lock()
	l.acked.Payments = append(l.acked.Payments, rec)
	l.mu.Unlock()
	return nil
}

// markPrompted marks deposited the payments whose M-Pesa prompt the payer
// approved, by the AccountReference the prompt showed (the payment id's
// first 12 hex digits).
func (f *railsFakes) markPrompted(acked *chaosAcked) {
	paid := f.paidPrompts()
	for i, p := range acked.Payments {
		if paid[accountReference(p.ID)] {
			acked.Payments[i].Deposited = true
		}
	}
}

func (f *railsFakes) paidPrompts() map[string]bool {
	paid := map[string]bool{}
	for _, p := range f.mpesa.Prompts() {
		if p.State == "paid" {
			paid[p.AccountReference] = true
		}
	}
	return paid
}

// accountReference is what ledgerd puts in a prompt's AccountReference.
func accountReference(id string) string {
	if len(id) < 13 {
		return id
	}
	return id[:8] + id[9:13]
}

// railFaults is the rails scenario's disruption, one fault after another
// a sixth of -duration apart: the providers answer 500; webhooks and
// callbacks come twice; then none come for a while, and the withheld
// webhooks arrive late, newest first, twice each; every ledgerd is killed
// while a Paystack transfer it asked for is unanswered; then while a B2C
// request is.
func railFaults(ctx context.Context, r *chaosRun) ([]window, error) {
	f := r.fakes
	gap := max(r.cfg.duration/6, 2*time.Second)
	steps := []struct {
		name string
		do   func() error
	}{
		{"ProviderErrors", func() error {
			f.paystack.FailNext("POST /transfer", 4)
			f.paystack.FailNext("GET /transfer/verify", 2)
			// A B2C request or a prompt answered 500 is not sent again
			// (it may have been taken): the prompt's payment expires
			// unpaid, and the payout waits for an operator, which this
			// harness does not play. Their status queries are retried.
			f.mpesa.SetFault(statusPath, mpesatest.Fault{Status500: 3})
			f.mpesa.SetFault(stkPath, mpesatest.Fault{Status500: 2})
			return nil
		}},
		{"DeliveredTwice", func() error {
			f.setDelivery("twice")
			sleepCtx(ctx, gap/2)
			f.setDelivery("once")
			return nil
		}},
		{"DeliveredLateOutOfOrder", func() error {
			f.setDelivery("never")
			sleepCtx(ctx, gap/2)
			f.setDelivery("once")
			f.sendWithheld()
			return nil
		}},
		{"KilledMidTransfer", func() error {
			before := f.paystack.Posts()
			f.paystack.HangNext("POST /transfer", 1)
			if err := waitFor(ctx, 20*time.Second, "a transfer request", func() bool { return f.paystack.Posts() > before }); err != nil {
				return err
			}
			return f.killOnceB2CsTaken(ctx, r)
		}},
		{"KilledMidB2C", func() error {
			before := len(f.mpesa.Payments())
			// The results of the requests M-Pesa takes from now until
			// the restart are lost, so that only Transaction Status
			// queries can tell ledgerd what M-Pesa paid.
			f.mpesa.DropResults(true)
			defer f.mpesa.DropResults(false)
			f.mpesa.SetFault(b2cPath, mpesatest.Fault{Hang: true})
			defer f.mpesa.SetFault(b2cPath, mpesatest.Fault{})
			if err := waitFor(ctx, 20*time.Second, "a B2C request", func() bool { return len(f.mpesa.Payments()) > before }); err != nil {
				return err
			}
			// The kill is to come between the request and its record.
			return f.killOnceB2CsTaken(ctx, r)
		}},
	}
	for _, s := range steps {
		if !sleepCtx(ctx, gap) {
			return nil, nil
		}
		fmt.Fprintf(r.log, "ledgerchaos: rails: %s at %s\n", s.name, time.Now().Format(time.TimeOnly+".000"))
		if err := s.do(); err != nil {
			return nil, fmt.Errorf("%s: %w", s.name, err)
		}
		r.note("fault"+s.name, 1)
	}
	return nil, nil
}

// killOnceB2CsTaken kills every ledgerd once every B2C claimed is one
// M-Pesa took, the payers holding their approvals meanwhile so that no new
// payout is claimed. A B2C claimed but not yet sent when its process dies
// is never sent: M-Pesa does not know it, and the adapter leaves it to an
// operator (see docs/testing.md), which no kill step is about.
func (f *railsFakes) killOnceB2CsTaken(ctx context.Context, r *chaosRun) error {
	f.hold(true)
	defer f.hold(false)
	if err := waitFor(ctx, 20*time.Second, "every claimed B2C to reach M-Pesa", func() bool { return f.b2cSettledIn(ctx, r) }); err != nil {
		return err
	}
	return killAll(ctx, r)
}

func (f *railsFakes) hold(on bool) {
	f.mu.Lock()
	f.holding = on
	f.mu.Unlock()
}

// b2cSettledIn says whether no momo payment waits to be paid out and every
// B2C request ledgerd claimed without an answer is one M-Pesa took.
func (f *railsFakes) b2cSettledIn(ctx context.Context, r *chaosRun) bool {
	var waiting int
	if err := r.pool.QueryRow(ctx, `SELECT count(*) FROM payments WHERE status = 'deposited'`).Scan(&waiting); err != nil || waiting > 0 {
		return false
	}
	rows, err := r.pool.Query(ctx, `SELECT originator_id FROM mpesa_payouts WHERE posted AND status = 'pending' AND conversation_id = ''`)
	if err != nil {
		return false
	}
	defer rows.Close()
	taken := f.mpesa.Payments()
	for rows.Next() {
		var id string
		if rows.Scan(&id) != nil {
			return false
		}
		if _, ok := taken[id]; !ok {
			return false
		}
	}
	return rows.Err() == nil
}

// killAll kills every ledgerd, as which one sent the payout request left
// unanswered is not known, and restarts them a second later.
func killAll(ctx context.Context, r *chaosRun) error {
	for i := range r.cluster.nodes {
		r.cluster.kill(i)
	}
	r.note("kills", len(r.cluster.killTimes()))
	sleepCtx(context.WithoutCancel(ctx), time.Second)
	for i := range r.cluster.nodes {
		if err := r.cluster.restart(context.WithoutCancel(ctx), i); err != nil {
			return err
		}
	}
	return nil
}

// railsPayouts fills the findings' payout figures from the fakes' own
// records: a transfer per Paystack reference, a B2C payment per
// OriginatorConversationID, each of which must be the id of a payment that
// succeeded, and no payment paid by both.
func railsPayouts(ctx context.Context, r *chaosRun, f *chaosFindings) error {
	rows, err := r.pool.Query(ctx, `SELECT id::text FROM payments WHERE status = 'success'`)
	if err != nil {
		return err
	}
	var succeeded []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return err
		}
		succeeded = append(succeeded, id)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	fk := r.fakes
	b2c := fk.mpesa.Payments()
	// A succeeded payment's change refund (key change-<id>) is a transfer
	// or a B2C payment too, to the payer: not a payout.
	refunds := 0
	for _, id := range succeeded {
		key := domain.ChangeRefundKey(uuid.MustParse(id)) // ids read from the uuid column
		if _, ok := fk.paystack.Transfer(key); ok {
			refunds++
		}
		if _, ok := b2c[key]; ok {
			refunds++
		}
	}
	f.PayoutCalls, f.Payouts = fk.paystack.Posts(), fk.paystack.Transfers()+len(b2c)-refunds
	matched := 0
	for _, id := range succeeded {
		n := 0
		if _, ok := fk.paystack.Transfer(id); ok {
			n++
		}
		if _, ok := b2c[id]; ok {
			n++
		}
		matched += n
		if n > 1 {
			f.DoublePayouts++
		}
	}
	for _, p := range b2c {
		f.PayoutCalls += p.Requests
	}
	r.note("payoutsOfNoSucceededPayment", f.Payouts-matched)
	won := map[string]bool{}
	for _, id := range succeeded {
		won[accountReference(id)] = true
	}
	charged := 0
	for ref := range fk.paidPrompts() {
		if !won[ref] {
			charged++
		}
	}
	r.note("mpesaPayersChargedNotSucceeded", charged)
	r.note("paystackTransfersPending", len(fk.paystack.Pending()))
	r.note("paystackTransfers", fk.paystack.Transfers())
	r.note("paystackPosts", fk.paystack.Posts())
	r.note("b2cPayments", len(b2c))
	r.note("changeRefunds", refunds)
	r.note("stkPrompts", len(fk.mpesa.Prompts()))
	r.note("b2cStatusQueries", fk.mpesa.StatusQueries())
	fk.mu.Lock()
	r.note("webhooksSentLateOrAgain", fk.lateSends)
	fk.mu.Unlock()
	return nil
}

// checkRails is the rails scenario's own checks.
func checkRails(r *chaosRun, res *chaosResult) {
	r.fakes.mu.Lock()
	misuse := len(r.fakes.misuse)
	r.fakes.mu.Unlock()
	res.add("misuses the fakes reported (an invoice or prompt unknown to them)", misuse, 0)
	res.add("payouts at the providers of no payment that succeeded", r.notes["payoutsOfNoSucceededPayment"], 0)
	res.add("Paystack transfers left pending", r.notes["paystackTransfersPending"], 0)
	res.add("M-Pesa payers who paid a prompt whose payment did not succeed", r.notes["mpesaPayersChargedNotSucceeded"], 0)
	res.addAtLeast("Paystack transfers made", r.notes["paystackTransfers"], 1)
	res.addAtLeast("M-Pesa B2C payments made", r.notes["b2cPayments"], 1)
	res.addAtLeast("webhooks sent late, out of order and again", r.notes["webhooksSentLateOrAgain"], 1)
	res.addAtLeast("ledgerd kills while a payout request was unanswered", r.notes["kills"], 2*len(r.cluster.nodes))
	res.addAtLeast("B2C payouts recovered by Transaction Status queries (queries made)", r.notes["b2cStatusQueries"], 1)
}
