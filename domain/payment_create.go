package domain

import (
	"crypto/sha256"
	"encoding/base32"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
)

// PaymentFunding is what the rails produced for a plan: a Lightning
// invoice, a USDT deposit address, or the collection account a bank
// transfer goes to. The one the plan's funding rail uses is set.
type PaymentFunding struct {
	Invoice        *LightningInvoice
	USDTAddress    string
	Collection     CollectionAccount
	PayerMomoPhone string // the payer's default momo number, for a push
}

// CollectionAccount is one of our bank accounts that takes deposits in a currency.
type CollectionAccount struct {
	Name   string
	Number string
}

// CreatePayment is POST /payments once planned, priced and funded.
type CreatePayment struct {
	PaymentID uuid.UUID // a new UUIDv7 for a new stream
	UserID    uuid.UUID // whose payment
	Plan      PaymentPlan
	Quote     Quote
	Funding   PaymentFunding
	Now       time.Time
}

// DepositReference is the reference a bank transfer must quote exactly:
// "LDG" and 12 base32 characters of the payment id's SHA-256, letters and
// digits only so every bank carries it unchanged.
func DepositReference(paymentID uuid.UUID) string {
	sum := sha256.Sum256(paymentID[:])
	return "LDG" + base32.StdEncoding.EncodeToString(sum[:])[:12]
}

// DecideCreatePayment returns the payment.created of c: status created,
// amountDeposited 0, the quote's figures, and the funding details of the
// plan's rail (spec §2.9). A USDT payment's converted value is checked
// against the merchant's limit here, once it is known. p must be empty.
func DecideCreatePayment(p Payment, c CreatePayment) ([]Event, error) {
	if p.ID != uuid.Nil || c.PaymentID == uuid.Nil {
		return nil, Errorf(Internal, "bad_payment_id", "payment id %s is not new", c.PaymentID)
	}
	plan, o, m, q := c.Plan, c.Plan.Order, c.Plan.Merchant, c.Quote
	if plan.Funding == FundingUSDT {
		if err := plan.Limit.CheckDecimal(q.DestinationAmount); err != nil {
			return nil, err
		}
	}
	now := c.Now.UTC().Truncate(time.Millisecond)
	expires := now.Add(plan.Validity)
	pay := Payment{ID: c.PaymentID, UserID: c.UserID, MerchantID: m.ID, Amount: o.Amount, Reference: o.Reference,
		Tag: o.Tag, Type: o.Type, FromCountry: o.FromCountry, FromCurrency: o.FromCurrency,
		DestinationCountry: m.Country, DestinationCurrency: m.Currency, PayoutMethod: m.PayoutMethod,
		PaymentType: plan.PaymentType, Funding: plan.Funding, IsSlowPayment: o.IsSlowPayment,
		IsInstantPayment: plan.IsInstant, BufferRate: o.BufferRate, WebhookURL: o.WebhookURL,
		WebhookSecret: o.WebhookSecret, Meta: o.Meta, Status: StatusCreated,
		AmountDeposited: decimal.Zero, BTCPrice: q.BTCPrice, OTCFees: q.OTCFees, BufferAmountSats: q.BufferAmountSats,
		RecipientDetails: RecipientDetails{Name: m.Name, Country: m.Country, Currency: m.Currency,
			PayoutMethod: m.PayoutMethod, BankName: m.BankName, AccountNumber: m.AccountNumber,
			PhoneNumber: m.PhoneNumber, LNURL: m.LNURL},
		DestinationAmount: q.DestinationAmount, ValidityDuration: int64(plan.Validity / time.Second), ExpiresAt: expires, CreatedAt: now, UpdatedAt: now}
	expiry := expires.Format(TimeFormat)
	var deposit any
	switch plan.Funding {
	case FundingLightning:
		inv := c.Funding.Invoice
		if inv == nil || inv.AmountSats != q.AmountSats {
			return nil, Errorf(Internal, "bad_invoice", "the invoice does not match the quote")
		}
		pay.LightningInvoice = inv
		sats := q.AmountSats
		pay.AmountSats = &sats
		pay.DepositDue, pay.DepositCurrency = decimal.NewFromInt(sats), "sats"
		pay.StatusLog = fmt.Sprintf("Awaiting payment of the Lightning invoice for %s", FormatAmount(pay.DepositDue, "sats"))
	case FundingBankTransfer:
		ref := DepositReference(c.PaymentID)
		pay.DepositDue, pay.DepositCurrency = decimal.New(q.SourceAmountMinor, -2), o.FromCurrency
		deposit = BankDeposit{AccountName: c.Funding.Collection.Name, AccountNumber: c.Funding.Collection.Number,
			Reference: ref, Amount: q.SourceAmountMinor, Currency: o.FromCurrency}
		pay.StatusLog = fmt.Sprintf("Awaiting a bank transfer of %s quoting the reference %s exactly",
			FormatAmount(pay.DepositDue, pay.DepositCurrency), ref)
	case FundingMomo:
		whole := (q.SourceAmountMinor + 99) / 100
		pay.DepositDue, pay.DepositCurrency = decimal.NewFromInt(whole), o.FromCurrency
		deposit = PushDeposit{Amount: whole, Currency: o.FromCurrency, Expiry: expiry,
			Instructions: fmt.Sprintf("Approve the M-Pesa prompt sent to %s to pay KES %d before %s",
				MaskPhone(c.Funding.PayerMomoPhone), whole, expiry)}
		pay.StatusLog = "Awaiting approval of the M-Pesa prompt"
	case FundingUSDT:
		pay.DepositDue, pay.DepositCurrency = decimal.New(q.SourceAmountMinor, -2), "USDT"
		deposit = USDTDeposit{Network: "ethereum", Token: "USDT", Standard: "ERC-20", Address: c.Funding.USDTAddress,
			Amount: q.SourceAmountMinor, Expiry: expiry}
		pay.StatusLog = fmt.Sprintf("Awaiting %s (ERC-20 on Ethereum only) at %s", FormatAmount(pay.DepositDue, pay.DepositCurrency),
			c.Funding.USDTAddress)
	default:
		return nil, Errorf(Internal, "bad_funding", "unknown funding rail %q", plan.Funding)
	}
	if deposit != nil {
		raw, err := json.Marshal(deposit)
		if err != nil {
			return nil, fmt.Errorf("encode deposit details: %w", err)
		}
		pay.DepositDetails = raw
	}
	pay.StatusLogs = []StatusLogEntry{{Status: StatusCreated, Message: pay.StatusLog, At: now}}
	return []Event{PaymentCreated{Payment: pay}}, nil
}

// MaskPhone keeps a phone number's country code and last three digits, so
// instructions say which phone without publishing the number.
func MaskPhone(e164 string) string {
	if len(e164) < 8 {
		return "your phone"
	}
	return e164[:4] + " *** *** " + e164[len(e164)-3:]
}
