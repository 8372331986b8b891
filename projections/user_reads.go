package projections

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ledger/ledger/domain"
)

// User reads a user of tenantID with its momo accounts, or NotFound.
func (q *Reader) User(ctx context.Context, tenantID, userID uuid.UUID) (domain.UserSnapshot, error) {
	var u domain.UserSnapshot
	var details []byte
	err := q.pool.QueryRow(ctx, `SELECT id, record_id, email, name, role, status, is_verified, details, company_name,
		phone_number, default_momo_account_id, version, created_at, updated_at FROM users WHERE id = $1 AND tenant_id = $2`,
		userID, tenantID).Scan(&u.ID, &u.RecordID, &u.Email, &u.Name, &u.Role, &u.Status, &u.IsVerified, &details,
		&u.CompanyName, &u.PhoneNumber, &u.DefaultMomoAccountID, &u.Version, &u.CreatedAt, &u.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return u, domain.ErrNotFound
	}
	if err != nil {
		return u, fmt.Errorf("read user: %w", err)
	}
	if err := json.Unmarshal(details, &u.UserDetails); err != nil {
		return u, fmt.Errorf("decode user details: %w", err)
	}
	rows, err := q.pool.Query(ctx, `SELECT id, label, phone_number, mobile_network, country_code FROM momo_accounts
		WHERE user_id = $1 ORDER BY added_version`, userID)
	if err != nil {
		return u, fmt.Errorf("read momo accounts: %w", err)
	}
	u.MomoAccounts, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (domain.MomoAccount, error) {
		var a domain.MomoAccount
		err := row.Scan(&a.ID, &a.Label, &a.PhoneNumber, &a.MobileNetwork, &a.CountryCode)
		return a, err
	})
	if err != nil {
		return u, fmt.Errorf("read momo accounts: %w", err)
	}
	u.CreatedAt, u.UpdatedAt = u.CreatedAt.UTC(), u.UpdatedAt.UTC()
	return u, nil
}

// UserIDByEmail returns the user of tenantID with a normalised email, or NotFound.
func (q *Reader) UserIDByEmail(ctx context.Context, tenantID uuid.UUID, email string) (uuid.UUID, error) {
	var id uuid.UUID
	err := q.pool.QueryRow(ctx, `SELECT id FROM users WHERE tenant_id = $1 AND email = $2`, tenantID, email).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return id, domain.ErrNotFound
	}
	return id, err
}

// ListUsers returns a page of a tenant's users with status, newest first,
// after the position offset names (empty: the first page), and the marker
// of the next page ("" on the last).
func (q *Reader) ListUsers(ctx context.Context, tenantID uuid.UUID, status string, limit int, offset string) ([]domain.UserListItem, string, error) {
	after, err := decodeMarker(offset, "users", tenantID, status)
	if err != nil {
		return nil, "", err
	}
	rows, err := q.pool.Query(ctx, `SELECT record_id, id, email, name, role, status, created_at, updated_at FROM users
		WHERE tenant_id = $1 AND status = $2 AND ($3::timestamptz IS NULL OR (created_at, id) < ($3, $4))
		ORDER BY created_at DESC, id DESC LIMIT $5`, tenantID, status, after.at, after.id, limit+1)
	if err != nil {
		return nil, "", fmt.Errorf("list users: %w", err)
	}
	items, err := pgx.CollectRows(rows, scanUserListItem)
	if err != nil || len(items) <= limit {
		return items, "", err
	}
	last := items[limit-1]
	return items[:limit], encodeMarker("users", tenantID, status, last.CreatedAt, last.UserID), nil
}

// marker is a keyset position: the last row of the previous page.
type marker struct {
	at *time.Time
	id uuid.UUID
}

// encodeMarker writes an opaque offsetMarker. It names its list, tenant and
// filter, so a marker of another list or tenant is refused instead of
// silently paging something else.
func encodeMarker(list string, tenantID uuid.UUID, filter string, at time.Time, id uuid.UUID) string {
	raw := strings.Join([]string{list, tenantID.String(), filter, at.UTC().Format(time.RFC3339Nano), id.String()}, "|")
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

var errBadMarker = domain.Invalidf("offset", "is not an offsetMarker of this list")

func decodeMarker(s, list string, tenantID uuid.UUID, filter string) (marker, error) {
	if s == "" {
		return marker{}, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return marker{}, errBadMarker
	}
	parts := strings.Split(string(raw), "|")
	if len(parts) != 5 || parts[0] != list || parts[1] != tenantID.String() || parts[2] != filter {
		return marker{}, errBadMarker
	}
	at, err := time.Parse(time.RFC3339Nano, parts[3])
	if err != nil {
		return marker{}, errBadMarker
	}
	id, err := uuid.Parse(parts[4])
	// Only a marker exactly as encodeMarker wrote it: another spelling (a
	// time with an offset, an upper-case id) was never issued.
	if err != nil || encodeMarker(list, tenantID, filter, at, id) != s {
		return marker{}, errBadMarker
	}
	return marker{at: &at, id: id}, nil
}

// SearchUsers returns a page of a tenant's users whose email or name
// contains query (case-insensitively; every user when empty), newest
// first, and the next page's marker ("" on the last). Disabled users are
// listed too: compliance staff look them up.
func (q *Reader) SearchUsers(ctx context.Context, tenantID uuid.UUID, query string, limit int, offset string) ([]domain.UserListItem, string, error) {
	sum := sha256.Sum256([]byte(query)) // the marker's filter: the query may hold any character
	filter := hex.EncodeToString(sum[:8])
	after, err := decodeMarker(offset, "user-search", tenantID, filter)
	if err != nil {
		return nil, "", err
	}
	pattern := "%" + strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`).Replace(query) + "%"
	rows, err := q.pool.Query(ctx, `SELECT record_id, id, email, name, role, status, created_at, updated_at FROM users
		WHERE tenant_id = $1 AND (email ILIKE $2 OR name ILIKE $2) AND ($3::timestamptz IS NULL OR (created_at, id) < ($3, $4))
		ORDER BY created_at DESC, id DESC LIMIT $5`, tenantID, pattern, after.at, after.id, limit+1)
	if err != nil {
		return nil, "", fmt.Errorf("search users: %w", err)
	}
	items, err := pgx.CollectRows(rows, scanUserListItem)
	if err != nil || len(items) <= limit {
		return items, "", err
	}
	last := items[limit-1]
	return items[:limit], encodeMarker("user-search", tenantID, filter, last.CreatedAt, last.UserID), nil
}

// scanUserListItem reads the columns record_id, id, email, name, role,
// status, created_at, updated_at.
func scanUserListItem(row pgx.CollectableRow) (domain.UserListItem, error) {
	var u domain.UserListItem
	err := row.Scan(&u.RecordID, &u.UserID, &u.Email, &u.Name, &u.Role, &u.Status, &u.CreatedAt, &u.UpdatedAt)
	u.CreatedAt, u.UpdatedAt = u.CreatedAt.UTC(), u.UpdatedAt.UTC()
	return u, err
}
