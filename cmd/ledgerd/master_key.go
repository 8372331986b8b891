package main

import (
	"context"
	"log/slog"

	"github.com/ledger/ledger/eventstore/keys"
)

// masterKeys reads the master keys of LEDGER_MASTER_KEY_FILE. Without it
// (the sandbox: production refuses to start so) the master key is a file
// under LEDGER_DATA_DIR, made on the first start, and the log says so.
func masterKeys(cfg config, log *slog.Logger) (*keys.MasterKeys, error) {
	files := cfg.MasterKeyFiles
	if len(files) == 0 {
		path, created, err := keys.LocalMasterKeyFile(cfg.DataDir)
		if err != nil {
			return nil, err
		}
		log.Warn("sandbox: the stored signing and sealing keys are wrapped with a local master key; production needs LEDGER_MASTER_KEY_FILE",
			"file", path, "created", created)
		files = []string{path}
	}
	m, err := keys.ReadMasterKeyFiles(files...)
	if err != nil {
		return nil, err
	}
	log.Info("master keys", "wraps", m.ID(), "unwrap", m.IDs())
	return m, nil
}

// checkSigningKey reads the signing key at start, so that a master key
// that does not unwrap the stored keys stops ledgerd at once, and says
// when this instance is set for longer tokens than the key allows: it
// signs them for the key's lifetime (ledgerctl keys rotate
// --tenant-token-ttl/--user-token-ttl raises it).
func checkSigningKey(ctx context.Context, cfg config, signing *keys.SigningKeys, log *slog.Logger) error {
	key, err := signing.Signing(ctx)
	if err != nil {
		return err
	}
	if cfg.TenantTokenTTL > key.Lifetimes.Tenant || cfg.UserTokenTTL > key.Lifetimes.User {
		log.Warn("token lifetimes above the signing key's are capped at the key's", "kid", key.KID,
			"tenantTokenTTL", key.Lifetimes.Tenant.String(), "userTokenTTL", key.Lifetimes.User.String())
	}
	return nil
}
