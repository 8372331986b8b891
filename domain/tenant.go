package domain

import (
	"net/mail"
	"strings"

	"github.com/google/uuid"
)

// Tenant is a partner account. Its stream holds its creation and every
// credential change, so an auditor can see who could act for it and when.
type Tenant struct {
	ID          uuid.UUID
	Name        string
	OwnerUserID uuid.UUID
	APIKeys     map[string]bool // apiKey -> active
}

// Credential is an API key as the token endpoint checks it.
type Credential struct {
	APIKey     string
	TenantID   uuid.UUID
	SecretHash string // lowercase hex SHA-256 of the secret
	Revoked    bool
}

// TenantCreated opens a tenant's stream. The owner's email is personal
// data (contract §9); the tenant's name is published: it is the partner
// business's name, not a person's, and analytics group events by it.
type TenantCreated struct {
	TenantID    uuid.UUID `json:"tenantId"`
	Name        string    `json:"name"`
	OwnerUserID uuid.UUID `json:"ownerUserId"`
	OwnerEmail  string    `json:"ownerEmail" ledger:"personal"`
}

// APIKeyCreated records a new credential pair. Only the SHA-256 of the secret
// is kept; the secret itself is shown once to the operator and never stored.
type APIKeyCreated struct {
	APIKey     string `json:"apiKey"`
	SecretHash string `json:"secretHash" ledger:"secret"` // lowercase hex SHA-256 of the secret
}

// APIKeyRevoked records that a credential and every token it obtained stop working.
type APIKeyRevoked struct {
	APIKey string `json:"apiKey"`
}

func (TenantCreated) EventType() string { return "tenant.created" }
func (APIKeyCreated) EventType() string { return "tenant.api_key_created" }
func (APIKeyRevoked) EventType() string { return "tenant.api_key_revoked" }

var (
	_ = register(EventDef{Type: "tenant.created", Version: 1, New: func() Event { return new(TenantCreated) },
		Doc: "A tenant (partner account) was created with its owner user."})
	_ = register(EventDef{Type: "tenant.api_key_created", Version: 1, New: func() Event { return new(APIKeyCreated) },
		Doc: "An API key pair was issued to the tenant."})
	_ = register(EventDef{Type: "tenant.api_key_revoked", Version: 1, New: func() Event { return new(APIKeyRevoked) },
		Doc: "An API key was revoked; tokens obtained with it stop working at once."})
)

// ApplyTenant folds one event into t. It cannot fail: events are facts.
func ApplyTenant(t Tenant, e Event) Tenant {
	switch e := e.(type) {
	case TenantCreated:
		t.ID, t.Name, t.OwnerUserID = e.TenantID, e.Name, e.OwnerUserID
		t.APIKeys = map[string]bool{}
	case APIKeyCreated:
		t.APIKeys = cloneKeys(t.APIKeys)
		t.APIKeys[e.APIKey] = true
	case APIKeyRevoked:
		t.APIKeys = cloneKeys(t.APIKeys)
		t.APIKeys[e.APIKey] = false
	}
	return t
}

func cloneKeys(m map[string]bool) map[string]bool {
	c := make(map[string]bool, len(m)+1)
	for k, v := range m {
		c[k] = v
	}
	return c
}

// CreateTenant is the operator's command to open a partner account.
type CreateTenant struct {
	TenantID    uuid.UUID
	OwnerUserID uuid.UUID
	Name        string
	OwnerEmail  string
	APIKey      string
	SecretHash  string
}

// DecideCreateTenant returns the tenant's first events and its owner user's
// first event. Both streams must be new.
func DecideCreateTenant(c CreateTenant) (tenant []Event, owner []Event, err error) {
	name := strings.TrimSpace(c.Name)
	if name == "" || len(name) > 200 {
		return nil, nil, Invalidf("name", "must be 1-200 characters")
	}
	email, err := NormaliseEmail(c.OwnerEmail)
	if err != nil {
		return nil, nil, err
	}
	tenant = []Event{
		TenantCreated{TenantID: c.TenantID, Name: name, OwnerUserID: c.OwnerUserID, OwnerEmail: email},
		APIKeyCreated{APIKey: c.APIKey, SecretHash: c.SecretHash},
	}
	owner = []Event{UserCreated{UserID: c.OwnerUserID, Email: email, Name: name, Role: RoleAdmin}}
	return tenant, owner, nil
}

// DecideCreateAPIKey adds a credential pair to an existing tenant.
func DecideCreateAPIKey(t Tenant, apiKey, secretHash string) ([]Event, error) {
	if t.ID == uuid.Nil {
		return nil, Errorf(NotFound, "not_found", "tenant not found")
	}
	return []Event{APIKeyCreated{APIKey: apiKey, SecretHash: secretHash}}, nil
}

// DecideRevokeAPIKey revokes a key. Revoking a revoked key changes nothing.
func DecideRevokeAPIKey(t Tenant, apiKey string) ([]Event, error) {
	active, ok := t.APIKeys[apiKey]
	if !ok {
		return nil, Errorf(NotFound, "not_found", "api key not found")
	}
	if !active {
		return nil, nil
	}
	return []Event{APIKeyRevoked{APIKey: apiKey}}, nil
}

// NormaliseEmail trims and lower-cases an address and checks its syntax; the
// result is what uniqueness of a user's email is decided on.
func NormaliseEmail(s string) (string, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	a, err := mail.ParseAddress(s)
	if err != nil || a.Address != s || len(s) > 254 {
		return "", Invalidf("email", "must be a valid email address")
	}
	return s, nil
}
