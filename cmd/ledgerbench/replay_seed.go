package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore"
)

// The replay mode's event history: tenants with their owners, users with
// profiles, momo accounts and KYC documents, merchants, and mostly payments
// through their lifecycle (partial deposits, payouts that succeed or fail,
// expiries, supporting documents, webhook attempts), made by the domain's
// own decisions so every event's JSON is what the service writes. Payments
// in flight are interleaved, as they are in a live ledger, so a stream's
// events lie far apart in position order.
//
// The events are written with COPY, already sequenced: positions in order
// and each tenant's hash chain (eventstore.Hash), with sequencer_state and
// chain_heads to match, as if the sequencer had run. The read models are
// left empty: the rebuild being measured fills them.

// seedStats is what seeding wrote.
type seedStats struct {
	Events    int64            `json:"events"`
	ByStream  map[string]int64 `json:"byStreamType"`
	Payments  int64            `json:"payments"`
	Documents int64            `json:"documents"`
	Tenants   int              `json:"tenants"`
	Seconds   float64          `json:"seconds"`
	PerSecond float64          `json:"perSecond"`
}

// activePayments is how many payments are in flight at once.
const activePayments = 2000

// seeder generates the history one event at a time, in position order.
type seeder struct {
	rng       *rand.Rand
	clock     time.Time
	pos       int64
	heads     map[uuid.UUID]string // tenant -> hash of its last event
	tenants   []*seedTenant
	slots     []*seedPayment
	docs      [][]any // documents rows for the payments' attached documents
	out       []domain.Record
	stats     seedStats
	fee       decimal.Decimal
	prices    domain.BTCPrices
	meta      domain.Metadata
	userCount int64
}

type seedTenant struct {
	ref       domain.StreamRef
	version   int
	owner     seedUser
	users     []*seedUser // the most recent, for their later events
	merchants []seedMerchant
}

type seedUser struct {
	ref      domain.StreamRef
	version  int
	momo     []uuid.UUID
	nextMomo int
}

type seedMerchant struct {
	m     domain.Merchant
	plan  domain.PaymentPlan
	quote domain.Quote
}

// seedPayment is a payment in flight: its state, the steps it has left,
// and webhook attempts owed for its status events.
type seedPayment struct {
	tenant  *seedTenant
	ref     domain.StreamRef
	state   domain.Payment
	version int
	steps   []string
	hooked  bool
	hooks   []domain.WebhookAttempt
}

func newSeeder(n int64) *seeder {
	s := &seeder{rng: rand.New(rand.NewPCG(uint64(n), 6)), clock: time.Now().Add(-30 * 24 * time.Hour).UTC().Truncate(time.Millisecond),
		heads: map[uuid.UUID]string{}, fee: decimal.RequireFromString("0.01"),
		prices: domain.BTCPrices{"ZAR": decimal.NewFromInt(1_800_000), "NGN": decimal.NewFromInt(150_000_000)}, meta: domain.Metadata{Actor: "ledgerbench:replay"},
		stats: seedStats{ByStream: map[string]int64{}}}
	s.slots = make([]*seedPayment, activePayments)
	return s
}

// next returns the next events of the history (one or a few), or an error.
func (s *seeder) next() ([]domain.Record, error) {
	s.out = s.out[:0]
	var err error
	switch r := s.rng.Float64(); {
	case len(s.tenants) == 0 || (r < 0.0002 && len(s.tenants) < 200):
		err = s.newTenant()
	case r < 0.03:
		err = s.userEvent(s.tenants[s.rng.IntN(len(s.tenants))])
	case r < 0.032:
		t := s.tenants[s.rng.IntN(len(s.tenants))]
		err = s.emit(&t.ref, &t.version, domain.APIKeyCreated{APIKey: "lk_" + randomHex(12), SecretHash: randomHex(32)})
	default:
		err = s.paymentEvent()
	}
	return s.out, err
}

// emit makes the record of e as the next event of ref, sequenced and hashed.
func (s *seeder) emit(ref *domain.StreamRef, version *int, e domain.Event) error {
	s.clock = s.clock.Add(time.Duration(1+s.rng.IntN(2)) * time.Millisecond)
	rec, err := domain.NewRecord(*ref, *version+1, e, s.meta, uuid.Must(uuid.NewV7()), s.clock)
	if err != nil {
		return err
	}
	s.pos++
	rec.Position = s.pos
	rec.PrevHash = s.heads[rec.TenantID]
	if rec.PrevHash == "" {
		rec.PrevHash = eventstore.GenesisHash
	}
	if rec.Hash, err = eventstore.Hash(rec.PrevHash, rec); err != nil {
		return err
	}
	s.heads[rec.TenantID] = rec.Hash
	*version++
	s.out = append(s.out, rec)
	s.stats.Events++
	s.stats.ByStream[ref.Type]++
	return nil
}

func (s *seeder) newTenant() error {
	id, owner := uuid.Must(uuid.NewV7()), uuid.Must(uuid.NewV7())
	tev, oev, err := domain.DecideCreateTenant(domain.CreateTenant{TenantID: id, OwnerUserID: owner,
		Name: fmt.Sprintf("Replay tenant %d", len(s.tenants)+1), OwnerEmail: "owner-" + id.String() + "@ledgerbench.invalid",
		APIKey: "lk_" + randomHex(12), SecretHash: randomHex(32)})
	if err != nil {
		return err
	}
	t := &seedTenant{ref: domain.StreamRef{TenantID: id, Type: "tenant", ID: id},
		owner: seedUser{ref: domain.StreamRef{TenantID: id, Type: "user", ID: owner}}}
	for _, e := range tev {
		if err := s.emit(&t.ref, &t.version, e); err != nil {
			return err
		}
	}
	for _, e := range oev {
		if err := s.emit(&t.owner.ref, &t.owner.version, e); err != nil {
			return err
		}
	}
	for _, c := range []domain.CreateMerchant{
		{Name: "Cape Shop", Country: domain.CountrySouthAfrica, BankName: "Nedbank", AccountNumber: "1234567890"},
		{Name: "Lagos Shop", Country: domain.CountryNigeria, BankName: "First Bank of Nigeria", AccountNumber: "0123456789"},
	} {
		c.MerchantID = uuid.Must(uuid.NewV7())
		events, err := domain.DecideCreateMerchant(domain.Merchant{}, c)
		if err != nil {
			return err
		}
		ref, v := domain.StreamRef{TenantID: id, Type: "merchant", ID: c.MerchantID}, 0
		var m domain.Merchant
		for _, e := range events {
			if err := s.emit(&ref, &v, e); err != nil {
				return err
			}
			m = domain.ApplyMerchant(m, e)
		}
		sm, err := s.plan(m)
		if err != nil {
			return err
		}
		t.merchants = append(t.merchants, sm)
	}
	s.tenants = append(s.tenants, t)
	s.stats.Tenants++
	return nil
}

// plan prices a Lightning-funded payment of 1500 to m, once per merchant.
func (s *seeder) plan(m domain.Merchant) (seedMerchant, error) {
	o, err := domain.ValidatePaymentRequest(domain.PaymentRequest{MerchantID: m.ID.String(), Amount: json.RawMessage("1500"),
		Reference: "replay"}, true)
	if err != nil {
		return seedMerchant{}, err
	}
	plan, err := domain.PlanPayment(o, m, domain.User{}, domain.DefaultValidity, time.Now(), time.UTC)
	if err != nil {
		return seedMerchant{}, err
	}
	q, err := domain.QuotePayment(domain.QuoteInput{FromCurrency: "BTC", DestinationCurrency: m.Currency, Amount: 1500,
		OTCFeeRate: s.fee, Prices: s.prices})
	if err != nil {
		return seedMerchant{}, err
	}
	return seedMerchant{m: m, plan: plan, quote: q}, nil
}

// userEvent creates a user of t or moves one of its recent users on.
func (s *seeder) userEvent(t *seedTenant) error {
	if len(t.users) == 0 || s.rng.IntN(4) == 0 {
		s.userCount++
		id := uuid.Must(uuid.NewV7())
		u := &seedUser{ref: domain.StreamRef{TenantID: t.ref.ID, Type: "user", ID: id}}
		if len(t.users) >= 64 {
			t.users = t.users[1:]
		}
		t.users = append(t.users, u)
		return s.emit(&u.ref, &u.version, domain.UserCreated{UserID: id, Email: fmt.Sprintf("user%d@ledgerbench.invalid", s.userCount),
			Name: fmt.Sprintf("User %d", s.userCount), Role: domain.RoleNormal})
	}
	u := t.users[s.rng.IntN(len(t.users))]
	switch s.rng.IntN(5) {
	case 0:
		return s.emit(&u.ref, &u.version, domain.ProfileUpdated{Changed: []string{"companyName"}, Name: "User",
			CompanyName: "Company " + randomHex(4), Sector: "retail", FirstName: "Ann", PhoneNumber: "+27821234567"})
	case 1:
		return s.emit(&u.ref, &u.version, domain.UserUpdated{Changed: []string{"firstName", "lastName"},
			UserDetails: domain.UserDetails{EntityType: "individual", FirstName: "Ann", LastName: "Smith", Nationality: []string{"ZAF"}}})
	case 2:
		if len(u.momo) >= 3 {
			gone := u.momo[0]
			u.momo = u.momo[1:]
			next := u.momo[0]
			if err := s.emit(&u.ref, &u.version, domain.DefaultMomoAccountChanged{AccountID: &next, PreviousAccountID: &gone}); err != nil {
				return err
			}
			return s.emit(&u.ref, &u.version, domain.MomoAccountRemoved{AccountID: gone})
		}
		id := uuid.Must(uuid.NewV7())
		u.nextMomo++
		if err := s.emit(&u.ref, &u.version, domain.MomoAccountAdded{AccountID: id, Label: "wallet",
			PhoneNumber: fmt.Sprintf("+2547%08d", u.nextMomo), MobileNetwork: "Safaricom", CountryCode: domain.MomoCountry}); err != nil {
			return err
		}
		u.momo = append(u.momo, id)
		if len(u.momo) == 1 {
			return s.emit(&u.ref, &u.version, domain.DefaultMomoAccountChanged{AccountID: &id})
		}
		return nil
	case 3:
		return s.emit(&u.ref, &u.version, domain.KYCDocumentUploaded{DocumentID: uuid.Must(uuid.NewV7()), DocumentType: "passport",
			FileName: "passport.pdf", ContentType: domain.ContentTypePDF, Size: 48_000, SHA256: randomHex(32)})
	default:
		return s.emit(&u.ref, &u.version, domain.UserVerificationChanged{IsVerified: s.rng.IntN(2) == 0})
	}
}

// paymentEvent moves a random payment in flight on by one event, or
// starts a new one in its place.
func (s *seeder) paymentEvent() error {
	i := s.rng.IntN(len(s.slots))
	p := s.slots[i]
	if p == nil || (len(p.steps) == 0 && len(p.hooks) == 0) {
		var err error
		s.slots[i], err = s.newPayment()
		return err
	}
	if len(p.hooks) > 0 {
		a := p.hooks[0]
		p.hooks = p.hooks[1:]
		a.Now = s.clock
		return s.decide(p, func(domain.Payment) ([]domain.Event, error) {
			return []domain.Event{domain.NewWebhookAttempted(a, domain.WebhookRetrySchedule)}, nil
		})
	}
	step := p.steps[0]
	p.steps = p.steps[1:]
	now := s.clock
	switch step {
	case "partial":
		return s.decide(p, func(st domain.Payment) ([]domain.Event, error) {
			return domain.DecideDeposit(st, domain.RecordDeposit{Amount: st.Outstanding().Div(decimal.NewFromInt(3)).Floor(), Now: now})
		})
	case "deposit":
		return s.decide(p, func(st domain.Payment) ([]domain.Event, error) {
			return domain.DecideDeposit(st, domain.RecordDeposit{Amount: st.Outstanding(), Now: now})
		})
	case "payout":
		return s.decide(p, func(st domain.Payment) ([]domain.Event, error) {
			return domain.DecideBeginPayout(st, domain.BeginPayout{Prices: s.prices, OTCFeeRate: s.fee, Now: now})
		})
	case "success", "failed":
		return s.decide(p, func(st domain.Payment) ([]domain.Event, error) {
			return domain.DecidePayoutResult(st, domain.PayoutResult{PayoutID: "po_" + st.ID.String(), Rejected: step == "failed",
				Reason: "account closed", Now: now})
		})
	case "expire":
		return s.decide(p, func(st domain.Payment) ([]domain.Event, error) {
			return domain.DecideExpire(st, st.ExpiresAt.Add(time.Second))
		})
	case "document":
		doc := uuid.Must(uuid.NewV7())
		s.docs = append(s.docs, []any{doc, p.ref.TenantID, p.ref.ID, domain.ContentTypePDF, int64(32_000), randomHex(32), "invoice.pdf", now})
		s.stats.Documents++
		return s.decide(p, func(st domain.Payment) ([]domain.Event, error) {
			return domain.DecideAttachPaymentDocument(st, domain.AttachPaymentDocument{DocumentID: doc, FileName: "invoice.pdf",
				ContentType: domain.ContentTypePDF, Size: 32_000, SHA256: randomHex(32), Now: now})
		})
	}
	return fmt.Errorf("unknown payment step %q", step)
}

// paths are the payment lifecycles and their weights (out of 100).
var paths = []struct {
	weight int
	steps  []string
}{
	{62, []string{"deposit", "payout", "success"}},
	{10, []string{"partial", "deposit", "payout", "success"}},
	{8, []string{"deposit", "payout", "failed"}},
	{8, []string{"expire"}},
	{5, []string{"partial", "expire"}},
	{4, []string{"document", "deposit", "payout", "success"}},
	{3, []string{}}, // still awaiting funds
}

func (s *seeder) newPayment() (*seedPayment, error) {
	t := s.tenants[s.rng.IntN(len(s.tenants))]
	m := t.merchants[s.rng.IntN(len(t.merchants))]
	id := uuid.Must(uuid.NewV7())
	p := &seedPayment{tenant: t, ref: domain.StreamRef{TenantID: t.ref.ID, Type: "payment", ID: id}, hooked: s.rng.IntN(2) == 0}
	w := s.rng.IntN(100)
	for _, path := range paths {
		if w < path.weight {
			p.steps = append(p.steps, path.steps...)
			break
		}
		w -= path.weight
	}
	if m.m.Country != domain.CountrySouthAfrica && len(p.steps) > 0 && p.steps[0] == "document" {
		p.steps = p.steps[1:] // documents are for South African payments only
	}
	plan := m.plan
	if p.hooked {
		plan.Order.WebhookURL = "https://hooks.ledgerbench.invalid/payments"
	}
	now := s.clock
	s.stats.Payments++
	return p, s.decide(p, func(st domain.Payment) ([]domain.Event, error) {
		return domain.DecideCreatePayment(st, domain.CreatePayment{PaymentID: id, UserID: t.owner.ref.ID, Plan: plan, Quote: m.quote,
			Funding: domain.PaymentFunding{Invoice: &domain.LightningInvoice{PaymentRequest: "lnbc" + randomHex(40), AmountSats: m.quote.AmountSats}},
			Now:     now})
	})
}

// decide appends what decide returns for p's state, folds it in, and owes
// a webhook attempt event (one failed and retried in five) for each status
// event, as histories recorded before the delivery log hold them.
func (s *seeder) decide(p *seedPayment, decide func(domain.Payment) ([]domain.Event, error)) error {
	events, err := decide(p.state)
	if err != nil {
		return fmt.Errorf("payment %s: %w", p.ref.ID, err)
	}
	for _, e := range events {
		if err := s.emit(&p.ref, &p.version, e); err != nil {
			return err
		}
		p.state = domain.ApplyPayment(p.state, e)
		if status := domain.StatusOf(e); status != "" && p.hooked {
			rec := s.out[len(s.out)-1]
			a := domain.WebhookAttempt{EventID: rec.ID, Type: rec.Type, Attempt: 1, StatusCode: 200, Delivered: true, Duration: 40 * time.Millisecond}
			if s.rng.IntN(5) == 0 {
				failed := a
				failed.StatusCode, failed.Delivered, failed.Err = 503, false, "503 Service Unavailable"
				a.Attempt = 2
				p.hooks = append(p.hooks, failed)
			}
			p.hooks = append(p.hooks, a)
		}
	}
	return nil
}

// eventColumns are the events columns seeding writes.
var eventColumns = []string{"id", "tenant_id", "stream_type", "stream_id", "stream_version", "type", "schema_version",
	"data", "metadata", "recorded_at", "position", "prevhash", "hash"}

// seedSource feeds COPY from a generator goroutine, so generating and
// writing overlap on two cores. Memory stays flat: a bounded channel of
// small chunks.
type seedSource struct {
	ch   <-chan []domain.Record
	errc <-chan error
	buf  []domain.Record
	row  []any
	err  error
}

func (c *seedSource) Next() bool {
	for len(c.buf) == 0 {
		b, ok := <-c.ch
		if !ok {
			c.err = <-c.errc
			return false
		}
		c.buf = b
	}
	r := c.buf[0]
	c.buf = c.buf[1:]
	meta, err := json.Marshal(r.Meta)
	if err != nil {
		c.err = err
		return false
	}
	c.row = []any{r.ID, r.TenantID, r.StreamType, r.StreamID, r.StreamVersion, r.Type, r.SchemaVersion,
		string(r.Data), string(meta), r.RecordedAt, r.Position, r.PrevHash, r.Hash}
	return true
}

func (c *seedSource) Values() ([]any, error) { return c.row, nil }
func (c *seedSource) Err() error             { return c.err }

// seedEvents writes n events into pool's database, and what goes with
// them (documents, sequencer state, chain heads).
func seedEvents(ctx context.Context, pool *pgxpool.Pool, n int64) (seedStats, error) {
	start := time.Now()
	s := newSeeder(n)
	ch, errc := make(chan []domain.Record, 64), make(chan error, 1)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		defer close(ch)
		var chunk []domain.Record
		for s.stats.Events < n {
			recs, err := s.next()
			if err != nil {
				errc <- err
				return
			}
			chunk = append(chunk, recs...)
			if len(chunk) >= 512 {
				select {
				case ch <- chunk:
				case <-ctx.Done():
					errc <- ctx.Err()
					return
				}
				chunk = nil
			}
		}
		if len(chunk) > 0 {
			select {
			case ch <- chunk:
			case <-ctx.Done():
			}
		}
		errc <- nil
	}()
	src := &seedSource{ch: ch, errc: errc}
	if _, err := pool.CopyFrom(ctx, pgx.Identifier{"events"}, eventColumns, src); err != nil {
		return s.stats, fmt.Errorf("seed events: %w", err)
	}
	if _, err := pool.CopyFrom(ctx, pgx.Identifier{"documents"},
		[]string{"id", "tenant_id", "owner", "content_type", "size", "sha256", "file_name", "created_at"}, pgx.CopyFromRows(s.docs)); err != nil {
		return s.stats, fmt.Errorf("seed documents: %w", err)
	}
	if _, err := pool.Exec(ctx, `UPDATE sequencer_state SET last_position = $1, published_position = $1`, s.pos); err != nil {
		return s.stats, fmt.Errorf("seed sequencer state: %w", err)
	}
	var heads [][]any
	for t, h := range s.heads {
		var last int64
		heads = append(heads, []any{t, last, h})
	}
	if _, err := pool.CopyFrom(ctx, pgx.Identifier{"chain_heads"}, []string{"tenant_id", "last_position", "hash"}, pgx.CopyFromRows(heads)); err != nil {
		return s.stats, fmt.Errorf("seed chain heads: %w", err)
	}
	if _, err := pool.Exec(ctx, `UPDATE chain_heads h SET last_position = (SELECT max(position) FROM events e WHERE e.tenant_id = h.tenant_id)`); err != nil {
		return s.stats, fmt.Errorf("seed chain heads: %w", err)
	}
	// A history that gets rebuilt has long been vacuumed (its rows' hint
	// bits set, its visibility map built) and checkpointed; a freshly
	// seeded one has not. Left to the rebuild's first read, to autovacuum
	// and to the checkpointer, that work would run during the measurement
	// and be counted as the rebuild's. Settling it is part of the seeding.
	if _, err := pool.Exec(ctx, `VACUUM (ANALYZE) events`); err != nil {
		return s.stats, fmt.Errorf("seed: vacuum: %w", err)
	}
	if _, err := pool.Exec(ctx, `CHECKPOINT`); err != nil {
		return s.stats, fmt.Errorf("seed: checkpoint (the benchmark's role needs pg_checkpoint or superuser): %w", err)
	}
	s.stats.Seconds = time.Since(start).Seconds()
	s.stats.PerSecond = float64(s.stats.Events) / s.stats.Seconds
	return s.stats, nil
}
