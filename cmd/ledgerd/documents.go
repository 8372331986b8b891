package main

import (
	"context"
	"io"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/projections"
)

// documentStore is the document store with the tenants' storage quota
// (LEDGER_TENANT_DOCUMENT_QUOTA), for httpapi.Documents.
type documentStore struct {
	*projections.Reader
	quota int64 // bytes; 0: none
}

// PutDocument stores d unless its tenant's documents would pass the quota.
func (s documentStore) PutDocument(ctx context.Context, d domain.StoredDocument, r io.Reader) (int64, string, error) {
	return s.PutDocumentWithin(ctx, d, r, s.quota)
}
