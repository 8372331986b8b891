package domain

import (
	"testing"

	"github.com/google/uuid"
)

func TestDecideCreateTenant(t *testing.T) {
	t.Parallel()
	valid := CreateTenant{TenantID: uuid.New(), OwnerUserID: uuid.New(), Name: " Acme ", OwnerEmail: " Owner@Acme.Example ",
		APIKey: "lk_1", SecretHash: "abc"}
	tests := []struct {
		name     string
		mutate   func(*CreateTenant)
		wantCode string
		wantName string
	}{
		{name: "valid, trimmed and lower-cased", mutate: func(*CreateTenant) {}, wantName: "Acme"},
		{name: "empty name", mutate: func(c *CreateTenant) { c.Name = "  " }, wantCode: "validation_failed"},
		{name: "bad email", mutate: func(c *CreateTenant) { c.OwnerEmail = "not-an-email" }, wantCode: "validation_failed"},
		{name: "display-name email", mutate: func(c *CreateTenant) { c.OwnerEmail = "Bob <bob@x.example>" }, wantCode: "validation_failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := valid
			tt.mutate(&c)
			tenant, owner, err := DecideCreateTenant(c)
			if tt.wantCode != "" {
				if e, ok := err.(*Error); !ok || e.Code != tt.wantCode || e.Kind != Invalid {
					t.Fatalf("got %v, want code %s", err, tt.wantCode)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			created := tenant[0].(TenantCreated)
			if created.Name != tt.wantName || created.OwnerEmail != "owner@acme.example" {
				t.Errorf("got %+v, want name %q and normalised email", created, tt.wantName)
			}
			if k := tenant[1].(APIKeyCreated); k.APIKey != "lk_1" || k.SecretHash != "abc" {
				t.Errorf("got %+v, want the key pair", k)
			}
			if u := owner[0].(UserCreated); u.Role != RoleAdmin || u.UserID != c.OwnerUserID {
				t.Errorf("got %+v, want the Admin owner", u)
			}
		})
	}
}

func TestRevokeAPIKey(t *testing.T) {
	t.Parallel()
	var tn Tenant
	for _, e := range []Event{TenantCreated{TenantID: uuid.New()}, APIKeyCreated{APIKey: "a"}, APIKeyCreated{APIKey: "b"}} {
		tn = ApplyTenant(tn, e)
	}
	tests := []struct {
		name       string
		state      Tenant
		key        string
		wantEvents int
		wantKind   Kind
	}{
		{name: "active key", state: tn, key: "a", wantEvents: 1},
		{name: "unknown key", state: tn, key: "zz", wantKind: NotFound},
		{name: "already revoked", state: ApplyTenant(tn, APIKeyRevoked{APIKey: "a"}), key: "a", wantEvents: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			events, err := DecideRevokeAPIKey(tt.state, tt.key)
			if tt.wantKind != Internal {
				if ErrorKind(err) != tt.wantKind {
					t.Fatalf("got %v, want kind %d", err, tt.wantKind)
				}
				return
			}
			if err != nil || len(events) != tt.wantEvents {
				t.Fatalf("got %v, %v; want %d events", events, err, tt.wantEvents)
			}
		})
	}
	if !tn.APIKeys["a"] {
		t.Error("applying a revocation to a copy changed the original state")
	}
}

func TestDecideCreateAPIKeyNeedsTenant(t *testing.T) {
	t.Parallel()
	if _, err := DecideCreateAPIKey(Tenant{}, "k", "h"); ErrorKind(err) != NotFound {
		t.Fatalf("got %v, want NotFound", err)
	}
}
