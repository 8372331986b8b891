package usecase

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore"
	"github.com/ledger/ledger/workers/rails/lightning"
	"github.com/ledger/ledger/workers/webhooks"
)

var errNoAdapter = errors.New("no production adapter is configured for this rail")

// CreatePayment is POST /payments (spec §4.6, contract §6): validate the
// request, route it to its merchant, price it, get its funding details from
// the rails, then append payment.created. payerID is the paying user;
// uuid.Nil (a tenant token) pays as the tenant's owner.
func (l *Ledger) CreatePayment(ctx context.Context, tenantID, payerID uuid.UUID, req domain.PaymentRequest,
	meta domain.Metadata) (domain.PaymentSnapshot, error) {
	order, err := domain.ValidatePaymentRequest(req, l.cfg.InsecureWebhooks)
	if err != nil {
		return domain.PaymentSnapshot{}, err
	}
	if order.WebhookURL != "" && !l.cfg.PrivateWebhooks {
		if err := webhooks.CheckURL(order.WebhookURL, false, nil); err != nil {
			return domain.PaymentSnapshot{}, domain.Invalidf("webhookUrl", "must be an https URL of a public address: %v", err)
		}
	}
	merchant, err := l.paymentMerchant(ctx, tenantID, order.MerchantID)
	if err != nil {
		return domain.PaymentSnapshot{}, err
	}
	if payerID == uuid.Nil {
		if payerID, err = l.OwnerUserID(ctx, tenantID); err != nil {
			return domain.PaymentSnapshot{}, err
		}
	}
	var payer domain.User
	if order.CollectionMethod == domain.CollectMomo {
		u, err := l.User(ctx, tenantID, payerID)
		if err != nil {
			return domain.PaymentSnapshot{}, err
		}
		payer = u.User
	}
	now := time.Now()
	plan, err := domain.PlanPayment(order, merchant, payer, l.cfg.Validity, now, l.cfg.Location)
	if err != nil {
		return domain.PaymentSnapshot{}, err
	}
	if l.rails.NoPayout[plan.Merchant.PayoutMethod] {
		return domain.PaymentSnapshot{}, &domain.Error{Kind: domain.Unavailable, Code: "rail_unavailable",
			Message: "payouts to this merchant's " + strings.ToLower(plan.Merchant.PayoutMethod) + " rail are not available right now; retry shortly",
			Err:     errNoAdapter}
	}
	if l.rails.NoFunding[plan.Funding] {
		return domain.PaymentSnapshot{}, &domain.Error{Kind: domain.Unavailable, Code: "rail_unavailable",
			Message: "deposits by " + strings.ToLower(plan.Funding) + " are not available right now; retry shortly", Err: errNoAdapter}
	}
	// Checked as given (ValidatePaymentRequest), stored sealed: the event
	// and the read model keep a form only the webhook sender opens.
	if plan.Order.WebhookSecret, err = l.cfg.SealSecret(ctx, plan.Order.WebhookSecret); err != nil {
		return domain.PaymentSnapshot{}, err
	}
	prices, err := l.rails.Prices.BTCPrices(ctx)
	if err != nil {
		return domain.PaymentSnapshot{}, errPricesUnavailable(err)
	}
	quote, err := domain.QuotePayment(domain.QuoteInput{FromCurrency: order.FromCurrency,
		DestinationCurrency: merchant.Currency, Amount: order.Amount, BufferRate: order.BufferRateOrZero(),
		OTCFeeRate: l.cfg.OTCFeeRate, Prices: prices})
	if errors.Is(err, domain.ErrPriceUnavailable) {
		return domain.PaymentSnapshot{}, errPricesUnavailable(err)
	}
	if err != nil {
		return domain.PaymentSnapshot{}, err // a caller error, or an internal one
	}
	id := uuid.Must(uuid.NewV7())
	funding, err := l.fund(ctx, tenantID, id, plan, quote, payer, now)
	if err != nil {
		return domain.PaymentSnapshot{}, err
	}
	ref := domain.StreamRef{TenantID: tenantID, Type: "payment", ID: id}
	snap, err := eventstore.CreateSnapshot(ctx, l.store, ref, meta, domain.ApplyPayment,
		func(p domain.Payment) ([]domain.Event, error) {
			return domain.DecideCreatePayment(p, domain.CreatePayment{PaymentID: id, UserID: payerID, Plan: plan,
				Quote: quote, Funding: funding, Now: now})
		})
	if err == nil && snap.Version > 0 {
		delivery, ready := snap.State.WebhookURL != "", snap.State.AwaitsPayout()
		eventstore.AfterCommit(ctx, func() { l.cfg.Appended(ref, delivery, ready) })
	}
	return paymentSnapshot(snap, err)
}

// paymentMerchant reads the merchant a payment names: one that is not the
// tenant's (or not a UUID) is 400 naming merchantId (contract §6).
func (l *Ledger) paymentMerchant(ctx context.Context, tenantID uuid.UUID, id string) (domain.Merchant, error) {
	notFound := domain.Invalidf("merchantId", "names no merchant of this tenant")
	mid, err := uuid.Parse(id)
	if err != nil {
		return domain.Merchant{}, notFound
	}
	m, err := l.Merchant(ctx, tenantID, mid)
	if domain.ErrorKind(err) == domain.NotFound {
		return domain.Merchant{}, notFound
	}
	return m.Merchant, err
}

// errPricesUnavailable is 503 while no BTC price can be had; its cause
// goes to the log.
func errPricesUnavailable(cause error) error {
	return &domain.Error{Kind: domain.Unavailable, Code: "prices_unavailable",
		Message: "no BTC price is available right now; retry shortly", Err: cause}
}

// fund asks the rails for the funding details of the plan's rail.
func (l *Ledger) fund(ctx context.Context, tenantID, id uuid.UUID, plan domain.PaymentPlan, q domain.Quote,
	payer domain.User, now time.Time) (domain.PaymentFunding, error) {
	var f domain.PaymentFunding
	unavailable := func(rail string, err error) error {
		return &domain.Error{Kind: domain.Unavailable, Code: "rail_unavailable",
			Message: rail + " is not available right now; retry shortly", Err: err}
	}
	switch plan.Funding {
	case domain.FundingLightning:
		if l.rails.Node == nil {
			return f, unavailable("the Lightning node", errNoAdapter)
		}
		inv, err := l.rails.Node.CreateInvoice(ctx, lightning.InvoiceRequest{PaymentID: id, AmountSats: q.AmountSats,
			Description: fmt.Sprintf("Payment %s to %s", id, plan.Merchant.Name), CreatedAt: now, Expiry: plan.Validity})
		if err != nil {
			return f, unavailable("the Lightning node", err)
		}
		f.Invoice = &domain.LightningInvoice{PaymentRequest: inv.PaymentRequest, PaymentHash: inv.PaymentHash,
			AmountSats: inv.AmountSats, ExpiresAt: inv.ExpiresAt}
	case domain.FundingUSDT:
		if l.rails.Deposits == nil {
			return f, unavailable("USDT deposits", errNoAdapter)
		}
		addr, err := l.rails.Deposits.DepositAddress(ctx, tenantID, id)
		if err != nil {
			return f, unavailable("USDT deposits", err)
		}
		f.USDTAddress = addr
	case domain.FundingBankTransfer:
		acct, ok := l.rails.Collections[plan.Order.FromCurrency]
		if !ok {
			return f, unavailable("collection in "+plan.Order.FromCurrency, nil)
		}
		f.Collection = acct
	case domain.FundingMomo:
		f.PayerMomoPhone = payer.DefaultMomoPhone()
	}
	return f, nil
}
