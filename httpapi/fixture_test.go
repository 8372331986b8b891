package httpapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/domain"
)

// fixture is a sandbox Server over in-memory fakes, for the fuzz targets
// that drive handlers: one tenant with one active user (two momo
// accounts), a merchant of every payout method, and one created payment. State never changes between calls, so every input is judged
// against the same world.
type fixture struct {
	s            *Server
	tenant, self Caller // a tenant token, and the user's own token
	user         domain.User
	payment      domain.PaymentSnapshot
	za, ke, btc  uuid.UUID // merchants: South African bank, Kenyan momo, Lightning
	reads        *readArgs
}

// readArgs is what the read-side fakes were last asked for.
type readArgs struct {
	limit     int
	after     int64
	eventType string
	status    string
	asOf      time.Time
}

func newFixture(f *testing.F) *fixture {
	fx := &fixture{reads: &readArgs{}}
	tenantID := uuid.MustParse("01937f4e-5a00-7000-8000-000000000001")
	fx.user = fixtureUser(f)
	loc, err := time.LoadLocation("Africa/Johannesburg")
	if err != nil {
		f.Fatal(err)
	}
	merchants := &fakeMerchants{byID: map[uuid.UUID]domain.Merchant{}, reads: fx.reads}
	for i, c := range []domain.CreateMerchant{
		{Name: "Cape Coffee", Country: "SouthAfrica", BankName: "Capitec Bank", AccountNumber: "1234567890"},
		{Name: "Duka", Country: "Kenya", PhoneNumber: "+254712345678"},
		{Name: "Tips", Country: "BTC", LNURL: "tips@getalby.com"},
	} {
		c.MerchantID = uuid.MustParse(fmt.Sprintf("01937f4e-5a00-7000-8000-0000000001%02d", i))
		events, err := domain.DecideCreateMerchant(domain.Merchant{}, c)
		if err != nil {
			f.Fatal(err)
		}
		merchants.byID[c.MerchantID] = fold(domain.Merchant{}, domain.ApplyMerchant, events)
	}
	fx.za = uuid.MustParse("01937f4e-5a00-7000-8000-000000000100")
	fx.ke = uuid.MustParse("01937f4e-5a00-7000-8000-000000000101")
	fx.btc = uuid.MustParse("01937f4e-5a00-7000-8000-000000000102")
	payments := &fakePayments{reads: fx.reads, merchants: merchants, payer: fx.user, loc: loc}
	fx.s = New(Config{Sandbox: true, TenantTokenTTL: time.Hour, UserTokenTTL: 24 * time.Hour},
		Deps{Registry: prometheus.NewRegistry(), Log: slog.New(slog.DiscardHandler), Keys: testKeys,
			Credentials: fakeCredentials{tenantID: tenantID}, Users: &fixtureUsers{user: fx.user, reads: fx.reads},
			Merchants: merchants, Payments: payments, Sandbox: fakeSandbox{},
			Events: fakeEvents{reads: fx.reads}, Ledger: fakeLedger{reads: fx.reads},
			Documents: fakeDocuments{}})
	fx.s.now = func() time.Time { return k1RetiredAt } // a Tuesday, 10:00 in Johannesburg
	fx.tenant = Caller{TenantID: tenantID, Kind: KindTenant, APIKey: "key"}
	fx.self = Caller{TenantID: tenantID, UserID: fx.user.ID, Kind: KindUser, APIKey: "key"}

	// The payment endpoints need a payment: create one through the handler.
	r := httptest.NewRequest(http.MethodPost, "/payments",
		strings.NewReader(`{"merchantId":"`+fx.za.String()+`","amount":1500,"reference":"Invoice 42"}`))
	r.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	fx.s.route(fx.s.createPayment).ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), callerKey{}, fx.tenant)))
	if rec.Code != http.StatusCreated {
		f.Fatalf("create the fixture payment: got %d %s", rec.Code, rec.Body)
	}
	payments.payment = payments.created
	// A fixed id, so that seeds naming it mean the same in every fuzzing process.
	payments.payment.ID = uuid.MustParse("01937f4e-5a00-7000-8000-000000000300")
	fx.payment = payments.payment
	return fx
}

// fixtureUser is an active user with two momo accounts.
func fixtureUser(f *testing.F) domain.User {
	id := uuid.MustParse("01937f4e-5a00-7000-8000-000000000002")
	events, err := domain.DecideCreateUser(domain.User{}, domain.CreateUser{UserID: id, Email: "ann@example.com", Name: "Ann"})
	if err != nil {
		f.Fatal(err)
	}
	u := fold(domain.User{}, domain.ApplyUser, events)
	for i, phone := range []string{"+254712345678", "+254712345679"} {
		events, err := domain.DecideAddMomoAccount(u, domain.AddMomoAccount{AccountID: uuid.MustParse(fmt.Sprintf("01937f4e-5a00-7000-8000-0000000002%02d", i)),
			PhoneNumber: phone, MobileNetwork: "MOMO", CountryCode: "KE"})
		if err != nil {
			f.Fatal(err)
		}
		u = fold(u, domain.ApplyUser, events)
	}
	return u
}

func fold[S any](s S, apply func(S, domain.Event) S, events []domain.Event) S {
	for _, e := range events {
		s = apply(s, e)
	}
	return s
}

// fixtureUsers holds one user; any other id is a user not created yet.
type fixtureUsers struct {
	user  domain.User
	reads *readArgs
}

func (f *fixtureUsers) state(id uuid.UUID) domain.User {
	if id == f.user.ID {
		return f.user
	}
	return domain.User{}
}

// execute decides on the user of ref and keeps nothing.
func (f *fixtureUsers) execute(ref domain.StreamRef, decide func(domain.User) ([]domain.Event, error)) (domain.UserSnapshot, error) {
	u := f.state(ref.ID)
	events, err := decide(u)
	if err != nil {
		return domain.UserSnapshot{}, err
	}
	return domain.UserSnapshot{User: fold(u, domain.ApplyUser, events)}, nil
}

// CreateUser creates every email anew: the fixture's user has no twin.
func (f *fixtureUsers) CreateUser(_ context.Context, _ uuid.UUID, email, name string, _ domain.Metadata) (domain.UserSnapshot, bool, error) {
	email, err := domain.NormaliseEmail(email)
	if err != nil {
		return domain.UserSnapshot{}, false, err
	}
	id := uuid.New()
	u, err := f.execute(domain.StreamRef{ID: id}, func(u domain.User) ([]domain.Event, error) {
		return domain.DecideCreateUser(u, domain.CreateUser{UserID: id, Email: email, Name: name})
	})
	return u, err == nil, err
}

func (f *fixtureUsers) UpdateUser(_ context.Context, ref domain.StreamRef, cmd domain.UpdateUser, _ domain.Metadata) (domain.UserSnapshot, error) {
	return f.execute(ref, func(u domain.User) ([]domain.Event, error) { return domain.DecideUpdateUser(u, cmd, k1RetiredAt) })
}

func (f *fixtureUsers) DisableUser(_ context.Context, ref domain.StreamRef, _ domain.Metadata) (domain.UserSnapshot, error) {
	return f.execute(ref, domain.DecideDisableUser)
}

func (f *fixtureUsers) UploadKYCDocument(_ context.Context, ref domain.StreamRef, cmd domain.UploadKYCDocument, _ domain.Metadata) (domain.UserSnapshot, error) {
	return f.execute(ref, func(u domain.User) ([]domain.Event, error) { return domain.DecideUploadKYCDocument(u, cmd) })
}

func (f *fixtureUsers) UpdateProfile(_ context.Context, ref domain.StreamRef, patch domain.ProfilePatch, _ domain.Metadata) (domain.UserSnapshot, error) {
	return f.execute(ref, func(u domain.User) ([]domain.Event, error) { return domain.DecideUpdateProfile(u, patch) })
}

func (f *fixtureUsers) AddMomoAccount(_ context.Context, ref domain.StreamRef, cmd domain.AddMomoAccount, _ domain.Metadata) (domain.UserSnapshot, error) {
	cmd.AccountID = uuid.New()
	return f.execute(ref, func(u domain.User) ([]domain.Event, error) { return domain.DecideAddMomoAccount(u, cmd) })
}

func (f *fixtureUsers) UpdateMomoAccount(_ context.Context, ref domain.StreamRef, cmd domain.UpdateMomoAccount, _ domain.Metadata) (domain.UserSnapshot, error) {
	return f.execute(ref, func(u domain.User) ([]domain.Event, error) { return domain.DecideUpdateMomoAccount(u, cmd) })
}

func (f *fixtureUsers) RemoveMomoAccount(_ context.Context, ref domain.StreamRef, id uuid.UUID, _ domain.Metadata) (domain.UserSnapshot, error) {
	return f.execute(ref, func(u domain.User) ([]domain.Event, error) { return domain.DecideRemoveMomoAccount(u, id) })
}

func (f *fixtureUsers) User(_ context.Context, _, id uuid.UUID) (domain.UserSnapshot, error) {
	if id != f.user.ID {
		return domain.UserSnapshot{}, domain.ErrNotFound
	}
	return domain.UserSnapshot{User: f.user}, nil
}

func (f *fixtureUsers) ListUsers(_ context.Context, _ uuid.UUID, status string, limit int, _ string) ([]domain.UserListItem, string, error) {
	f.reads.status, f.reads.limit = status, limit
	return nil, "", nil
}

func (f *fixtureUsers) OwnerUserID(context.Context, uuid.UUID) (uuid.UUID, error) {
	return f.user.ID, nil
}

// fakeCredentials knows one API key, "key", whose secret is "secret", and
// takes every user for active.
type fakeCredentials struct{ tenantID uuid.UUID }

func (c fakeCredentials) Credential(_ context.Context, apiKey string) (domain.Credential, error) {
	if apiKey != "key" {
		return domain.Credential{}, domain.ErrNotFound
	}
	return domain.Credential{APIKey: apiKey, TenantID: c.tenantID,
		SecretHash: "2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b"}, nil // SHA-256 of "secret"
}

func (fakeCredentials) PrincipalActive(context.Context, uuid.UUID, string, uuid.UUID) (bool, error) {
	return true, nil
}

func (fakeCredentials) UserStatus(context.Context, uuid.UUID, uuid.UUID) (string, error) {
	return domain.UserActive, nil
}

func (fakeCredentials) TouchAPIKey(context.Context, string, time.Time) error { return nil }

// fakeMerchants holds fixed merchants; a new one is decided and not kept.
type fakeMerchants struct {
	byID  map[uuid.UUID]domain.Merchant
	reads *readArgs
}

func (m *fakeMerchants) CreateMerchant(_ context.Context, _ uuid.UUID, cmd domain.CreateMerchant, _ domain.Metadata) (domain.MerchantSnapshot, error) {
	cmd.MerchantID = uuid.New()
	events, err := domain.DecideCreateMerchant(domain.Merchant{}, cmd)
	if err != nil {
		return domain.MerchantSnapshot{}, err
	}
	return domain.MerchantSnapshot{Merchant: fold(domain.Merchant{}, domain.ApplyMerchant, events)}, nil
}

func (m *fakeMerchants) Merchant(_ context.Context, _, id uuid.UUID) (domain.MerchantSnapshot, error) {
	if mm, ok := m.byID[id]; ok {
		return domain.MerchantSnapshot{Merchant: mm}, nil
	}
	return domain.MerchantSnapshot{}, domain.ErrNotFound
}

func (m *fakeMerchants) ListMerchants(_ context.Context, _ uuid.UUID, limit int, _ string) ([]domain.MerchantSnapshot, string, error) {
	m.reads.limit = limit
	return nil, "", nil
}

// fakePayments decides on one fixed payment and keeps nothing but the
// last payment created, which it creates with the domain's steps of the
// use case: the fixture's merchants and payer, sandbox prices, and every
// rail funding.
type fakePayments struct {
	payment, created domain.PaymentSnapshot
	reads            *readArgs
	merchants        *fakeMerchants
	payer            domain.User
	loc              *time.Location
}

func (p *fakePayments) execute(decide func(domain.Payment) ([]domain.Event, error)) (domain.PaymentSnapshot, error) {
	events, err := decide(p.payment.Payment)
	if err != nil {
		return domain.PaymentSnapshot{}, err
	}
	return domain.PaymentSnapshot{Payment: fold(p.payment.Payment, domain.ApplyPayment, events)}, nil
}

func (p *fakePayments) AttachPaymentDocument(_ context.Context, _ domain.StreamRef, doc domain.AttachPaymentDocument, _ domain.Metadata) (domain.PaymentSnapshot, error) {
	doc.Now = k1RetiredAt
	return p.execute(func(p domain.Payment) ([]domain.Event, error) { return domain.DecideAttachPaymentDocument(p, doc) })
}

func (p *fakePayments) RecordSandboxDeposit(_ context.Context, _ domain.StreamRef, _ domain.PaymentSnapshot, amount decimal.Decimal,
	_ domain.Metadata) (domain.PaymentSnapshot, error) {
	return p.execute(func(p domain.Payment) ([]domain.Event, error) {
		if amount.IsZero() {
			amount = p.Outstanding()
		}
		return domain.DecideDeposit(p, domain.RecordDeposit{Amount: amount, Now: k1RetiredAt})
	})
}

func (p *fakePayments) CreatePayment(_ context.Context, _, _ uuid.UUID, req domain.PaymentRequest, _ domain.Metadata) (domain.PaymentSnapshot, error) {
	order, err := domain.ValidatePaymentRequest(req, true)
	if err != nil {
		return domain.PaymentSnapshot{}, err
	}
	mid, _ := uuid.Parse(order.MerchantID) // uuid.Nil names no merchant
	m, err := p.merchants.Merchant(context.Background(), uuid.Nil, mid)
	if err != nil {
		return domain.PaymentSnapshot{}, domain.Invalidf("merchantId", "names no merchant of this tenant")
	}
	plan, err := domain.PlanPayment(order, m.Merchant, p.payer, domain.DefaultValidity, k1RetiredAt, p.loc)
	if err != nil {
		return domain.PaymentSnapshot{}, err
	}
	quote, err := domain.QuotePayment(domain.QuoteInput{FromCurrency: order.FromCurrency, DestinationCurrency: m.Currency,
		Amount: order.Amount, BufferRate: order.BufferRateOrZero(), OTCFeeRate: decimal.RequireFromString("0.01"), Prices: fixturePrices()})
	if err != nil {
		return domain.PaymentSnapshot{}, err
	}
	id := uuid.Must(uuid.NewV7())
	var funding domain.PaymentFunding
	switch plan.Funding {
	case domain.FundingLightning:
		funding.Invoice = &domain.LightningInvoice{PaymentRequest: "lnbcrt1", PaymentHash: strings.Repeat("0", 64),
			AmountSats: quote.AmountSats, ExpiresAt: k1RetiredAt.Add(plan.Validity)}
	case domain.FundingUSDT:
		funding.USDTAddress = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
	case domain.FundingBankTransfer:
		funding.Collection = domain.CollectionAccount{Name: "Ledger Collections", Number: "62000000001"}
	case domain.FundingMomo:
		funding.PayerMomoPhone = p.payer.MomoAccounts[0].PhoneNumber
	}
	events, err := domain.DecideCreatePayment(domain.Payment{}, domain.CreatePayment{PaymentID: id, UserID: p.payer.ID,
		Plan: plan, Quote: quote, Funding: funding, Now: k1RetiredAt})
	if err != nil {
		return domain.PaymentSnapshot{}, err
	}
	p.created = domain.PaymentSnapshot{Payment: fold(domain.Payment{}, domain.ApplyPayment, events)}
	return p.created, nil
}

func (p *fakePayments) Payment(_ context.Context, _, id uuid.UUID) (domain.PaymentSnapshot, error) {
	if id != p.payment.ID {
		return domain.PaymentSnapshot{}, domain.ErrNotFound
	}
	return p.payment, nil
}

func (p *fakePayments) ListPayments(_ context.Context, _ uuid.UUID, f domain.PaymentFilter, limit int, _ string) ([]domain.PaymentSnapshot, string, error) {
	p.reads.status, p.reads.limit = f.Status, limit
	return nil, "", nil
}

func (p *fakePayments) ListPaymentDocuments(_ context.Context, _, _ uuid.UUID, limit int, _ string) ([]domain.PaymentDocumentItem, string, error) {
	p.reads.limit = limit
	return nil, "", nil
}

func (p *fakePayments) PaymentAsOf(_ context.Context, _ domain.StreamRef, asOf time.Time) (domain.PaymentSnapshot, error) {
	p.reads.asOf = asOf
	return p.payment, nil
}

func (p *fakePayments) ListWebhookAttempts(context.Context, uuid.UUID, uuid.UUID) ([]domain.WebhookAttemptItem, error) {
	return nil, nil
}

// fixturePrices are the sandbox's prices.
func fixturePrices() domain.BTCPrices {
	prices := domain.BTCPrices{}
	for cur, p := range map[string]int64{"ZAR": 1_800_000, "KES": 12_900_000, "NGN": 150_000_000, "GBP": 76_000, "EUR": 87_000, "USD": 100_000} {
		prices[cur] = decimal.NewFromInt(p)
	}
	return prices
}

// fakeEvents has no events.
type fakeEvents struct {
	reads *readArgs
}

func (e fakeEvents) TenantEvents(_ context.Context, _ uuid.UUID, after int64, limit int, eventType string) ([]domain.Record, error) {
	e.reads.after, e.reads.limit, e.reads.eventType = after, limit, eventType
	return nil, nil
}

func (fakeEvents) StreamHistory(context.Context, domain.StreamRef) ([]domain.Record, error) {
	return nil, nil
}

// fakeLedger has no postings.
type fakeLedger struct{ reads *readArgs }

func (l fakeLedger) TrialBalance(_ context.Context, _ uuid.UUID, asOf time.Time) ([]domain.AccountBalance, error) {
	l.reads.asOf = asOf
	return nil, nil
}

// fakeSandbox has paid nothing out.
type fakeSandbox struct{}

func (fakeSandbox) SandboxPayouts(context.Context, uuid.UUID) ([]SandboxPayout, int64, error) {
	return nil, 0, nil
}

// fakeDocuments hashes what it is given and keeps nothing.
type fakeDocuments struct{}

func (fakeDocuments) PutDocument(_ context.Context, _ domain.StoredDocument, r io.Reader) (int64, string, error) {
	h := sha256.New()
	n, err := io.Copy(h, r)
	return n, hex.EncodeToString(h.Sum(nil)), err
}
func (fakeDocuments) DeleteDocument(context.Context, uuid.UUID) error { return nil }
func (fakeDocuments) OpenDocument(context.Context, uuid.UUID) (domain.StoredDocument, io.Reader, error) {
	return domain.StoredDocument{}, nil, domain.ErrNotFound
}
func (fakeDocuments) ListKYCDocuments(context.Context, uuid.UUID, uuid.UUID, int, string) ([]domain.KYCDocumentItem, string, error) {
	return nil, "", nil
}
