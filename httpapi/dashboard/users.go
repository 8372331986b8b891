package dashboard

import (
	"net/http"
	"strings"

	"github.com/google/uuid"

	"github.com/ledger/ledger/domain"
)

type usersView struct {
	Query string
	Items []domain.UserListItem
	Next  string
}

// usersPage is GET /dashboard/users?q=&offset=: the tenant's users whose
// email or name contains q, newest first.
func (d *Dashboard) usersPage(w http.ResponseWriter, r *http.Request) error {
	v := viewerFrom(r.Context())
	query := strings.TrimSpace(r.URL.Query().Get("q"))
	if len(query) > 200 {
		return domain.Invalidf("q", "Search for at most 200 characters.")
	}
	items, next, err := d.Users.SearchUsers(r.Context(), v.TenantID, query, pageSize, r.URL.Query().Get("offset"))
	if err != nil {
		return err
	}
	d.render(w, r, http.StatusOK, "users", "Users", usersView{Query: query, Items: items, Next: nextPage(r, next)})
	return nil
}

type userView struct {
	domain.UserSnapshot
	Documents []domain.KYCDocumentItem
	Links     map[uuid.UUID]string // document id -> presigned download link
	Events    []domain.Record
}

// userPage is GET /dashboard/users/{userId}: KYC fields, documents, status
// and the user's event history. Disabled users are shown (with their
// status): compliance staff need them.
func (d *Dashboard) userPage(w http.ResponseWriter, r *http.Request) error {
	v := viewerFrom(r.Context())
	id, err := pathID(r, "userId")
	if err != nil {
		return err
	}
	ctx := r.Context()
	u, err := d.Users.User(ctx, v.TenantID, id)
	if err != nil {
		return notFoundAsPage(err)
	}
	view := userView{UserSnapshot: u}
	if view.Documents, _, err = d.Users.ListKYCDocuments(ctx, v.TenantID, id, 100, ""); err != nil {
		return err
	}
	if view.Links, err = documentLinks(d, r, view.Documents, func(doc domain.KYCDocumentItem) uuid.UUID { return doc.ID }); err != nil {
		return err
	}
	if view.Events, err = d.Events.StreamHistory(ctx, domain.StreamRef{TenantID: v.TenantID, Type: "user", ID: id}); err != nil {
		return err
	}
	title := u.Name
	if title == "" {
		title = u.Email
	}
	d.render(w, r, http.StatusOK, "user", title, view)
	return nil
}
