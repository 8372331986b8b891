package domain

import (
	"time"
)

// Validity is how long a payment waits for its funding, per rail (contract
// §6, LEDGER_VALIDITY).
type Validity struct {
	Lightning time.Duration // 600 s
	Slow      time.Duration // isSlowPayment: 24 h
	Momo      time.Duration // 180 s
	Bank      time.Duration // 72 h
	USDT      time.Duration // 1 h
}

// DefaultValidity is contract §6's.
var DefaultValidity = Validity{Lightning: 600 * time.Second, Slow: 24 * time.Hour, Momo: 180 * time.Second,
	Bank: 72 * time.Hour, USDT: time.Hour}

// PaymentPlan is a valid order routed to its merchant: how it is funded,
// its routing type and how long it waits.
type PaymentPlan struct {
	Order       PaymentOrder
	Merchant    Merchant
	Funding     string
	PaymentType string
	IsInstant   bool
	Validity    time.Duration
	Limit       AmountLimit
}

// Payment types (paymentType): the routing table of PlanPayment.
const (
	TypeWrappedInterbank = "WRAPPED_INTERBANK_PAYMENT" // Lightning in, bank payout
	TypeWrappedMomo      = "WRAPPED_MOBILE_MONEY_PAYMENT"
	TypeOnramp           = "ONRAMP"                  // fiat bank transfer in, Lightning payout
	TypeFiatInterbank    = "FIAT_INTERBANK_PAYMENT"  // fiat bank transfer in, bank payout in another country
	TypeMomoCollection   = "MOMO_COLLECTION_PAYMENT" // Kenyan momo push in, bank or momo payout
	TypeStablecoinFiat   = "STABLECOIN_OFFRAMP"      // USDT in, bank or momo payout
	TypeStablecoinLN     = "STABLECOIN_TO_LIGHTNING" // USDT in, Lightning payout
)

// PlanPayment routes an order to merchant m (contract §6) and checks the
// rules that need the merchant:
//
//	fromCurrency        collection     merchant                        paymentType                   funding
//	BTC                 -              ZAR, KES, NGN bank              WRAPPED_INTERBANK_PAYMENT     LIGHTNING
//	BTC                 -              KES momo                        WRAPPED_MOBILE_MONEY_PAYMENT  LIGHTNING
//	EUR, GBP, NGN       -              BTC                             ONRAMP                        BANK_TRANSFER
//	NGN, GBP, EUR, KES  BANK_TRANSFER  bank merchant of another country FIAT_INTERBANK_PAYMENT       BANK_TRANSFER
//	KES                 MOMO           ZAR, KES, NGN (bank or momo)    MOMO_COLLECTION_PAYMENT       MOMO
//	USDT                -              ZAR, KES, NGN                   STABLECOIN_OFFRAMP            USDT
//	USDT                -              BTC                             STABLECOIN_TO_LIGHTNING       USDT
//
// Anything else is 400 unsupported_corridor. reference is required for a
// South African merchant; MOMO collection needs the payer's default momo
// account; amount must be within the merchant's corridor limit at now
// (USDT amounts are in USDT cents, so DecideCreatePayment checks their
// converted value instead). Lightning and momo pushes settle in seconds:
// isInstantPayment; bank transfers and USDT do not.
func PlanPayment(o PaymentOrder, m Merchant, payer User, v Validity, now time.Time, loc *time.Location) (PaymentPlan, error) {
	plan := PaymentPlan{Order: o, Merchant: m}
	var fe fieldErrors
	if m.Country == CountrySouthAfrica && o.Reference == "" {
		fe.add("reference", "is required for South African merchants")
	}
	if err := fe.err(); err != nil {
		return plan, err
	}
	fiatMerchant := m.Country != CountryBTC
	switch {
	case o.FromCurrency == "BTC" && fiatMerchant:
		plan.Funding, plan.PaymentType, plan.IsInstant, plan.Validity = FundingLightning, TypeWrappedInterbank, true, v.Lightning
		if m.PayoutMethod == PayoutMomo {
			plan.PaymentType = TypeWrappedMomo
		}
		if o.IsSlowPayment {
			plan.Validity = v.Slow
		}
	case o.FromCurrency == "KES" && o.CollectionMethod == CollectMomo && fiatMerchant:
		plan.Funding, plan.PaymentType, plan.IsInstant, plan.Validity = FundingMomo, TypeMomoCollection, true, v.Momo
		if payer.DefaultMomoAccountID == nil {
			return plan, &Error{Kind: Invalid, Code: "no_default_momo_account",
				Message: "Kenyan MOMO collection needs a default momo account on the payer's profile (POST /profile/momo), or meta.collectionMethod BANK_TRANSFER",
				Fields:  []FieldError{{Field: "meta.collectionMethod", Message: "MOMO needs a default momo account on the profile"}}}
		}
	case (o.FromCurrency == "EUR" || o.FromCurrency == "GBP" || o.FromCurrency == "NGN") && !fiatMerchant:
		plan.Funding, plan.PaymentType, plan.Validity = FundingBankTransfer, TypeOnramp, v.Bank
	case o.FromCurrency != "BTC" && o.FromCurrency != "USDT" && fiatMerchant && m.PayoutMethod == PayoutBank &&
		o.FromCurrency != m.Currency:
		plan.Funding, plan.PaymentType, plan.Validity = FundingBankTransfer, TypeFiatInterbank, v.Bank
	case o.FromCurrency == "USDT":
		plan.Funding, plan.PaymentType, plan.Validity = FundingUSDT, TypeStablecoinFiat, v.USDT
		if !fiatMerchant {
			plan.PaymentType = TypeStablecoinLN
		}
	default:
		return plan, &Error{Kind: Invalid, Code: "unsupported_corridor",
			Message: "payments from " + o.FromCountry + " to a " + m.Country + " " + m.PayoutMethod +
				" merchant are not supported; see the corridors in the API documentation"}
	}
	plan.Limit = PaymentAmountLimit(m.Country, m.PayoutMethod, now, loc)
	if plan.Funding != FundingUSDT {
		if err := plan.Limit.Check(o.Amount); err != nil {
			return plan, err
		}
	}
	return plan, nil
}
