package httpapi

import (
	"context"
	"net/http"
	"strconv"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/ledger/ledger/domain"
)

// Users are the user and profile use cases (workers/usecase), which return
// the user after their events, and the users read model.
type Users interface {
	// CreateUser returns created false with the user that already has email.
	CreateUser(ctx context.Context, tenantID uuid.UUID, email, name string, meta domain.Metadata) (domain.UserSnapshot, bool, error)
	UpdateUser(ctx context.Context, ref domain.StreamRef, cmd domain.UpdateUser, meta domain.Metadata) (domain.UserSnapshot, error)
	DisableUser(ctx context.Context, ref domain.StreamRef, meta domain.Metadata) (domain.UserSnapshot, error)
	UploadKYCDocument(ctx context.Context, ref domain.StreamRef, cmd domain.UploadKYCDocument, meta domain.Metadata) (domain.UserSnapshot, error)
	UpdateProfile(ctx context.Context, ref domain.StreamRef, patch domain.ProfilePatch, meta domain.Metadata) (domain.UserSnapshot, error)
	AddMomoAccount(ctx context.Context, ref domain.StreamRef, cmd domain.AddMomoAccount, meta domain.Metadata) (domain.UserSnapshot, error)
	UpdateMomoAccount(ctx context.Context, ref domain.StreamRef, cmd domain.UpdateMomoAccount, meta domain.Metadata) (domain.UserSnapshot, error)
	RemoveMomoAccount(ctx context.Context, ref domain.StreamRef, accountID uuid.UUID, meta domain.Metadata) (domain.UserSnapshot, error)
	User(ctx context.Context, tenantID, userID uuid.UUID) (domain.UserSnapshot, error)
	ListUsers(ctx context.Context, tenantID uuid.UUID, status string, limit int, offset string) ([]domain.UserListItem, string, error)
	OwnerUserID(ctx context.Context, tenantID uuid.UUID) (uuid.UUID, error)
}

func userStream(tenantID, userID uuid.UUID) domain.StreamRef {
	return domain.StreamRef{TenantID: tenantID, Type: "user", ID: userID}
}

type createUserRequest struct {
	Email string `json:"email"`
	Name  string `json:"name"`
}

// createUser is POST /users: 201 with a new user, or 200 with the one that
// already has this email (compared trimmed and case-insensitively).
func (s *Server) createUser(w http.ResponseWriter, r *http.Request) error {
	c, err := tenantCaller(r)
	if err != nil {
		return err
	}
	var req createUserRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	u, created, err := s.users.CreateUser(r.Context(), c.TenantID, req.Email, req.Name, metadata(r))
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return writeJSON(w, status, userResponse(u))
}

// listUsers is GET /users?status=active|inactive&limit=&offset=.
func (s *Server) listUsers(w http.ResponseWriter, r *http.Request) error {
	c, err := tenantCaller(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	status := q.Get("status")
	switch status {
	case "", "active":
		status = domain.UserActive
	case "inactive":
		status = domain.UserInactive
	default:
		return domain.Invalidf("status", "must be active or inactive")
	}
	limit, err := pageLimit(q.Get("limit"))
	if err != nil {
		return err
	}
	items, next, err := s.users.ListUsers(r.Context(), c.TenantID, status, limit, q.Get("offset"))
	if err != nil {
		return err
	}
	body := page[userListItem]{Items: make([]userListItem, 0, len(items)), OffsetMarker: nullable(next)}
	for _, u := range items {
		body.Items = append(body.Items, userListItem{ID: u.RecordID.String(), UserID: u.UserID.String(), Email: u.Email,
			Name: u.Name, UserRole: u.Role, Status: u.Status, CreatedAt: timestamp(u.CreatedAt), UpdatedAt: timestamp(u.UpdatedAt)})
	}
	return writeJSON(w, http.StatusOK, body)
}

// pageLimit reads the limit query parameter: 1-100, default 100 (contract §1).
func pageLimit(s string) (int, error) {
	if s == "" {
		return 100, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 100 {
		return 0, domain.Invalidf("limit", "must be a whole number from 1 to 100")
	}
	return n, nil
}

// pathUser resolves {userId} for the caller: any user of a tenant token's
// tenant, or only its own user for a user token. Anything else is 404, so
// existence never leaks (contract §2).
func pathUser(r *http.Request) (Caller, uuid.UUID, error) {
	c, err := anyCaller(r)
	if err != nil {
		return c, uuid.Nil, err
	}
	id, err := uuid.Parse(mux.Vars(r)["userId"])
	if err != nil || (c.Kind == KindUser && id != c.UserID) {
		return c, uuid.Nil, domain.ErrNotFound
	}
	return c, id, nil
}

// getUser is GET /users/{userId}.
func (s *Server) getUser(w http.ResponseWriter, r *http.Request) error {
	c, id, err := pathUser(r)
	if err != nil {
		return err
	}
	u, err := s.activeUser(r.Context(), c.TenantID, id)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, userResponse(u))
}

// activeUser reads a user the API shows: an inactive one is 404, as an
// absent one is (contract §2).
func (s *Server) activeUser(ctx context.Context, tenantID, id uuid.UUID) (domain.UserSnapshot, error) {
	u, err := s.users.User(ctx, tenantID, id)
	if err == nil && u.Status != domain.UserActive {
		return domain.UserSnapshot{}, domain.ErrNotFound
	}
	return u, err
}

// updateUser is PATCH /users/{userId}: exactly the fields of contract §3.
func (s *Server) updateUser(w http.ResponseWriter, r *http.Request) error {
	c, id, err := pathUser(r)
	if err != nil {
		return err
	}
	var patch domain.UserPatch
	if err := decode(w, r, &patch); err != nil {
		return err
	}
	u, err := s.users.UpdateUser(r.Context(), userStream(c.TenantID, id), domain.UpdateUser{Patch: patch, ByTenant: c.Kind == KindTenant}, metadata(r))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, userResponse(u))
}

// disabledUser is the body of DELETE /users/{userId} (spec §4.2).
type disabledUser struct {
	ID        string `json:"id"`
	UserID    string `json:"userId"`
	Email     string `json:"email"`
	Name      string `json:"name"`
	Status    string `json:"status"`
	UpdatedAt string `json:"updatedAt"`
}

// disableUser is DELETE /users/{userId}: tenant token only; the owner
// cannot be disabled (400).
func (s *Server) disableUser(w http.ResponseWriter, r *http.Request) error {
	c, err := tenantCaller(r)
	if err != nil {
		return err
	}
	_, id, err := pathUser(r)
	if err != nil {
		return err
	}
	u, err := s.users.DisableUser(r.Context(), userStream(c.TenantID, id), metadata(r))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, disabledUser{ID: u.RecordID.String(), UserID: u.ID.String(), Email: u.Email,
		Name: u.Name, Status: u.Status, UpdatedAt: timestamp(u.UpdatedAt)})
}
