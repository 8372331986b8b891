package main

import (
	"context"

	"github.com/ledger/ledger/eventstore/keys"
	"github.com/ledger/ledger/httpapi"
)

// signingKeys plugs the shared key store into the API's SigningKeys.
type signingKeys struct{ keys *keys.SigningKeys }

func (k signingKeys) CurrentSigningKey(ctx context.Context) (httpapi.SigningKey, error) {
	key, err := k.keys.Signing(ctx)
	return apiSigningKey(key), err
}

func (k signingKeys) SigningKey(ctx context.Context, kid string) (httpapi.SigningKey, error) {
	key, err := k.keys.Verifying(ctx, kid)
	return apiSigningKey(key), err
}

func apiSigningKey(k keys.SigningKey) httpapi.SigningKey {
	return httpapi.SigningKey{ID: k.KID, Secret: k.Secret, RetiredAt: k.RetiredAt,
		TenantTokenTTL: k.Lifetimes.Tenant, UserTokenTTL: k.Lifetimes.User}
}
