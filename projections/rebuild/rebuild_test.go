package rebuild

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore"
	"github.com/ledger/ledger/eventstore/testenv"
	"github.com/ledger/ledger/projections"
)

// fixture is a migrated database of the test's own with the event store
// and read models as ledgerd plugs them in.
type fixture struct {
	t        *testing.T
	ctx      context.Context
	pool     *pgxpool.Pool
	store    *eventstore.Store
	reader   *projections.Reader
	mu       sync.Mutex
	versions map[uuid.UUID]int // streams appended by append, and their versions
	states   map[uuid.UUID]any // and their states
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	cfg, err := pgxpool.ParseConfig(testenv.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 24
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := eventstore.Migrate(ctx, pool, eventstore.Migrations,
		eventstore.MigrationSet{Component: "projections", FS: projections.Migrations}); err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, ctx: ctx, pool: pool, store: eventstore.New(pool, projections.Projector{}, nil), reader: projections.NewReader(pool),
		versions: map[uuid.UUID]int{}, states: map[uuid.UUID]any{}}
}

var testMeta = domain.Metadata{Actor: "test:rebuild"}

// append appends events to a stream this fixture writes alone, at the
// version it remembers.
func (f *fixture) append(ref domain.StreamRef, events ...domain.Event) []domain.Record {
	f.t.Helper()
	f.mu.Lock()
	v, state := f.versions[ref.ID], f.states[ref.ID]
	f.mu.Unlock()
	recs, err := f.store.Append(f.ctx, testMeta, eventstore.Batch{Stream: ref, Expected: v, Events: events, State: state})
	if err != nil {
		f.t.Fatalf("append %T to %s: %v", events[0], ref.Type, err)
	}
	if state, err = projections.FoldStream(state, recs); err != nil {
		f.t.Fatal(err)
	}
	f.mu.Lock()
	f.versions[ref.ID], f.states[ref.ID] = v+len(events), state
	f.mu.Unlock()
	return recs
}

// world is one tenant's worth of every kind of read-model row.
type world struct {
	tenant   uuid.UUID
	payments []uuid.UUID
	apiKeys  int
}

// seedTenant creates a tenant with API keys (one revoked), users with
// details, profile, momo accounts and KYC documents (one user disabled),
// merchants, and payments through every lifecycle path with webhook
// deliveries, attempts, documents and postings.
func (f *fixture) seedTenant(n int) world {
	f.t.Helper()
	w := world{tenant: uuid.Must(uuid.NewV7())}
	owner := uuid.Must(uuid.NewV7())
	tev, oev, err := domain.DecideCreateTenant(domain.CreateTenant{TenantID: w.tenant, OwnerUserID: owner,
		Name: fmt.Sprintf("Tenant %d", n), OwnerEmail: fmt.Sprintf("owner%d-%s@example.com", n, w.tenant),
		APIKey: "lk_first_" + w.tenant.String(), SecretHash: strings.Repeat("a", 64)})
	if err != nil {
		f.t.Fatal(err)
	}
	tenant := domain.StreamRef{TenantID: w.tenant, Type: "tenant", ID: w.tenant}
	ownerRef := domain.StreamRef{TenantID: w.tenant, Type: "user", ID: owner}
	recs, err := f.store.Append(f.ctx, testMeta, eventstore.Batch{Stream: tenant, Events: tev},
		eventstore.Batch{Stream: ownerRef, Events: oev})
	if err != nil {
		f.t.Fatal(err)
	}
	f.versions[w.tenant], f.versions[owner] = len(tev), len(oev)
	if f.states[w.tenant], err = projections.FoldStream(nil, recs[:len(tev)]); err != nil {
		f.t.Fatal(err)
	}
	if f.states[owner], err = projections.FoldStream(nil, recs[len(tev):]); err != nil {
		f.t.Fatal(err)
	}
	f.append(tenant, domain.APIKeyCreated{APIKey: "lk_second_" + w.tenant.String(), SecretHash: strings.Repeat("b", 64)})
	f.append(tenant, domain.APIKeyRevoked{APIKey: "lk_first_" + w.tenant.String()})
	w.apiKeys = 2

	user := domain.StreamRef{TenantID: w.tenant, Type: "user", ID: uuid.Must(uuid.NewV7())}
	acct1, acct2 := uuid.Must(uuid.NewV7()), uuid.Must(uuid.NewV7())
	f.append(user, domain.UserCreated{UserID: user.ID, Email: fmt.Sprintf("ann%d@example.com", n), Name: "Ann", Role: domain.RoleNormal},
		domain.UserUpdated{Changed: []string{"firstName", "sector"}, UserDetails: domain.UserDetails{FirstName: "Ann", Sector: "retail",
			Nationality: []string{"ZAF"}}},
		domain.UserVerificationChanged{IsVerified: true},
		domain.ProfileUpdated{Changed: []string{"companyName", "phoneNumber"}, Name: "Ann", CompanyName: "Ann's Shop",
			Sector: "retail", FirstName: "Ann", PhoneNumber: "+27821234567"},
		domain.MomoAccountAdded{AccountID: acct1, Label: "main", PhoneNumber: "+254712345678", MobileNetwork: "Safaricom", CountryCode: "KE"},
		domain.DefaultMomoAccountChanged{AccountID: &acct1},
		domain.MomoAccountAdded{AccountID: acct2, Label: "spare", PhoneNumber: "+254712345679", MobileNetwork: "Airtel", CountryCode: "KE"},
		domain.MomoAccountUpdated{AccountID: acct2, Changed: []string{"label"}, Label: "other", PhoneNumber: "+254712345679"},
		domain.DefaultMomoAccountChanged{AccountID: &acct2, PreviousAccountID: &acct1},
		domain.MomoAccountRemoved{AccountID: acct1},
		domain.KYCDocumentUploaded{DocumentID: uuid.Must(uuid.NewV7()), DocumentType: "passport", FileName: "passport.pdf",
			ContentType: domain.ContentTypePDF, Size: 1234, SHA256: strings.Repeat("c", 64)})
	gone := domain.StreamRef{TenantID: w.tenant, Type: "user", ID: uuid.Must(uuid.NewV7())}
	f.append(gone, domain.UserCreated{UserID: gone.ID, Email: fmt.Sprintf("bob%d@example.com", n), Name: "Bob", Role: domain.RoleNormal},
		domain.UserDisabled{})

	staff := domain.StreamRef{TenantID: w.tenant, Type: "dashboard_user", ID: uuid.Must(uuid.NewV7())}
	f.append(staff, domain.DashboardUserCreated{UserID: staff.ID, Email: fmt.Sprintf("ops%d-%s@example.com", n, w.tenant),
		SetupTokenHash: strings.Repeat("d", 63) + fmt.Sprint(n), SetupExpiresAt: time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)},
		domain.DashboardPasswordSet{PasswordHash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA"},
		domain.DashboardSignedIn{SessionHash: fmt.Sprintf("s1-%d-%s", n, w.tenant), ExpiresAt: time.Date(2026, 11, 25, 21, 0, 0, 0, time.UTC)},
		domain.DashboardSignedIn{SessionHash: fmt.Sprintf("s2-%d-%s", n, w.tenant), ExpiresAt: time.Date(2026, 11, 25, 22, 0, 0, 0, time.UTC)},
		domain.DashboardSignedOut{SessionHash: fmt.Sprintf("s1-%d-%s", n, w.tenant)},
		domain.DashboardSetupLinkIssued{SetupTokenHash: strings.Repeat("f", 63) + fmt.Sprint(n),
			SetupExpiresAt: time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)},
		domain.DashboardSignedIn{SessionHash: fmt.Sprintf("s3-%d-%s", n, w.tenant), ExpiresAt: time.Date(2026, 11, 25, 23, 0, 0, 0, time.UTC)},
		domain.DashboardPasswordSet{PasswordHash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaDI"})
	left := domain.StreamRef{TenantID: w.tenant, Type: "dashboard_user", ID: uuid.Must(uuid.NewV7())}
	f.append(left, domain.DashboardUserCreated{UserID: left.ID, Email: fmt.Sprintf("left%d-%s@example.com", n, w.tenant),
		SetupTokenHash: strings.Repeat("a", 63) + fmt.Sprint(n), SetupExpiresAt: time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)},
		domain.DashboardPasswordSet{PasswordHash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaDM"},
		domain.DashboardSignedIn{SessionHash: fmt.Sprintf("s4-%d-%s", n, w.tenant), ExpiresAt: time.Date(2026, 11, 25, 23, 0, 0, 0, time.UTC)},
		domain.DashboardSetupLinkIssued{SetupTokenHash: strings.Repeat("b", 63) + fmt.Sprint(n),
			SetupExpiresAt: time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)},
		domain.DashboardUserDisabled{})
	pending := domain.StreamRef{TenantID: w.tenant, Type: "dashboard_user", ID: uuid.Must(uuid.NewV7())}
	f.append(pending, domain.DashboardUserCreated{UserID: pending.ID, Email: fmt.Sprintf("new%d-%s@example.com", n, w.tenant),
		SetupTokenHash: strings.Repeat("e", 63) + fmt.Sprint(n), SetupExpiresAt: time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)})

	za := f.merchant(w.tenant, domain.CreateMerchant{Name: "Shop", Country: domain.CountrySouthAfrica, BankName: "Nedbank",
		AccountNumber: "1234567890"})
	f.merchant(w.tenant, domain.CreateMerchant{Name: "Wallet", Country: domain.CountryBTC, LNURL: "shop@example.com"})

	for i, path := range []string{"success", "failed", "expired", "created", "transferring", "document", "partial"} {
		id := f.payment(w.tenant, za, owner, path, i%2 == 0)
		w.payments = append(w.payments, id)
	}
	w.payments = append(w.payments, f.bankCredits(w.tenant, owner, n)...)
	f.breaks(n)
	return w
}

// breaks records two reconciliation breaks in the operator's books, one
// of them resolved.
func (f *fixture) breaks(n int) {
	f.t.Helper()
	now := time.Now()
	for i, resolve := range []bool{false, true} {
		found, err := domain.DecideFindBreak(domain.Break{}, domain.FindBreak{Kind: domain.BreakLedgerOnly, Rail: domain.PayoutBank,
			Ref: fmt.Sprintf("ref-%d-%d", n, i), Ledger: &domain.BreakSide{Direction: "out", Amount: decimal.NewFromInt(10), Currency: "ZAR"},
			From: now.Add(-24 * time.Hour), To: now, Now: now})
		if err != nil {
			f.t.Fatal(err)
		}
		b := domain.ApplyBreak(domain.Break{}, found[0])
		ref := domain.StreamRef{TenantID: domain.OperatorBooks, Type: "reconciliation", ID: b.ID}
		f.append(ref, found...)
		if resolve {
			resolved, err := domain.DecideResolveBreak(b, domain.ResolveBreak{Reason: "booked by hand", By: "operator:ann", Now: now})
			if err != nil {
				f.t.Fatal(err)
			}
			f.append(ref, resolved...)
		}
	}
}

// bankCredits funds two bank-transfer payments of tenant from bank
// credits: one overpaid (its excess returned), one by the assignment of a
// credit that quoted no reference.
func (f *fixture) bankCredits(tenant, user uuid.UUID, n int) []uuid.UUID {
	f.t.Helper()
	now := time.Now()
	pay := func() domain.Payment {
		id := uuid.Must(uuid.NewV7())
		details, _ := json.Marshal(domain.BankDeposit{AccountName: "Collections", AccountNumber: "DE89", Reference: domain.DepositReference(id),
			Amount: 10000, Currency: "EUR"})
		p := domain.Payment{ID: id, UserID: user, MerchantID: uuid.Must(uuid.NewV7()), Amount: 50000, FromCountry: "Europe",
			FromCurrency: "EUR", DestinationCountry: domain.CountryBTC, DestinationCurrency: "BTC", PayoutMethod: domain.PayoutLightning,
			Funding: domain.FundingBankTransfer, Status: domain.StatusCreated, DepositDue: decimal.NewFromInt(100), DepositCurrency: "EUR",
			DepositDetails: details, ExpiresAt: now.Add(time.Hour), CreatedAt: now, UpdatedAt: now}
		f.append(domain.StreamRef{TenantID: tenant, Type: "payment", ID: id}, domain.PaymentCreated{Payment: p})
		return p
	}
	over, assigned := pay(), pay()
	entry := func(ref string) domain.BankEntry {
		return domain.BankEntry{Account: "DE89370400440532013000", EntryRef: fmt.Sprintf("%s-%d-%s", ref, n, tenant)}
	}
	out, err := domain.DecideBankCredit(domain.ReceiveBankCredit{Credit: domain.BankCredit{Entry: entry("over"),
		Amount: decimal.NewFromInt(120), Currency: "EUR", References: []string{domain.DepositReference(over.ID)}, DebtorAccount: "FR76"},
		Matches: []domain.TenantPayment{{TenantID: tenant, Payment: over}}, UnmatchedID: uuid.Must(uuid.NewV7()), Now: now})
	if err != nil {
		f.t.Fatal(err)
	}
	excess := out.Unmatched[0].(domain.UnmatchedFundsReceived)
	excessRef := domain.StreamRef{TenantID: tenant, Type: "unmatched_funds", ID: excess.UnmatchedID}
	f.append(domain.StreamRef{TenantID: tenant, Type: "payment", ID: over.ID}, out.Payment...)
	f.append(excessRef, out.Unmatched...)
	returned, err := domain.DecideReturnUnmatched(domain.ApplyUnmatched(domain.UnmatchedFunds{}, excess), domain.ReturnUnmatched{By: "operator:ann", Now: now})
	if err != nil {
		f.t.Fatal(err)
	}
	f.append(excessRef, returned...)
	// The excess goes back to its payer by the bank rail: refused on one
	// tenant's books, paid on the next.
	item := domain.ApplyUnmatched(domain.ApplyUnmatched(domain.UnmatchedFunds{}, excess), returned[0])
	anyRail := func(string, string) bool { return true }
	sent, err := domain.DecideSendReturn(item, anyRail, now)
	if err != nil || len(sent) != 1 {
		f.t.Fatalf("send the return: %v %v", sent, err)
	}
	f.append(excessRef, sent...)
	answer, err := domain.DecideReturnResult(domain.ApplyUnmatched(item, sent[0]), domain.PayoutResult{PayoutID: "TRF_back",
		Rejected: n%2 == 0, Reason: "account closed", Now: now})
	if err != nil {
		f.t.Fatal(err)
	}
	f.append(excessRef, answer...)

	out, err = domain.DecideBankCredit(domain.ReceiveBankCredit{Credit: domain.BankCredit{Entry: entry("stray"),
		Amount: decimal.NewFromInt(100), Currency: "EUR", References: []string{"LDGNOSUCHREF00"}},
		UnmatchedID: uuid.Must(uuid.NewV7()), Now: now})
	if err != nil {
		f.t.Fatal(err)
	}
	stray := domain.ApplyUnmatched(domain.UnmatchedFunds{}, out.Unmatched[0])
	f.append(domain.StreamRef{TenantID: domain.OperatorBooks, Type: "unmatched_funds", ID: stray.ID}, out.Unmatched...)
	assign, err := domain.DecideAssignUnmatched(stray, domain.AssignUnmatched{Payment: assigned, Tenant: tenant, By: "operator:bo", Now: now})
	if err != nil {
		f.t.Fatal(err)
	}
	f.append(domain.StreamRef{TenantID: domain.OperatorBooks, Type: "unmatched_funds", ID: stray.ID}, assign.Item...)
	f.append(domain.StreamRef{TenantID: tenant, Type: "payment", ID: assigned.ID}, assign.Payment...)
	return []uuid.UUID{over.ID, assigned.ID}
}

func (f *fixture) merchant(tenant uuid.UUID, c domain.CreateMerchant) domain.Merchant {
	f.t.Helper()
	c.MerchantID = uuid.Must(uuid.NewV7())
	events, err := domain.DecideCreateMerchant(domain.Merchant{}, c)
	if err != nil {
		f.t.Fatal(err)
	}
	f.append(domain.StreamRef{TenantID: tenant, Type: "merchant", ID: c.MerchantID}, events...)
	m := domain.Merchant{}
	for _, e := range events {
		m = domain.ApplyMerchant(m, e)
	}
	return m
}

var testPrices = domain.BTCPrices{"ZAR": decimal.NewFromInt(1_800_000)}

// payment takes a new Lightning payment to m along path, with a webhook
// URL when hooked.
func (f *fixture) payment(tenant uuid.UUID, m domain.Merchant, user uuid.UUID, path string, hooked bool) uuid.UUID {
	f.t.Helper()
	id, err := f.tryPayment(tenant, m, user, path, hooked)
	if err != nil {
		f.t.Fatal(err)
	}
	return id
}

// tryPayment is payment returning its error, for goroutines other than the
// test's.
func (f *fixture) tryPayment(tenant uuid.UUID, m domain.Merchant, user uuid.UUID, path string, hooked bool) (uuid.UUID, error) {
	req := domain.PaymentRequest{MerchantID: m.ID.String(), Amount: json.RawMessage("1500"), Reference: "r"}
	if hooked {
		req.WebhookURL = "http://hooks.example.com/ledger"
	}
	o, err := domain.ValidatePaymentRequest(req, true)
	if err != nil {
		return uuid.Nil, err
	}
	now := time.Now()
	plan, err := domain.PlanPayment(o, m, domain.User{}, domain.DefaultValidity, now, time.UTC)
	if err != nil {
		return uuid.Nil, err
	}
	fee := decimal.RequireFromString("0.01")
	q, err := domain.QuotePayment(domain.QuoteInput{FromCurrency: "BTC", DestinationCurrency: "ZAR", Amount: 1500,
		OTCFeeRate: fee, Prices: testPrices})
	if err != nil {
		return uuid.Nil, err
	}
	id := uuid.Must(uuid.NewV7())
	ref := domain.StreamRef{TenantID: tenant, Type: "payment", ID: id}
	var steps []func(domain.Payment) ([]domain.Event, error)
	step := func(decide func(domain.Payment) ([]domain.Event, error)) { steps = append(steps, decide) }
	step(func(p domain.Payment) ([]domain.Event, error) {
		return domain.DecideCreatePayment(p, domain.CreatePayment{PaymentID: id, UserID: user, Plan: plan, Quote: q,
			Funding: domain.PaymentFunding{Invoice: &domain.LightningInvoice{PaymentRequest: "lnbcrt1", AmountSats: q.AmountSats}},
			Now:     now})
	})
	deposit := func(part int64) {
		step(func(p domain.Payment) ([]domain.Event, error) {
			amount := p.Outstanding()
			if part > 0 {
				amount = decimal.NewFromInt(part)
			}
			return domain.DecideDeposit(p, domain.RecordDeposit{Amount: amount, Now: time.Now()})
		})
	}
	payout := func() {
		step(func(p domain.Payment) ([]domain.Event, error) {
			return domain.DecideBeginPayout(p, domain.BeginPayout{Prices: testPrices, OTCFeeRate: fee, Now: time.Now()})
		})
	}
	result := func(rejected bool) {
		step(func(p domain.Payment) ([]domain.Event, error) {
			return domain.DecidePayoutResult(p, domain.PayoutResult{PayoutID: "po_" + id.String(), Rejected: rejected,
				Reason: "account closed", Now: time.Now()})
		})
	}
	switch path {
	case "success", "failed":
		deposit(1000)
		deposit(0)
		payout()
		result(path == "failed")
		if path == "success" {
			// Its change goes back to a payer the rail reported, is
			// refused, and is paid by an operator. (The fixture's prices do
			// not drift and its payments are Lightning's, whose payers are
			// anonymous: the deciders are shown an M-Pesa payer owed change.)
			refund := func(decide func(domain.Payment) ([]domain.Event, error)) {
				step(func(p domain.Payment) ([]domain.Event, error) {
					if p.ChangeRefundStatus == domain.ChangeNone {
						p.ChangeRefundStatus = domain.ChangePending
					}
					p.Funding, p.Payer = domain.FundingMomo, &domain.Payer{PhoneNumber: "+254712345678"}
					return decide(p)
				})
			}
			refund(func(p domain.Payment) ([]domain.Event, error) {
				return domain.DecideSendChangeRefund(p, domain.SendChangeRefund{Rails: func(string, string) bool { return true },
					Now: time.Now()})
			})
			refund(func(p domain.Payment) ([]domain.Event, error) {
				return domain.DecideChangeRefundResult(p, domain.PayoutResult{Rejected: true, Reason: "not registered", Now: time.Now()})
			})
			refund(func(p domain.Payment) ([]domain.Event, error) {
				return domain.DecideResolveChangeRefund(p, domain.ResolveChangeRefund{Reference: "BANK-1", By: "operator:ann", Now: time.Now()})
			})
			step(func(p domain.Payment) ([]domain.Event, error) {
				return domain.DecidePayoutReversal(p, domain.PayoutReversal{PayoutID: "po_" + id.String(), Reason: "account closed", Now: time.Now()})
			})
		}
	case "expired":
		deposit(1000)
		step(func(p domain.Payment) ([]domain.Event, error) {
			return domain.DecideExpire(p, time.Now().Add(time.Hour))
		})
	case "transferring":
		deposit(0)
		payout()
	case "document":
		doc := domain.StoredDocument{ID: uuid.Must(uuid.NewV7()), TenantID: tenant, Owner: id, ContentType: domain.ContentTypePDF,
			FileName: "invoice.pdf"}
		step(func(p domain.Payment) ([]domain.Event, error) {
			size, sum, err := f.reader.PutDocument(f.ctx, doc, strings.NewReader("%PDF-1.4 invoice"))
			if err != nil {
				return nil, err
			}
			return domain.DecideAttachPaymentDocument(p, domain.AttachPaymentDocument{DocumentID: doc.ID, FileName: doc.FileName,
				ContentType: doc.ContentType, Size: size, SHA256: sum, Now: time.Now()})
		})
		deposit(0)
	case "partial":
		deposit(1000)
	}
	for _, decide := range steps {
		if _, err := eventstore.Execute(f.ctx, f.store, ref, testMeta, domain.ApplyPayment, decide); err != nil {
			return id, fmt.Errorf("payment %s (%s): %w", id, path, err)
		}
	}
	if !hooked {
		return id, nil
	}
	// Every status event's delivery fails once and is then delivered, but
	// the last one's, left pending.
	recs, err := f.store.Load(f.ctx, ref)
	if err != nil {
		return id, err
	}
	var status []domain.Record
	for _, r := range recs {
		if e, _ := r.Decode(); domain.StatusOf(e) != "" {
			status = append(status, r)
		}
	}
	for i, r := range status {
		attempts := []domain.WebhookAttempt{{EventID: r.ID, Type: r.Type, Attempt: 1, StatusCode: 503, Err: "unavailable",
			Duration: 12 * time.Millisecond, Now: time.Now()}}
		if i < len(status)-1 {
			attempts = append(attempts, domain.WebhookAttempt{EventID: r.ID, Type: r.Type, Attempt: 2, StatusCode: 200,
				Delivered: true, Duration: 8 * time.Millisecond, Now: time.Now()})
		}
		for _, a := range attempts {
			_, err := eventstore.Execute(f.ctx, f.store, ref, testMeta, domain.ApplyPayment, func(p domain.Payment) ([]domain.Event, error) {
				return []domain.Event{domain.NewWebhookAttempted(a, domain.WebhookRetrySchedule)}, nil
			})
			if err != nil {
				return id, fmt.Errorf("payment %s webhook: %w", id, err)
			}
		}
	}
	return id, nil
}

// sequence gives positions to the oldest unsequenced events, up to limit,
// as the sequencer would (without hashes, which no read model reads).
func (f *fixture) sequence(limit int) {
	f.t.Helper()
	_, err := f.pool.Exec(f.ctx, `UPDATE events e SET position = s.pos
		FROM (SELECT seq, (SELECT coalesce(max(position), 0) FROM events) + row_number() OVER (ORDER BY seq) AS pos
			FROM events WHERE position IS NULL ORDER BY seq LIMIT $1) s
		WHERE e.seq = s.seq`, limit)
	if err != nil {
		f.t.Fatal(err)
	}
}

// allTables are every rebuilt table.
func allTables() []string {
	var ts []string
	for _, g := range Groups {
		ts = append(ts, g.Tables...)
	}
	return ts
}

// dump returns every row of each table as JSON, sorted.
func (f *fixture) dump(tables []string) map[string][]string {
	f.t.Helper()
	d := map[string][]string{}
	for _, t := range tables {
		rows, err := f.pool.Query(f.ctx, `SELECT to_jsonb(x)::text AS j FROM public.`+t+` x ORDER BY j`)
		if err != nil {
			f.t.Fatal(err)
		}
		d[t], err = pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			f.t.Fatal(err)
		}
	}
	return d
}

// schema describes the tables' columns (statistics targets included),
// indexes and constraints by name, whether they are logged, and their
// storage parameters.
func (f *fixture) schema(tables []string) []string {
	f.t.Helper()
	rows, err := f.pool.Query(f.ctx, `
		SELECT format('column %s.%s %s notnull=%s default=%s statistics=%s', c.relname, a.attname, format_type(a.atttypid, a.atttypmod),
				a.attnotnull, pg_get_expr(d.adbin, d.adrelid), a.attstattarget)
			FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
			WHERE c.relnamespace = 'public'::regnamespace AND c.relname = ANY($1) AND a.attnum > 0 AND NOT a.attisdropped
		UNION ALL SELECT format('index %s', pg_get_indexdef(x.indexrelid))
			FROM pg_index x JOIN pg_class c ON c.oid = x.indrelid WHERE c.relnamespace = 'public'::regnamespace AND c.relname = ANY($1)
		UNION ALL SELECT format('constraint %s.%s %s valid=%s', c.relname, con.conname, pg_get_constraintdef(con.oid), con.convalidated)
			FROM pg_constraint con JOIN pg_class c ON c.oid = con.conrelid WHERE c.relnamespace = 'public'::regnamespace AND c.relname = ANY($1)
		UNION ALL SELECT format('table %s persistence=%s options=%s toast=%s', c.relname, c.relpersistence, c.reloptions,
				(SELECT x.reloptions FROM pg_class x WHERE x.oid = c.reltoastrelid))
			FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace AND c.relname = ANY($1)
		ORDER BY 1`, tables)
	if err != nil {
		f.t.Fatal(err)
	}
	s, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		f.t.Fatal(err)
	}
	return s
}

// leftovers lists the schemas a rebuild left behind.
func (f *fixture) leftovers() []string {
	f.t.Helper()
	rows, err := f.pool.Query(f.ctx, `SELECT nspname FROM pg_namespace WHERE nspname LIKE 'rebuild\_%'`)
	if err != nil {
		f.t.Fatal(err)
	}
	s, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		f.t.Fatal(err)
	}
	return s
}

func (f *fixture) rebuild(group string) Stats {
	f.t.Helper()
	return f.rebuildWith(group, Options{})
}

func (f *fixture) rebuildWith(group string, opt Options) Stats {
	f.t.Helper()
	stats, err := RunWith(f.ctx, f.pool, group, opt)
	if err != nil {
		f.t.Fatalf("rebuild %s: %v", group, err)
	}
	return stats
}

// sameDump fails t with the first difference between two dumps.
func sameDump(t *testing.T, what string, want, got map[string][]string) {
	t.Helper()
	for table, w := range want {
		g := got[table]
		if len(w) == 0 {
			t.Errorf("%s: %s: no rows to compare; the fixture should fill every table", what, table)
		}
		for i := range max(len(w), len(g)) {
			var wr, gr string
			if i < len(w) {
				wr = w[i]
			}
			if i < len(g) {
				gr = g[i]
			}
			if wr != gr {
				t.Errorf("%s: %s: %d rows, want %d; first difference:\n got %s\nwant %s", what, table, len(g), len(w), gr, wr)
				break
			}
		}
	}
}

// TestRebuildReproducesEveryGroup: rebuilding each group, then all of them,
// leaves every table's rows, columns, indexes, constraints (names included)
// and storage parameters exactly as the inline projection and the
// migrations left them, and no schema behind: the COPYs of the held rows
// store what the append's statements stored. The fixture holds every
// registered event type.
func TestRebuildReproducesEveryGroup(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for i := range 3 {
		f.seedTenant(i)
	}
	f.sequence(150)
	f.coversEveryEventType()
	// Storage parameters and statistics targets an operator set are kept
	// (LIKE copies neither), the keys' indexes' too (pg_get_constraintdef
	// leaves them out).
	if _, err := f.pool.Exec(f.ctx, `ALTER TABLE payments SET (fillfactor = 90, autovacuum_vacuum_scale_factor = 0.05,
			autovacuum_enabled = true, toast.autovacuum_enabled = false),
		ALTER COLUMN status SET STATISTICS 500;
		ALTER INDEX payments_pkey SET (fillfactor = 80);
		ALTER INDEX users_tenant_id_email_key SET (fillfactor = 70, deduplicate_items = off)`); err != nil {
		t.Fatal(err)
	}
	tables := allTables()
	want, wantSchema := f.dump(tables), f.schema(tables)
	var events int64
	if err := f.pool.QueryRow(f.ctx, `SELECT count(*) FROM events`).Scan(&events); err != nil {
		t.Fatal(err)
	}
	for _, name := range GroupNames() {
		what := "rebuilding " + name
		stats := f.rebuild(name)
		sameDump(t, "after "+what, want, f.dump(tables))
		if got := f.schema(tables); !slices.Equal(got, wantSchema) {
			t.Errorf("after %s the schema differs:\n got %s\nwant %s", what, strings.Join(got, "\n"), strings.Join(wantSchema, "\n"))
		}
		if stats.Events == 0 || (name == "all" && stats.Events != events) || stats.SwapAttempts != 1 || stats.Rows == 0 {
			t.Errorf("%s: stats %+v, want %d events for all, rows written", what, stats, events)
		}
		for table, n := range stats.Tables {
			if int(n) != len(want[table]) {
				t.Errorf("%s: stats say %d rows in %s, want %d", what, n, table, len(want[table]))
			}
		}
	}
	if l := f.leftovers(); len(l) > 0 {
		t.Errorf("schemas left behind: %v", l)
	}
	// The rebuilt tables keep working for the API: a payment's document is
	// served (payment_documents -> documents).
	var doc uuid.UUID
	if err := f.pool.QueryRow(f.ctx, `SELECT id FROM payment_documents LIMIT 1`).Scan(&doc); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.reader.OpenDocument(f.ctx, doc); err != nil {
		t.Errorf("open a payment document after the rebuild: %v", err)
	}
}

// coversEveryEventType fails the test unless the fixture's events include
// every registered event type: a new event type must join the fixture, so
// that the fold is compared with the projector for it.
func (f *fixture) coversEveryEventType() {
	f.t.Helper()
	rows, err := f.pool.Query(f.ctx, `SELECT DISTINCT type FROM events`)
	if err != nil {
		f.t.Fatal(err)
	}
	seen, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		f.t.Fatal(err)
	}
	for _, def := range domain.EventDefs() {
		if !slices.Contains(seen, def.Type) {
			f.t.Errorf("the rebuild fixture has no %s event: add one to seedTenant", def.Type)
		}
	}
}

// TestRebuildRepairsCorruptedRows: read-model rows edited, deleted or added
// behind the projection's back come out of a rebuild as the events say.
func TestRebuildRepairsCorruptedRows(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	w := f.seedTenant(0)
	tables := allTables()
	want := f.dump(tables)
	for _, sql := range []string{
		`UPDATE payments SET status = 'success', state = state::jsonb || '{"amount": 1}' WHERE id = '` + w.payments[2].String() + `'`,
		`DELETE FROM ledger_entries WHERE event_id IN (SELECT event_id FROM ledger_entries LIMIT 1)`,
		`UPDATE users SET name = 'Mallory', version = 99 WHERE role = 'Normal User'`,
		`INSERT INTO merchants SELECT gen_random_uuid(), tenant_id, 'Ghost', country, currency, payout_method, bank_name,
			account_number, phone_number, lnurl, 1, created_at, updated_at FROM merchants LIMIT 1`,
		`DELETE FROM api_keys WHERE revoked_at IS NOT NULL`,
	} {
		if tag, err := f.pool.Exec(f.ctx, sql); err != nil || tag.RowsAffected() == 0 {
			t.Fatalf("corrupt with %q: %v (%d rows)", sql, err, tag.RowsAffected())
		}
	}
	for _, g := range []string{"payments", "postings", "users", "merchants", "tenants"} {
		f.rebuild(g)
	}
	sameDump(t, "after the rebuilds", want, f.dump(tables))

}

// TestRebuildWhileAppending: appenders keep appending payments, API keys
// and users (with the relay sequencing behind them) and readers keep
// reading while every read model is rebuilt. No append or read fails, and
// afterwards the read models hold every appended event: they equal both
// the appenders' counts and a second rebuild made in quiet.
func TestRebuildWhileAppending(t *testing.T) {
	t.Parallel()
	rebuildWhileAppending(t, Options{})
}

// waitAppended waits until each counter has moved past its value in from.
func waitAppended(t *testing.T, counters []*atomic.Int64, from []int64) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		now := loadAll(counters)
		past := true
		for i, n := range now {
			past = past && n > from[i]
		}
		if past {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("appends: got %v, want each past %v within 30 s", now, from)
		}
	}
}

func loadAll(counters []*atomic.Int64) []int64 {
	ns := make([]int64, len(counters))
	for i, c := range counters {
		ns[i] = c.Load()
	}
	return ns
}

func rebuildWhileAppending(t *testing.T, opt Options) {
	f := newFixture(t)
	worlds := []world{f.seedTenant(0), f.seedTenant(1)}
	f.relay(t)

	var (
		payments, keys, users atomic.Int64
		readErrs, appendErrs  atomic.Int64
		firstErr              atomic.Value
		stop                  = make(chan struct{})
		wg                    sync.WaitGroup
	)
	fail := func(counter *atomic.Int64, err error) {
		counter.Add(1)
		firstErr.CompareAndSwap(nil, err)
	}
	za := make([]domain.Merchant, len(worlds))
	for i, w := range worlds {
		za[i] = f.merchant(w.tenant, domain.CreateMerchant{Name: "Busy", Country: domain.CountrySouthAfrica, BankName: "Nedbank",
			AccountNumber: "1234567890"})
	}
	for i := range 4 {
		w := worlds[i%len(worlds)]
		wg.Go(func() {
			tenant := domain.StreamRef{TenantID: w.tenant, Type: "tenant", ID: w.tenant}
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				var err error
				switch n % 3 {
				case 0:
					_, err = f.tryPayment(w.tenant, za[i%len(worlds)], uuid.New(), "success", true)
					if err == nil {
						payments.Add(1)
					}
				case 1:
					_, err = eventstore.Execute(f.ctx, f.store, tenant, testMeta, domain.ApplyTenant,
						func(t domain.Tenant) ([]domain.Event, error) {
							return domain.DecideCreateAPIKey(t, "lk_"+uuid.NewString(), strings.Repeat("d", 64))
						})
					if err == nil {
						keys.Add(1)
					}
				case 2:
					id := uuid.Must(uuid.NewV7())
					_, err = f.store.Append(f.ctx, testMeta, eventstore.Batch{
						Stream: domain.StreamRef{TenantID: w.tenant, Type: "user", ID: id},
						Events: []domain.Event{domain.UserCreated{UserID: id, Email: id.String() + "@example.com", Name: "U", Role: domain.RoleNormal}}})
					if err == nil {
						users.Add(1)
					}
				}
				if err != nil && !errors.Is(err, context.Canceled) {
					fail(&appendErrs, err)
				}
			}
		})
	}
	for range 2 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				w := worlds[0]
				if _, err := f.reader.Payment(f.ctx, w.tenant, w.payments[0]); err != nil {
					fail(&readErrs, fmt.Errorf("read payment: %w", err))
				}
				if _, _, err := f.reader.ListPayments(f.ctx, w.tenant, domain.PaymentFilter{}, 5, ""); err != nil {
					fail(&readErrs, fmt.Errorf("list payments: %w", err))
				}
				if _, err := f.reader.TrialBalance(f.ctx, w.tenant, time.Time{}); err != nil {
					fail(&readErrs, fmt.Errorf("trial balance: %w", err))
				}
			}
		})
	}
	// The rebuild starts once every kind of append is going on, and the
	// appenders stop once each kind has appended again after the swap, into
	// the new tables.
	stopAppending := sync.OnceFunc(func() { close(stop); wg.Wait() })
	defer stopAppending() // also when a wait below fails the test
	counters := []*atomic.Int64{&payments, &keys, &users}
	waitAppended(t, counters, make([]int64, len(counters)))
	stats := f.rebuildWith("all", opt)
	waitAppended(t, counters, loadAll(counters))
	stopAppending()
	if n := appendErrs.Load() + readErrs.Load(); n > 0 {
		t.Fatalf("%d appends and %d reads failed during the rebuild; first: %v", appendErrs.Load(), readErrs.Load(), firstErr.Load())
	}
	if stats.CatchUp+stats.Locked == 0 {
		t.Errorf("no event was appended during the rebuild (stats %+v): the test proves nothing", stats)
	}
	t.Logf("appended %d payments, %d api keys, %d users meanwhile; rebuild %+v", payments.Load(), keys.Load(), users.Load(), stats)

	tables := allTables()
	live := f.dump(tables)
	counts := map[string]int64{}
	for _, tb := range []string{"payments", "api_keys", "users"} {
		var n int64
		if err := f.pool.QueryRow(f.ctx, `SELECT count(*) FROM `+tb).Scan(&n); err != nil {
			t.Fatal(err)
		}
		counts[tb] = n
	}
	var seeded world
	for _, w := range worlds {
		seeded.apiKeys += w.apiKeys
		seeded.payments = append(seeded.payments, w.payments...)
	}
	if want := int64(len(seeded.payments)) + payments.Load(); counts["payments"] != want {
		t.Errorf("payments: %d rows, want %d", counts["payments"], want)
	}
	if want := int64(seeded.apiKeys) + keys.Load(); counts["api_keys"] != want {
		t.Errorf("api_keys: %d rows, want %d", counts["api_keys"], want)
	}
	if want := int64(2*len(worlds)) + int64(len(worlds)) + users.Load(); counts["users"] != want {
		t.Errorf("users: %d rows, want %d", counts["users"], want)
	}
	f.rebuild("all")
	sameDump(t, "a quiet rebuild after the busy one", live, f.dump(tables))
}

// relay runs the relay (and so the sequencer) on the fixture's database.
func (f *fixture) relay(t *testing.T) {
	js := testenv.JetStream(t)
	s := testenv.NewStream(t)
	relay := eventstore.NewRelay(f.pool, js, eventstore.RelayConfig{Stream: s.Name, SubjectPrefix: s.SubjectPrefix},
		slog.New(slog.DiscardHandler), nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { relay.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

// TestRebuildWaitsForALongReader: a transaction holding the payments table
// past the swap's lock timeout makes the swap give up and try again, without
// blocking anyone behind it for long, and the rebuild then succeeds.
func TestRebuildWaitsForALongReader(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.seedTenant(0)
	want := f.dump(allTables())
	tx, err := f.pool.Begin(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(f.ctx, `SELECT count(*) FROM payments`); err != nil {
		t.Fatal(err)
	}
	// The reader goes away when the rebuild starts its second swap attempt
	// (so the first one must have given up on its lock timeout), or after
	// 30 s: a swap that waited for the reader instead would then show a
	// single attempt. Not on a timer from the start: on a busy machine the
	// rebuild may reach its swap only after any fixed delay.
	var release sync.Once
	done := func() { release.Do(func() { tx.Rollback(context.Background()) }) }
	timer := time.AfterFunc(30*time.Second, done)
	defer timer.Stop()
	swaps := 0
	stats := f.rebuildWith("payments", Options{Progress: func(p Progress) {
		if p.Phase == "swap" {
			if swaps++; swaps == 2 {
				done()
			}
		}
	}})
	if stats.SwapAttempts < 2 {
		t.Errorf("swap attempts: %d, want several while the reader holds the table", stats.SwapAttempts)
	}
	sameDump(t, "after waiting", want, f.dump(allTables()))
}

// The shadow tables are never autovacuumed before the swap (a vacuum on one
// as the swap moves it would hold the swap's locks past their timeout), and
// the swapped-in tables get their live tables' autovacuum switches back
// (TestRebuildReproducesEveryGroup compares every storage parameter).
func TestRebuildShadowTablesAreNotAutovacuumed(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.seedTenant(0)
	f.sequence(50)
	var checked int
	f.rebuildWith("all", Options{Progress: func(p Progress) {
		if p.Phase != "swap" || checked > 0 {
			return
		}
		rows, err := f.pool.Query(f.ctx, `SELECT c.relname, coalesce(c.reloptions, '{}'), coalesce(x.reloptions, '{}')
			FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace LEFT JOIN pg_class x ON x.oid = c.reltoastrelid
			WHERE n.nspname LIKE 'rebuild\_%' AND n.nspname NOT LIKE '%\_old' AND c.relkind = 'r'`)
		if err != nil {
			t.Error(err)
			return
		}
		var table string
		var options, toast []string
		_, err = pgx.ForEachRow(rows, []any{&table, &options, &toast}, func() error {
			checked++
			if !slices.Contains(options, "autovacuum_enabled=false") {
				t.Errorf("shadow %s: options %v, want autovacuum_enabled=false", table, options)
			}
			if len(toast) > 0 && !slices.Contains(toast, "autovacuum_enabled=false") {
				t.Errorf("shadow %s's TOAST table: options %v, want autovacuum_enabled=false", table, toast)
			}
			return nil
		})
		if err != nil {
			t.Error(err)
		}
	}})
	if checked != len(allTables()) {
		t.Errorf("checked %d shadow tables, want %d", checked, len(allTables()))
	}
	var live int
	if err := f.pool.QueryRow(f.ctx, `SELECT count(*) FROM pg_class
		WHERE relnamespace = 'public'::regnamespace AND 'autovacuum_enabled=false' = ANY(reloptions)`).Scan(&live); err != nil || live != 0 {
		t.Errorf("live tables with autovacuum off after the swap: %d (%v), want 0", live, err)
	}
}

// TestRebuildRefuses: an unknown group, a table outside the group with a
// foreign key into it, and an event the projection cannot apply each stop
// the rebuild before the swap, leaving the live tables and no schema.
func TestRebuildRefuses(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.seedTenant(0)
	want := f.dump(allTables())
	if _, err := Run(f.ctx, f.pool, "balances", nil); err == nil || !strings.Contains(err.Error(), "unknown read model") {
		t.Errorf("unknown group: %v", err)
	}

	if _, err := f.pool.Exec(f.ctx, `CREATE TABLE user_notes (user_id uuid REFERENCES users (id))`); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(f.ctx, f.pool, "users", nil); err == nil || !strings.Contains(err.Error(), "user_notes") {
		t.Errorf("foreign key from outside the group: %v", err)
	}
	if _, err := f.pool.Exec(f.ctx, `DROP TABLE user_notes`); err != nil {
		t.Fatal(err)
	}

	// A second user.created with an email the tenant already has: the live
	// projection would have refused it; a rebuild stops at it and names it.
	var tenant uuid.UUID
	var email string
	if err := f.pool.QueryRow(f.ctx, `SELECT tenant_id, email FROM users LIMIT 1`).Scan(&tenant, &email); err != nil {
		t.Fatal(err)
	}
	bad := uuid.Must(uuid.NewV7())
	data, _ := json.Marshal(domain.UserCreated{UserID: bad, Email: email, Name: "Dup", Role: domain.RoleNormal})
	if _, err := f.pool.Exec(f.ctx, `INSERT INTO events (id, tenant_id, stream_type, stream_id, stream_version, type, schema_version, data, metadata, recorded_at)
		VALUES ($1, $2, 'user', $3, 1, 'user.created', 1, $4, '{}', now())`, bad, tenant, bad, string(data)); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(f.ctx, f.pool, "users", nil); err == nil || !strings.Contains(err.Error(), "users_tenant_id_email_key") {
		t.Errorf("unappliable event: %v", err)
	}
	sameDump(t, "after refusals", want, f.dump(allTables()))
	if l := f.leftovers(); len(l) > 0 {
		t.Errorf("schemas left behind: %v", l)
	}
}

// TestGroupsCoverEveryProjectedTable: every table the projection writes
// belongs to exactly one rebuild group, but the webhook work list, which the
// dispatchers move on outside the events, so a new read model cannot be
// forgotten by rebuilds.
func TestGroupsCoverEveryProjectedTable(t *testing.T) {
	seen := map[string]int{}
	for _, g := range Groups {
		for _, tb := range g.Tables {
			seen[tb]++
		}
	}
	for _, tb := range projections.Tables {
		if n := seen[tb.Name]; n != 1 && tb.Name != "webhook_deliveries" {
			t.Errorf("table %s is in %d rebuild groups, want 1", tb.Name, n)
		}
	}
}

// waitLockWaitPassed waits until the rebuild's ADD CONSTRAINT ... REFERENCES
// documents has timed out waiting for its lock once and is trying again: a
// statement started later than the first one seen. (The poll's own
// statement matches the pattern too: it is left out.)
func waitLockWaitPassed(t *testing.T, f *fixture) {
	t.Helper()
	var first time.Time
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var started *time.Time
		if err := f.pool.QueryRow(f.ctx, `SELECT max(query_start) FROM pg_stat_activity WHERE datname = current_database()
			AND pid <> pg_backend_pid() AND state = 'active'
			AND query LIKE '%ADD CONSTRAINT%REFERENCES public.documents%'`).Scan(&started); err != nil {
			t.Fatal(err)
		}
		switch {
		case started == nil:
		case first.IsZero():
			first = *started
		case started.After(first):
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the rebuild did not try the foreign key to documents a second time within 60 s")
		}
	}
}

// TestRebuildLetsUploadsPass: the payments rebuild adds its foreign key to
// the live document store while an upload holds its transaction open (as
// it does for the whole request body). Other uploads must not queue behind
// the rebuild's wait for that one; the rebuild finishes once it ends.
func TestRebuildLetsUploadsPass(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.seedTenant(0)
	upload := func(tx pgx.Tx) error {
		_, err := tx.Exec(f.ctx, `INSERT INTO documents (id, tenant_id, owner, content_type, size, sha256, file_name)
			VALUES ($1, $2, $3, 'application/pdf', 0, '', 'invoice.pdf')`, uuid.New(), uuid.New(), uuid.New())
		return err
	}
	slow, err := f.pool.Begin(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Rollback(context.Background())
	if err := upload(slow); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := RunWith(f.ctx, f.pool, "payments", Options{})
		done <- err
	}()
	// Wait for the rebuild to reach the foreign key to documents.
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var n int
		if err := f.pool.QueryRow(f.ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
			AND pid <> pg_backend_pid() AND query LIKE '%ADD CONSTRAINT%REFERENCES public.documents%'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the rebuild did not reach the foreign key to documents within 60 s")
		}
	}
	waitLockWaitPassed(t, f)
	err = pgx.BeginFunc(f.ctx, f.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(f.ctx, `SET LOCAL statement_timeout = '3s'`); err != nil {
			return err
		}
		return upload(tx)
	})
	if err != nil {
		t.Errorf("another upload while the rebuild waits for the open one: got %v, want it through", err)
	}
	slow.Rollback(f.ctx)
	if err := <-done; err != nil {
		t.Fatalf("rebuild: %v", err)
	}
}
