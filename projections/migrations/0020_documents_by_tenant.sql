-- A tenant's document storage quota sums the sizes of its documents at
-- every upload (PutDocumentWithin): an index-only scan of its own rows.
CREATE INDEX documents_tenant ON documents (tenant_id) INCLUDE (size);
