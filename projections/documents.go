package projections

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ledger/ledger/domain"
)

// chunkSize is the size of one document_chunks row: uploads and downloads
// hold at most one chunk in memory.
const chunkSize = 1 << 20

// PutDocument streams r into the document store as document d, in chunks,
// in a transaction of its own, and returns the stored size and SHA-256. It
// commits before the event that records the document: a document no event
// names is an orphan that is never listed nor served (0003_documents.sql).
// An error from r (a size limit, a broken upload) rolls the document back
// and is returned as is.
func (q *Reader) PutDocument(ctx context.Context, d domain.StoredDocument, r io.Reader) (int64, string, error) {
	return q.PutDocumentWithin(ctx, d, r, 0)
}

// PutDocumentWithin is PutDocument with a storage quota: the tenant's
// documents, this one included, may take at most quota bytes (0: no
// quota), else it returns errDocumentQuota and stores nothing. Orphans
// count: they take the space. The quota is checked before any byte is
// read, as the bytes come, and under a lock on the tenant until the
// commit, so that uploads in parallel cannot pass it together.
func (q *Reader) PutDocumentWithin(ctx context.Context, d domain.StoredDocument, r io.Reader, quota int64) (int64, string, error) {
	var size int64
	h := sha256.New()
	err := pgx.BeginFunc(ctx, q.pool, func(tx pgx.Tx) error {
		var used int64
		if quota > 0 {
			var err error
			if used, err = tenantDocumentBytes(ctx, tx, d.TenantID); err != nil {
				return err
			}
			if used >= quota {
				return errDocumentQuota(quota)
			}
		}
		if _, err := tx.Exec(ctx, `INSERT INTO documents (id, tenant_id, owner, content_type, size, sha256, file_name)
			VALUES ($1, $2, $3, $4, 0, '', $5)`, d.ID, d.TenantID, d.Owner, d.ContentType, d.FileName); err != nil {
			return fmt.Errorf("insert document: %w", err)
		}
		buf := make([]byte, chunkSize)
		for n := 0; ; n++ {
			k, rerr := io.ReadFull(r, buf)
			if k > 0 {
				h.Write(buf[:k])
				size += int64(k)
				if quota > 0 && used+size > quota {
					return errDocumentQuota(quota)
				}
				if _, err := tx.Exec(ctx, `INSERT INTO document_chunks (document_id, n, bytes) VALUES ($1, $2, $3)`,
					d.ID, n, buf[:k]); err != nil {
					return fmt.Errorf("insert document chunk: %w", err)
				}
			}
			if errors.Is(rerr, io.EOF) || errors.Is(rerr, io.ErrUnexpectedEOF) {
				break
			}
			if rerr != nil {
				return rerr
			}
		}
		if quota > 0 {
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('documents of ' || $1::text, 0))`, d.TenantID); err != nil {
				return fmt.Errorf("lock the tenant's documents: %w", err)
			}
			others, err := tenantDocumentBytes(ctx, tx, d.TenantID) // this one's row still says 0
			if err != nil {
				return err
			}
			if others+size > quota {
				return errDocumentQuota(quota)
			}
		}
		sum := hex.EncodeToString(h.Sum(nil))
		if _, err := tx.Exec(ctx, `UPDATE documents SET size = $2, sha256 = $3 WHERE id = $1`, d.ID, size, sum); err != nil {
			return fmt.Errorf("update document: %w", err)
		}
		return nil
	})
	if err != nil {
		return 0, "", err
	}
	return size, hex.EncodeToString(h.Sum(nil)), nil
}

// errDocumentQuota refuses a document that would take its tenant past
// its storage quota: 413, as the request is too large for what is left.
func errDocumentQuota(quota int64) error {
	return domain.Errorf(domain.TooLarge, "document_quota_exceeded",
		"this document would take the tenant's documents past their storage quota of %d bytes", quota)
}

// tenantDocumentBytes is the size of a tenant's stored documents.
func tenantDocumentBytes(ctx context.Context, tx pgx.Tx, tenantID uuid.UUID) (int64, error) {
	var used int64
	if err := tx.QueryRow(ctx, `SELECT coalesce(sum(size), 0) FROM documents WHERE tenant_id = $1`, tenantID).Scan(&used); err != nil {
		return 0, fmt.Errorf("sum the tenant's documents: %w", err)
	}
	return used, nil
}

// DeleteDocument removes a document whose event was refused. Orphans are
// harmless, so callers may ignore its error.
func (q *Reader) DeleteDocument(ctx context.Context, id uuid.UUID) error {
	_, err := q.pool.Exec(ctx, `DELETE FROM documents WHERE id = $1`, id)
	return err
}

// OpenDocument returns a document that a read model names (kyc_documents,
// payment_documents), and a reader of its bytes that
// fetches one chunk at a time. An orphan or unknown id is NotFound.
func (q *Reader) OpenDocument(ctx context.Context, id uuid.UUID) (domain.StoredDocument, io.Reader, error) {
	var d domain.StoredDocument
	err := q.pool.QueryRow(ctx, `SELECT d.id, d.tenant_id, d.owner, d.content_type, d.size, d.sha256, d.file_name, d.created_at
		FROM documents d WHERE d.id = $1 AND (EXISTS (SELECT 1 FROM kyc_documents k WHERE k.id = d.id)
			OR EXISTS (SELECT 1 FROM payment_documents p WHERE p.id = d.id))`, id).
		Scan(&d.ID, &d.TenantID, &d.Owner, &d.ContentType, &d.Size, &d.SHA256, &d.FileName, &d.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return d, nil, domain.ErrNotFound
	}
	if err != nil {
		return d, nil, fmt.Errorf("read document: %w", err)
	}
	d.CreatedAt = d.CreatedAt.UTC()
	return d, &chunkReader{ctx: ctx, q: q, id: id}, nil
}

// chunkReader reads a document's chunks in order, one query per chunk.
type chunkReader struct {
	ctx  context.Context
	q    *Reader
	id   uuid.UUID
	n    int
	buf  []byte
	done bool
}

func (c *chunkReader) Read(p []byte) (int, error) {
	for len(c.buf) == 0 {
		if c.done {
			return 0, io.EOF
		}
		err := c.q.pool.QueryRow(c.ctx, `SELECT bytes FROM document_chunks WHERE document_id = $1 AND n = $2`,
			c.id, c.n).Scan(&c.buf)
		if errors.Is(err, pgx.ErrNoRows) {
			c.done = true
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("read document chunk: %w", err)
		}
		c.n++
	}
	k := copy(p, c.buf)
	c.buf = c.buf[k:]
	return k, nil
}

// ListKYCDocuments returns a page of a user's KYC documents, newest first,
// after the position offset names, and the marker of the next page ("" on
// the last).
func (q *Reader) ListKYCDocuments(ctx context.Context, tenantID, userID uuid.UUID, limit int, offset string) ([]domain.KYCDocumentItem, string, error) {
	after, err := decodeMarker(offset, "kyc-documents", tenantID, userID.String())
	if err != nil {
		return nil, "", err
	}
	rows, err := q.pool.Query(ctx, `SELECT id, user_id, document_type, file_name, content_type, size, sha256, created_at
		FROM kyc_documents WHERE tenant_id = $1 AND user_id = $2 AND ($3::timestamptz IS NULL OR (created_at, id) < ($3, $4))
		ORDER BY created_at DESC, id DESC LIMIT $5`, tenantID, userID, after.at, after.id, limit+1)
	if err != nil {
		return nil, "", fmt.Errorf("list kyc documents: %w", err)
	}
	items, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (domain.KYCDocumentItem, error) {
		var d domain.KYCDocumentItem
		err := row.Scan(&d.ID, &d.UserID, &d.DocumentType, &d.FileName, &d.ContentType, &d.Size, &d.SHA256, &d.CreatedAt)
		d.CreatedAt = d.CreatedAt.UTC()
		return d, err
	})
	if err != nil || len(items) <= limit {
		return items, "", err
	}
	last := items[limit-1]
	return items[:limit], encodeMarker("kyc-documents", tenantID, userID.String(), last.CreatedAt, last.ID), nil
}
