package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore"
	"github.com/ledger/ledger/eventstore/testenv"
)

// The audit tests build one ledger on a real Postgres through the domain
// and the event store (the sequencer runs in the relay, publishing to a
// JetStream stream of the test's own), then corrupt copies of it, one
// corruption per copy, and run `ledgerctl audit verify` on each through run.

// auditLedger is the seeded ledger: its database and the ids the
// corruptions aim at.
type auditLedger struct {
	url      string
	tenantA  uuid.UUID
	user     uuid.UUID // a Normal User of tenant A with details, profile, momo accounts, KYC
	merchant uuid.UUID // tenant A's ZAR bank merchant, "Shop Alpha"
	paid     uuid.UUID // tenant A's payment that went all the way to success
	dashUser uuid.UUID // tenant A's dashboard user: a password, a session ended by sign-out, one open
	events   int
}

var auditPrices = domain.BTCPrices{"ZAR": decimal.NewFromInt(1_800_000), "KES": decimal.NewFromInt(12_000_000)}

// auditSeed builds the ledger and stops everything that uses its database,
// so that it can serve as a template.
func auditSeed(t *testing.T) auditLedger {
	t.Helper()
	ctx := testenv.Context(t, 2*time.Minute)
	l := auditLedger{url: testenv.NewDatabase(t)}
	db, err := openDatabase(ctx, l.url)
	if err != nil {
		t.Fatalf("open database: %v", err)
	}
	defer db.close()
	stopRelay := auditRelay(t, db)
	defer stopRelay()

	// Tenants through the operator's own commands.
	var a, b keyPair
	auditRun(t, l.url, &a, "tenant", "create", "--name", "Acme", "--email", "owner@acme.test")
	auditRun(t, l.url, &b, "tenant", "create", "--name", "Bolt", "--email", "owner@bolt.test")
	var extra keyPair
	auditRun(t, l.url, &extra, "apikey", "create", "--tenant", a.TenantID)
	auditRun(t, l.url, nil, "apikey", "revoke", extra.APIKey)
	l.tenantA = uuid.MustParse(a.TenantID)
	tenantB := uuid.MustParse(b.TenantID)

	s := auditSteps{t: t, ctx: ctx, store: db.store}
	now := time.Now()

	// A user with everything a user stream can hold, and one disabled.
	l.user = uuid.Must(uuid.NewV7())
	user := domain.StreamRef{TenantID: l.tenantA, Type: "user", ID: l.user}
	s.user(user, func(u domain.User) ([]domain.Event, error) {
		return domain.DecideCreateUser(u, domain.CreateUser{UserID: l.user, Email: "ann@acme.test", Name: "Ann"})
	})
	s.user(user, func(u domain.User) ([]domain.Event, error) {
		return domain.DecideUpdateUser(u, domain.UpdateUser{ByTenant: true, Patch: domain.UserPatch{
			FirstName: domain.Some("Ann"), LastName: domain.Some("Smith"), DOB: domain.Some("1990-01-02"),
			Nationality: domain.Some([]string{"KEN"}), AddressLine1: domain.Some("1 Moi Avenue"),
			AddressCity: domain.Some("Nairobi"), AddressPostalCode: domain.Some("00100"), AddressCountry: domain.Some("KEN"),
			IDDocumentType: domain.Some("passport"), IDDocumentNumber: domain.Some("A1234567")}}, now)
	})
	s.user(user, func(u domain.User) ([]domain.Event, error) {
		return domain.DecideUpdateProfile(u, domain.ProfilePatch{CompanyName: domain.Some("Ann's Shop"),
			PhoneNumber: domain.Some("+254711000001"), Sector: domain.Some("retail")})
	})
	var momo [3]uuid.UUID
	for i, phone := range []string{"+254711000002", "+254711000003", "+254711000004"} {
		momo[i] = uuid.Must(uuid.NewV7())
		label := "account " + phone[len(phone)-1:]
		s.user(user, func(u domain.User) ([]domain.Event, error) {
			return domain.DecideAddMomoAccount(u, domain.AddMomoAccount{AccountID: momo[i], PhoneNumber: phone,
				MobileNetwork: domain.MomoNetwork, CountryCode: domain.MomoCountry, Label: &label})
		})
	}
	s.user(user, func(u domain.User) ([]domain.Event, error) {
		return domain.DecideUpdateMomoAccount(u, domain.UpdateMomoAccount{AccountID: momo[1],
			Patch: domain.MomoPatch{Label: domain.Some("work"), IsDefault: domain.Some(true)}})
	})
	s.user(user, func(u domain.User) ([]domain.Event, error) { return domain.DecideRemoveMomoAccount(u, momo[2]) })
	s.user(user, func(u domain.User) ([]domain.Event, error) {
		return domain.DecideUploadKYCDocument(u, domain.UploadKYCDocument{DocumentID: uuid.Must(uuid.NewV7()),
			DocumentType: "Passport", FileName: "passport.pdf", ContentType: domain.ContentTypePDF, Size: 2048,
			SHA256: strings.Repeat("ab", 32)})
	})
	s.user(user, func(u domain.User) ([]domain.Event, error) {
		return domain.DecideUpdateUser(u, domain.UpdateUser{ByTenant: true, Patch: domain.UserPatch{IsVerified: domain.Some(true)}}, now)
	})
	gone := domain.StreamRef{TenantID: l.tenantA, Type: "user", ID: uuid.Must(uuid.NewV7())}
	s.user(gone, func(u domain.User) ([]domain.Event, error) {
		return domain.DecideCreateUser(u, domain.CreateUser{UserID: gone.ID, Email: "bob@acme.test", Name: "Bob"})
	})
	s.user(gone, domain.DecideDisableUser)

	// Merchants: a South African bank account, a Kenyan momo number.
	shop := s.merchant(l.tenantA, domain.CreateMerchant{Name: "Shop Alpha", Country: domain.CountrySouthAfrica,
		BankName: "Nedbank", AccountNumber: "1234567890"})
	l.merchant = shop.ID
	duka := s.merchant(tenantB, domain.CreateMerchant{Name: "Duka", Country: domain.CountryKenya, PhoneNumber: "+254722000001"})

	// Payments through their lifecycle.
	l.paid = s.payment(l.tenantA, l.user, shop, now)
	s.deposit(l.tenantA, l.paid, 2, now)                                      // partial: deposit_received
	s.pay(l.tenantA, l.paid, func(p domain.Payment) ([]domain.Event, error) { // a supporting document
		return domain.DecideAttachPaymentDocument(p, domain.AttachPaymentDocument{DocumentID: s.document(l.tenantA, l.paid),
			FileName: "invoice.pdf", ContentType: domain.ContentTypePDF, Size: 4, SHA256: strings.Repeat("cd", 32), Now: now})
	})
	s.deposit(l.tenantA, l.paid, 1, now) // the rest: deposited
	s.payout(l.tenantA, l.paid, false, now)
	// Webhook attempt events, as the dispatcher appended them before the
	// delivery log: the success's delivery failed once (still pending), the
	// deposit's was delivered (its row gone), and one names no delivery.
	attempt := func(eventType string, event uuid.UUID, status int) {
		t.Helper()
		a := domain.WebhookAttempt{EventID: event, Type: eventType, Attempt: 1, StatusCode: status,
			Duration: 40 * time.Millisecond, Delivered: status < 300, Now: now}
		if status >= 300 {
			a.Err = fmt.Sprintf("HTTP %d", status)
		}
		s.pay(l.tenantA, l.paid, func(domain.Payment) ([]domain.Event, error) {
			return []domain.Event{domain.NewWebhookAttempted(a, domain.WebhookRetrySchedule)}, nil
		})
	}
	eventOf := func(eventType string) uuid.UUID {
		return auditQueryID(t, l.url, `SELECT id FROM events WHERE stream_id = $1 AND type = $2`, l.paid, eventType)
	}
	attempt("payment.success", eventOf("payment.success"), 500)
	attempt("payment.deposited", eventOf("payment.deposited"), 204)
	attempt("payment.success", uuid.New(), 500)

	failed := s.payment(l.tenantA, l.user, shop, now)
	s.deposit(l.tenantA, failed, 1, now)
	s.payout(l.tenantA, failed, true, now)

	expired := s.payment(l.tenantA, l.user, shop, now)
	s.deposit(l.tenantA, expired, 3, now)
	s.pay(l.tenantA, expired, func(p domain.Payment) ([]domain.Event, error) {
		return domain.DecideExpire(p, p.ExpiresAt.Add(time.Second))
	})
	s.payment(l.tenantA, l.user, shop, now) // still waiting for funds

	kes := s.payment(tenantB, uuid.New(), duka, now)
	s.deposit(tenantB, kes, 1, now)
	s.payout(tenantB, kes, false, now)

	// A dashboard user through the operator's command, who sets a password
	// and signs in twice, signing out of the first session.
	var du dashboardUser
	auditRun(t, l.url, &du, "dashboard-user", "add", "--tenant", a.TenantID, "--email", "ops@acme.test")
	l.dashUser = uuid.MustParse(du.DashboardUserID)
	ref := domain.StreamRef{TenantID: l.tenantA, Type: "dashboard_user", ID: l.dashUser}
	dash := func(decide func(domain.DashboardUser) ([]domain.Event, error)) {
		t.Helper()
		if _, err := eventstore.Execute(ctx, db.store, ref, auditMeta, domain.ApplyDashboardUser, decide); err != nil {
			t.Fatalf("dashboard user: %v", err)
		}
	}
	dash(func(u domain.DashboardUser) ([]domain.Event, error) {
		return domain.DecideSetDashboardPassword(u, u.SetupTokenHash, "$argon2id$v=19$m=65536,t=1,p=2$c2FsdA$aGFzaA", now)
	})
	for _, session := range []string{strings.Repeat("a1", 32), strings.Repeat("b2", 32)} {
		dash(func(u domain.DashboardUser) ([]domain.Event, error) {
			return domain.DecideDashboardSignIn(u, session, now.Add(12*time.Hour))
		})
	}
	dash(func(u domain.DashboardUser) ([]domain.Event, error) {
		return domain.DecideDashboardSignOut(u, strings.Repeat("a1", 32))
	})
	// Another who signs in and is then disabled by the operator, which
	// ends the session.
	var left dashboardUser
	auditRun(t, l.url, &left, "dashboard-user", "add", "--tenant", a.TenantID, "--email", "left@acme.test")
	ref = domain.StreamRef{TenantID: l.tenantA, Type: "dashboard_user", ID: uuid.MustParse(left.DashboardUserID)}
	dash(func(u domain.DashboardUser) ([]domain.Event, error) {
		return domain.DecideSetDashboardPassword(u, u.SetupTokenHash, "$argon2id$v=19$m=65536,t=1,p=2$c2FsdA$aGFzaB", now)
	})
	dash(func(u domain.DashboardUser) ([]domain.Event, error) {
		return domain.DecideDashboardSignIn(u, strings.Repeat("c3", 32), now.Add(12*time.Hour))
	})
	auditRun(t, l.url, nil, "dashboard-user", "disable", "--email", "left@acme.test")

	l.events = auditWaitSequenced(t, ctx, db)
	return l
}

// auditSteps appends through eventstore.Execute, as ledgerd does.
type auditSteps struct {
	t     *testing.T
	ctx   context.Context
	store *eventstore.Store
}

var auditMeta = domain.Metadata{Actor: "operator:test"}

func (s auditSteps) user(ref domain.StreamRef, decide func(domain.User) ([]domain.Event, error)) {
	s.t.Helper()
	if _, err := eventstore.Execute(s.ctx, s.store, ref, auditMeta, domain.ApplyUser, decide); err != nil {
		s.t.Fatalf("user %s: %v", ref.ID, err)
	}
}

func (s auditSteps) merchant(tenant uuid.UUID, c domain.CreateMerchant) domain.Merchant {
	s.t.Helper()
	c.MerchantID = uuid.Must(uuid.NewV7())
	m, err := eventstore.Execute(s.ctx, s.store, domain.StreamRef{TenantID: tenant, Type: "merchant", ID: c.MerchantID},
		auditMeta, domain.ApplyMerchant, func(m domain.Merchant) ([]domain.Event, error) { return domain.DecideCreateMerchant(m, c) })
	if err != nil {
		s.t.Fatalf("create merchant: %v", err)
	}
	return m
}

func (s auditSteps) pay(tenant, id uuid.UUID, decide func(domain.Payment) ([]domain.Event, error)) domain.Payment {
	s.t.Helper()
	p, err := eventstore.Execute(s.ctx, s.store, domain.StreamRef{TenantID: tenant, Type: "payment", ID: id},
		auditMeta, domain.ApplyPayment, decide)
	if err != nil {
		s.t.Fatalf("payment %s: %v", id, err)
	}
	return p
}

// payment creates a Lightning-funded payment of 1500 to m.
func (s auditSteps) payment(tenant, user uuid.UUID, m domain.Merchant, now time.Time) uuid.UUID {
	s.t.Helper()
	o, err := domain.ValidatePaymentRequest(domain.PaymentRequest{MerchantID: m.ID.String(), Amount: json.RawMessage("1500"),
		Reference: "inv 42", WebhookURL: "http://127.0.0.1:9/hook", WebhookSecret: "whsec"}, true)
	if err != nil {
		s.t.Fatal(err)
	}
	plan, err := domain.PlanPayment(o, m, domain.User{}, domain.DefaultValidity, now, time.UTC)
	if err != nil {
		s.t.Fatal(err)
	}
	q, err := domain.QuotePayment(domain.QuoteInput{FromCurrency: "BTC", DestinationCurrency: m.Currency, Amount: 1500,
		Prices: auditPrices})
	if err != nil {
		s.t.Fatal(err)
	}
	id := uuid.Must(uuid.NewV7())
	s.pay(tenant, id, func(p domain.Payment) ([]domain.Event, error) {
		return domain.DecideCreatePayment(p, domain.CreatePayment{PaymentID: id, UserID: user, Plan: plan, Quote: q,
			Funding: domain.PaymentFunding{Invoice: &domain.LightningInvoice{PaymentRequest: "lnbcrt1", AmountSats: q.AmountSats}},
			Now:     now})
	})
	return id
}

// deposit pays 1/part of what is outstanding (part 1: all of it).
func (s auditSteps) deposit(tenant, id uuid.UUID, part int64, now time.Time) {
	s.t.Helper()
	s.pay(tenant, id, func(p domain.Payment) ([]domain.Event, error) {
		return domain.DecideDeposit(p, domain.RecordDeposit{Amount: p.Outstanding().Div(decimal.NewFromInt(part)).Ceil(), Now: now})
	})
}

// payout converts and records the rail's answer.
func (s auditSteps) payout(tenant, id uuid.UUID, rejected bool, now time.Time) {
	s.t.Helper()
	s.pay(tenant, id, func(p domain.Payment) ([]domain.Event, error) {
		return domain.DecideBeginPayout(p, domain.BeginPayout{Prices: auditPrices, Now: now})
	})
	s.pay(tenant, id, func(p domain.Payment) ([]domain.Event, error) {
		return domain.DecidePayoutResult(p, domain.PayoutResult{PayoutID: "po-" + id.String()[:8], Rejected: rejected,
			Reason: "account closed", Now: now})
	})
}

// document stores a supporting document's bytes (payment_documents refers to them).
func (s auditSteps) document(tenant, payment uuid.UUID) uuid.UUID {
	s.t.Helper()
	id := uuid.Must(uuid.NewV7())
	_, err := s.store.Pool().Exec(s.ctx, `INSERT INTO documents (id, tenant_id, owner, content_type, size, sha256, file_name)
		VALUES ($1, $2, $3, 'application/pdf', 4, $4, 'invoice.pdf')`, id, tenant, payment, strings.Repeat("cd", 32))
	if err != nil {
		s.t.Fatalf("store document: %v", err)
	}
	return id
}

// auditRelay runs the relay (and so the sequencer) on db until stopped.
func auditRelay(t *testing.T, db *database) (stop func()) {
	t.Helper()
	js := testenv.JetStream(t)
	stream := testenv.NewStream(t)
	relay := eventstore.NewRelay(db.pool, js, eventstore.RelayConfig{Stream: stream.Name, SubjectPrefix: stream.SubjectPrefix},
		slog.New(slog.DiscardHandler), nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { relay.Run(ctx); close(done) }()
	var once sync.Once
	return func() {
		once.Do(func() {
			cancel()
			<-done
		})
	}
}

// auditWaitSequenced waits until every event has its position and hash,
// and returns how many there are.
func auditWaitSequenced(t *testing.T, ctx context.Context, db *database) int {
	t.Helper()
	for {
		var total, waiting int
		err := db.pool.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE position IS NULL) FROM events`).Scan(&total, &waiting)
		if err != nil {
			t.Fatalf("count events: %v", err)
		}
		if waiting == 0 {
			return total
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%d of %d events still unsequenced", waiting, total)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// auditRun runs one ledgerctl command on the database at dbURL and decodes
// its JSON output into out (nil: ignored); the command must succeed.
func auditRun(t *testing.T, dbURL string, out any, args ...string) {
	t.Helper()
	var stdout bytes.Buffer
	if err := run(testenv.Context(t, time.Minute), args, databaseEnv(dbURL), &stdout); err != nil {
		t.Fatalf("ledgerctl %s: %v", strings.Join(args, " "), err)
	}
	if out != nil {
		if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
			t.Fatalf("ledgerctl %s: decode %q: %v", strings.Join(args, " "), stdout.String(), err)
		}
	}
}

// auditVerifyJSON runs `ledgerctl audit verify --json` on dbURL.
func auditVerifyJSON(t *testing.T, dbURL string, args ...string) (auditReport, error) {
	t.Helper()
	var stdout bytes.Buffer
	err := run(testenv.Context(t, time.Minute), append([]string{"audit", "verify", "--json", "--max", "100"}, args...),
		databaseEnv(dbURL), &stdout)
	var rep auditReport
	if jerr := json.Unmarshal(stdout.Bytes(), &rep); jerr != nil {
		t.Fatalf("audit verify --json: decode %q: %v (command error: %v)", stdout.String(), jerr, err)
	}
	return rep, err
}

// auditCloneMu serialises copies of the template database.
var auditCloneMu sync.Mutex

// auditClone returns the URL of a new database copied from the one at
// src, which no one may be connected to; it is dropped when t ends.
func auditClone(t *testing.T, src string) string {
	t.Helper()
	ctx := testenv.Context(t, time.Minute)
	u, err := url.Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	from := strings.TrimPrefix(u.Path, "/")
	name := testenv.Name("ledger_test_audit_")
	admin := func() *pgx.Conn {
		conn, err := pgx.Connect(ctx, testenv.DatabaseURL())
		if err != nil {
			t.Fatalf("connect to test Postgres: %v", err)
		}
		return conn
	}
	conn := admin()
	defer conn.Close(ctx)
	auditCloneMu.Lock()
	_, err = conn.Exec(ctx, "CREATE DATABASE "+name+" TEMPLATE "+from)
	auditCloneMu.Unlock()
	if err != nil {
		t.Fatalf("copy database %s: %v", from, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, testenv.DatabaseURL())
		if err != nil {
			t.Errorf("drop database %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	u.Path = "/" + name
	return u.String()
}

// auditExec runs SQL on the database at dbURL: the corruption.
func auditExec(t *testing.T, dbURL, sql string, args ...any) {
	t.Helper()
	ctx := testenv.Context(t, 30*time.Second)
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	tag, err := conn.Exec(ctx, sql, args...)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	if (tag.Insert() || tag.Update() || tag.Delete()) && tag.RowsAffected() == 0 {
		t.Fatalf("%s: changed no row", sql)
	}
}

// auditQueryID returns the uuid a query selects on dbURL.
func auditQueryID(t *testing.T, dbURL, sql string, args ...any) uuid.UUID {
	t.Helper()
	ctx := testenv.Context(t, 30*time.Second)
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var id uuid.UUID
	if err := conn.QueryRow(ctx, sql, args...).Scan(&id); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return id
}

// auditWant is a difference a corruption must produce: its check, a part
// of its subject, and its field (prefix) when it names one.
type auditWant struct {
	check, subject, field string
}

func (w auditWant) matches(d auditDifference) bool {
	return d.Check == w.check && strings.Contains(d.Subject, w.subject) && strings.HasPrefix(d.Field, w.field)
}

func TestAuditVerify(t *testing.T) {
	l := auditSeed(t)

	t.Run("clean", func(t *testing.T) {
		t.Parallel()
		db := auditClone(t, l.url)
		var out bytes.Buffer
		start := time.Now()
		if err := run(testenv.Context(t, time.Minute), []string{"audit", "verify"}, databaseEnv(db), &out); err != nil {
			t.Fatalf("audit verify on a clean ledger: got %v, want nil\n%s", err, out.String())
		}
		t.Logf("audit verify, %d events: %v\n%s", l.events, time.Since(start), out.String())
		rep, err := auditVerifyJSON(t, db)
		if err != nil || !rep.OK || rep.Differences != 0 {
			t.Fatalf("audit verify --json: got ok %v, %d differences, error %v, want ok: %+v", rep.OK, rep.Differences, err, rep.FirstDifferences)
		}
		if rep.EventsChecked != int64(l.events) || rep.EventsReplayed != int64(l.events) || rep.Tenants != 2 {
			t.Errorf("checked %d and replayed %d events in %d chains, want %d, %d, 2", rep.EventsChecked, rep.EventsReplayed,
				rep.Tenants, l.events, l.events)
		}
		if rep.RowsCompared < 30 || rep.PostingsChecked < 20 {
			t.Errorf("got %d rows, %d postings, want at least 30, 20", rep.RowsCompared, rep.PostingsChecked)
		}
	})

	cases := []struct {
		name    string
		corrupt func(t *testing.T, db string) []auditWant
	}{
		{"one byte of an event's data", func(t *testing.T, db string) []auditWant {
			ev := auditQueryID(t, db, `SELECT id FROM events WHERE stream_id = $1 AND type = 'merchant.created'`, l.merchant)
			auditExec(t, db, `UPDATE events SET data = replace(data::text, 'Shop Alpha', 'Shop Alphb')::json WHERE id = $1`, ev)
			return []auditWant{{"chain", "event " + ev.String(), "hash"},
				{"replay", "merchants " + l.merchant.String(), "name"}}
		}},
		{"an event deleted", func(t *testing.T, db string) []auditWant {
			ev := auditQueryID(t, db, `SELECT id FROM events WHERE stream_id = $1 AND type = 'payment.transferring'`, l.paid)
			auditExec(t, db, `DELETE FROM events WHERE id = $1`, ev)
			return []auditWant{{"positions", "position", ""}, {"chain", "event", "prevhash"},
				{"replay", "payments " + l.paid.String(), "state.statusLogs"},
				{"replay", "ledger_entries " + ev.String(), ""}}
		}},
		{"a payment's state amount edited", func(t *testing.T, db string) []auditWant {
			auditExec(t, db, `UPDATE payments SET state = jsonb_set(state::jsonb, '{amount}', '1501') WHERE id = $1`, l.paid)
			return []auditWant{{"replay", "payments " + l.paid.String(), "state.amount"}}
		}},
		{"a payment's state amount written as a decimal", func(t *testing.T, db string) []auditWant {
			auditExec(t, db, `UPDATE payments SET state = jsonb_set(state::jsonb, '{amount}', ((state->>'amount') || '.0')::jsonb) WHERE id = $1`, l.paid)
			return []auditWant{{"replay", "payments " + l.paid.String(), ""}}
		}},
		{"a user's name edited", func(t *testing.T, db string) []auditWant {
			auditExec(t, db, `UPDATE users SET name = 'Mallory' WHERE id = $1`, l.user)
			return []auditWant{{"replay", "users " + l.user.String(), "name"}}
		}},
		{"a user's momo account edited", func(t *testing.T, db string) []auditWant {
			acc := auditQueryID(t, db, `SELECT id FROM momo_accounts WHERE user_id = $1 AND label = 'work'`, l.user)
			auditExec(t, db, `UPDATE momo_accounts SET phone_number = '+254799999999' WHERE id = $1`, acc)
			return []auditWant{{"replay", "momo_accounts " + acc.String(), "phone_number"}}
		}},
		{"a ledger_entries line missing", func(t *testing.T, db string) []auditWant {
			ev := auditQueryID(t, db, `SELECT id FROM events WHERE stream_id = $1 AND type = 'payment.deposited'`, l.paid)
			auditExec(t, db, `UPDATE ledger_entries SET accounts = accounts[1:1] || accounts[3:], currencies = currencies[1:1] || currencies[3:],
				sides = sides[1:1] || sides[3:], amounts = amounts[1:1] || amounts[3:] WHERE event_id = $1`, ev)
			return []auditWant{{"replay", "ledger_entries " + ev.String(), "accounts"},
				{"postings", "ledger_entries " + ev.String(), ""}}
		}},
		{"a ledger_entries row missing", func(t *testing.T, db string) []auditWant {
			ev := auditQueryID(t, db, `SELECT id FROM events WHERE stream_id = $1 AND type = 'payment.deposited'`, l.paid)
			auditExec(t, db, `DELETE FROM ledger_entries WHERE event_id = $1`, ev)
			return []auditWant{{"replay", "ledger_entries " + ev.String(), ""}}
		}},
		{"a ledger_entries line unbalanced", func(t *testing.T, db string) []auditWant {
			ev := auditQueryID(t, db, `SELECT id FROM events WHERE stream_id = $1 AND type = 'payment.success'`, l.paid)
			auditExec(t, db, `UPDATE ledger_entries SET amounts[1] = amounts[1] + 1 WHERE event_id = $1`, ev)
			return []auditWant{{"replay", "ledger_entries " + ev.String(), "amounts"},
				{"postings", "ledger_entries " + ev.String(), ""}}
		}},
		{"a ledger_entries line added behind the events' back", func(t *testing.T, db string) []auditWant {
			ev := auditQueryID(t, db, `SELECT id FROM events WHERE stream_id = $1 AND type = 'payment.success'`, l.paid)
			auditExec(t, db, `UPDATE ledger_entries SET accounts = accounts || accounts[1], currencies = currencies || currencies[1],
				sides = sides || sides[1], amounts = amounts || amounts[1] WHERE event_id = $1`, ev)
			return []auditWant{{"replay", "ledger_entries " + ev.String(), "accounts"},
				{"postings", "ledger_entries " + ev.String(), ""}}
		}},
		{"a ledger_entries row its dropped checks let through", func(t *testing.T, db string) []auditWant {
			ev := auditQueryID(t, db, `SELECT id FROM events WHERE stream_id = $1 AND type = 'payment.success'`, l.paid)
			auditExec(t, db, `DO $$ DECLARE c text; BEGIN
				FOR c IN SELECT conname FROM pg_constraint WHERE conrelid = 'ledger_entries'::regclass AND contype = 'c' LOOP
					EXECUTE format('ALTER TABLE ledger_entries DROP CONSTRAINT %I', c);
				END LOOP; END $$`)
			auditExec(t, db, `UPDATE ledger_entries SET amounts[1] = NULL, sides = sides[1:1] WHERE event_id = $1`, ev)
			return []auditWant{{"postings", "ledger_entries " + ev.String() + "/1", "amount"},
				{"postings", "ledger_entries " + ev.String() + "/2", "side"}}
		}},
		{"an event's postings unbalanced", func(t *testing.T, db string) []auditWant {
			ev := auditQueryID(t, db, `SELECT id FROM events WHERE stream_id = $1 AND type = 'payment.success'`, l.paid)
			auditExec(t, db, `UPDATE events SET data = jsonb_set(data::jsonb, '{postings,0,amount}', '"1"')::json WHERE id = $1`, ev)
			return []auditWant{{"chain", "event " + ev.String(), "hash"}, {"replay", "ledger_entries " + ev.String(), "amounts"}}
		}},
		{"a payments row no stream produced", func(t *testing.T, db string) []auditWant {
			id := uuid.New()
			auditExec(t, db, `INSERT INTO payments (id, tenant_id, user_id, merchant_id, status, state, version, created_at, updated_at)
				SELECT $1, tenant_id, user_id, merchant_id, status, state, version, created_at, updated_at FROM payments WHERE id = $2`,
				id, l.paid)
			return []auditWant{{"replay", "payments " + id.String(), ""}}
		}},
		{"a dashboard session no event opened", func(t *testing.T, db string) []auditWant {
			auditExec(t, db, `INSERT INTO dashboard_sessions (session_hash, user_id, tenant_id, created_at, expires_at)
				VALUES ($1, $2, $3, now(), now() + interval '1 year')`, strings.Repeat("ee", 32), l.dashUser, l.tenantA)
			return []auditWant{{"replay", "dashboard_sessions " + strings.Repeat("ee", 32), ""}}
		}},
		{"a dashboard session's end undone", func(t *testing.T, db string) []auditWant {
			auditExec(t, db, `UPDATE dashboard_sessions SET revoked_at = NULL WHERE user_id = $1`, l.dashUser)
			return []auditWant{{"replay", "dashboard_sessions " + strings.Repeat("a1", 32), "revoked_at"}}
		}},
		{"a dashboard user's password hash edited", func(t *testing.T, db string) []auditWant {
			auditExec(t, db, `UPDATE dashboard_users SET password_hash = 'x' WHERE id = $1`, l.dashUser)
			return []auditWant{{"replay", "dashboard_users " + l.dashUser.String(), "password_hash"}}
		}},
		{"an event left unsequenced", func(t *testing.T, db string) []auditWant {
			auditRun(t, db, nil, "apikey", "create", "--tenant", l.tenantA.String()) // no relay runs on the copy
			return []auditWant{{"sequencing", "event", ""}}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			db := auditClone(t, l.url)
			want := c.corrupt(t, db)
			rep, err := auditVerifyJSON(t, db, "--unsequenced-after", "0s")
			if err == nil || rep.OK {
				t.Fatalf("audit verify: got ok %v, error %v, want differences", rep.OK, err)
			}
			for _, w := range want {
				found := false
				for _, d := range rep.FirstDifferences {
					found = found || w.matches(d)
				}
				if !found {
					t.Errorf("got no %s difference on %q field %q", w.check, w.subject, w.field)
				}
			}
			if t.Failed() || testing.Verbose() {
				for _, d := range rep.FirstDifferences {
					t.Log(d.String())
				}
			}
		})
	}
}
