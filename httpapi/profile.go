package httpapi

import (
	"context"
	"net/http"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/ledger/ledger/domain"
)

// profileBody is the Profile of spec §2.6: the token holder's user.
type profileBody struct {
	ID                   string        `json:"id"`
	Email                string        `json:"email"`
	Name                 string        `json:"name"`
	CompanyName          *string       `json:"companyName"`
	Sector               *string       `json:"sector"`
	FirstName            *string       `json:"firstName"`
	PhoneNumber          *string       `json:"phoneNumber"`
	Address              *addressBody  `json:"address"`
	IsVerified           bool          `json:"isVerified"`
	DefaultMomoAccountID *string       `json:"defaultMomoAccountId"`
	MomoAccounts         []momoAccount `json:"momoAccounts"`
	CreatedAt            string        `json:"createdAt"`
	UpdatedAt            string        `json:"updatedAt"`
}

// momoAccount is spec §2.7; the default is named by the profile, not here.
type momoAccount struct {
	ID            string  `json:"id"`
	Label         *string `json:"label"`
	PhoneNumber   string  `json:"phoneNumber"`
	MobileNetwork string  `json:"mobileNetwork"`
	CountryCode   string  `json:"countryCode"`
}

func profileResponse(u domain.UserSnapshot) profileBody {
	b := profileBody{ID: u.ID.String(), Email: u.Email, Name: u.Name, CompanyName: nullable(u.CompanyName),
		Sector: nullable(u.Sector), FirstName: nullable(u.FirstName), PhoneNumber: nullable(u.PhoneNumber),
		Address: addressResponse(u.Address), IsVerified: u.IsVerified, MomoAccounts: []momoAccount{},
		CreatedAt: timestamp(u.CreatedAt), UpdatedAt: timestamp(u.UpdatedAt)}
	if u.DefaultMomoAccountID != nil {
		b.DefaultMomoAccountID = nullable(u.DefaultMomoAccountID.String())
	}
	for _, a := range u.MomoAccounts {
		b.MomoAccounts = append(b.MomoAccounts, momoAccount{ID: a.ID.String(), Label: nullable(a.Label),
			PhoneNumber: a.PhoneNumber, MobileNetwork: a.MobileNetwork, CountryCode: a.CountryCode})
	}
	return b
}

// profileUser is the user the profile endpoints act on: the user of a user
// token, or the tenant's owner for a tenant token (contract §2).
func (s *Server) profileUser(r *http.Request) (domain.StreamRef, error) {
	c, err := anyCaller(r)
	if err != nil {
		return domain.StreamRef{}, err
	}
	if c.Kind == KindUser {
		return userStream(c.TenantID, c.UserID), nil
	}
	owner, err := s.users.OwnerUserID(r.Context(), c.TenantID)
	if err != nil {
		return domain.StreamRef{}, err
	}
	return userStream(c.TenantID, owner), nil
}

// getProfile is GET /profile.
func (s *Server) getProfile(w http.ResponseWriter, r *http.Request) error {
	ref, err := s.profileUser(r)
	if err != nil {
		return err
	}
	u, err := s.activeUser(r.Context(), ref.TenantID, ref.ID)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, profileResponse(u))
}

// changeProfile runs one profile command, the use case command with
// argument arg, on the caller's profile user and answers with the whole
// profile.
func changeProfile[A any](s *Server, w http.ResponseWriter, r *http.Request, status int,
	command func(context.Context, domain.StreamRef, A, domain.Metadata) (domain.UserSnapshot, error), arg A) error {
	ref, err := s.profileUser(r)
	if err != nil {
		return err
	}
	u, err := command(r.Context(), ref, arg, metadata(r))
	if err != nil {
		return err
	}
	return writeJSON(w, status, profileResponse(u))
}

// updateProfile is PATCH /profile: only name, companyName, sector,
// firstName, phoneNumber and address; any other field is 400 naming it.
func (s *Server) updateProfile(w http.ResponseWriter, r *http.Request) error {
	var patch domain.ProfilePatch
	if err := decode(w, r, &patch); err != nil {
		return err
	}
	return changeProfile(s, w, r, http.StatusOK, s.users.UpdateProfile, patch)
}

// addMomoAccount is POST /profile/momo: 201 with the whole profile.
func (s *Server) addMomoAccount(w http.ResponseWriter, r *http.Request) error {
	var cmd domain.AddMomoAccount
	if err := decode(w, r, &cmd); err != nil {
		return err
	}
	return changeProfile(s, w, r, http.StatusCreated, s.users.AddMomoAccount, cmd)
}

// momoID reads {id}; an id that is not a UUID names no account (404).
func momoID(r *http.Request) (uuid.UUID, error) {
	id, err := uuid.Parse(mux.Vars(r)["id"])
	if err != nil {
		return uuid.Nil, domain.ErrNotFound
	}
	return id, nil
}

// updateMomoAccount is PATCH /profile/momo/{id}: label, phoneNumber, isDefault.
func (s *Server) updateMomoAccount(w http.ResponseWriter, r *http.Request) error {
	id, err := momoID(r)
	if err != nil {
		return err
	}
	var patch domain.MomoPatch
	if err := decode(w, r, &patch); err != nil {
		return err
	}
	return changeProfile(s, w, r, http.StatusOK, s.users.UpdateMomoAccount, domain.UpdateMomoAccount{AccountID: id, Patch: patch})
}

// removeMomoAccount is DELETE /profile/momo/{id}.
func (s *Server) removeMomoAccount(w http.ResponseWriter, r *http.Request) error {
	id, err := momoID(r)
	if err != nil {
		return err
	}
	return changeProfile(s, w, r, http.StatusOK, s.users.RemoveMomoAccount, id)
}
