package domain

import (
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
)

// UserSnapshot is a user's state with the facts of its stream: what the
// users read model keeps and what the API renders.
type UserSnapshot struct {
	User
	RecordID  uuid.UUID // the id of the user.created event: the list item's "id" (spec §2.2)
	Version   int
	CreatedAt time.Time
	UpdatedAt time.Time
}

// UserListItem is one row of GET /users (spec §2.2).
type UserListItem struct {
	RecordID  uuid.UUID
	UserID    uuid.UUID
	Email     string
	Name      string
	Role      string
	Status    string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// MerchantSnapshot is a merchant's state with the facts of its stream: what
// the merchants read model keeps and what the API renders.
type MerchantSnapshot struct {
	Merchant
	TenantID  uuid.UUID
	Version   int
	CreatedAt time.Time
	UpdatedAt time.Time
}

// PaymentSnapshot is a payment's state with the facts of its stream: what
// the payments read model keeps and what the API renders.
type PaymentSnapshot struct {
	Payment
	Version   int
	UpdatedAt time.Time
}

// PaymentFilter narrows GET /payments: zero values match everything.
type PaymentFilter struct {
	UserID        uuid.UUID // a user token's own payments
	Status        string
	MerchantID    uuid.UUID
	CreatedFrom   time.Time // created at or after (the dashboard's date filter)
	CreatedBefore time.Time // created before
}

// PaymentDocumentItem is one row of GET /payments/{id}/documents.
type PaymentDocumentItem struct {
	ID          uuid.UUID
	PaymentID   uuid.UUID
	FileName    string
	ContentType string
	Size        int64
	SHA256      string
	CreatedAt   time.Time
}

// WebhookAttemptItem is one row of GET /payments/{id}/webhooks (contract §8).
type WebhookAttemptItem struct {
	EventID    uuid.UUID
	Type       string
	Attempt    int
	At         time.Time
	StatusCode *int
	DurationMs int64
	Error      *string
}

// AccountBalance is one account's totals in one currency (the trial balance).
type AccountBalance struct {
	Account  string
	Currency string
	Debits   decimal.Decimal
	Credits  decimal.Decimal
}

// DashboardAccount is a dashboard user as the sign-in reads it.
type DashboardAccount struct {
	ID           uuid.UUID
	TenantID     uuid.UUID
	Email        string
	PasswordHash string // empty until the set-password link is used
}

// DashboardSession is an open dashboard session: whose, and until when.
type DashboardSession struct {
	UserID    uuid.UUID
	TenantID  uuid.UUID
	Email     string
	ExpiresAt time.Time
}

// APIKeyItem is one of a tenant's API keys as the dashboard lists it.
type APIKeyItem struct {
	APIKey     string
	CreatedAt  time.Time
	LastUsedAt *time.Time // when it last obtained a token; nil: never
	RevokedAt  *time.Time
}
