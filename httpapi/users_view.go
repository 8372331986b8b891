package httpapi

import (
	"time"

	"github.com/ledger/ledger/domain"
)

// userBody is the User of spec §2.1 plus name, status, userRole and
// isVerified (contract §3). Unfilled fields are null; nationality and
// businessPersons are [] until set.
type userBody struct {
	UserID           string               `json:"userId"`
	Email            string               `json:"email"`
	Name             string               `json:"name"`
	Status           string               `json:"status"`
	UserRole         string               `json:"userRole"`
	IsVerified       bool                 `json:"isVerified"`
	EntityType       *string              `json:"entityType"`
	FirstName        *string              `json:"firstName"`
	MiddleName       *string              `json:"middleName"`
	LastName         *string              `json:"lastName"`
	DOB              *string              `json:"dob"`
	Nationality      []string             `json:"nationality"`
	BirthCountry     *string              `json:"birthCountry"`
	Address          *addressBody         `json:"address"`
	IDDocumentType   *string              `json:"idDocumentType"`
	IDDocumentNumber *string              `json:"idDocumentNumber"`
	Sector           *string              `json:"sector"`
	Business         *businessBody        `json:"business"`
	BusinessPersons  []businessPersonBody `json:"businessPersons"`
	CreatedAt        string               `json:"createdAt"`
	UpdatedAt        string               `json:"updatedAt"`
}

// addressBody is spec §2.3 with null for the optional members.
type addressBody struct {
	Line1      string  `json:"line1"`
	Line2      *string `json:"line2"`
	City       string  `json:"city"`
	State      *string `json:"state"`
	PostalCode string  `json:"postalCode"`
	Country    string  `json:"country"`
}

// businessBody is spec §2.4 with null for members not given.
type businessBody struct {
	CompanyName        string       `json:"companyName"`
	TradingName        *string      `json:"tradingName"`
	Type               string       `json:"type"`
	RegistrationNumber *string      `json:"registrationNumber"`
	RegistrationDate   *string      `json:"registrationDate"`
	Phone              *string      `json:"phone"`
	Website            *string      `json:"website"`
	RegisteredAddress  *addressBody `json:"registeredAddress"`
	TradingAddress     *addressBody `json:"tradingAddress"`
}

func userResponse(u domain.UserSnapshot) userBody {
	b := userBody{UserID: u.ID.String(), Email: u.Email, Name: u.Name, Status: u.Status, UserRole: u.Role,
		IsVerified: u.IsVerified, EntityType: nullable(u.EntityType), FirstName: nullable(u.FirstName),
		MiddleName: nullable(u.MiddleName), LastName: nullable(u.LastName), DOB: nullable(u.DOB),
		Nationality: nonNil(u.Nationality), BirthCountry: nullable(u.BirthCountry), Address: addressResponse(u.Address),
		IDDocumentType: nullable(u.IDDocumentType), IDDocumentNumber: nullable(u.IDDocumentNumber),
		Sector: nullable(u.Sector), BusinessPersons: []businessPersonBody{},
		CreatedAt: timestamp(u.CreatedAt), UpdatedAt: timestamp(u.UpdatedAt)}
	for _, bp := range u.BusinessPersons {
		p := bp.Person
		b.BusinessPersons = append(b.BusinessPersons, businessPersonBody{Types: nonNil(bp.Types), Ownership: bp.Ownership,
			Person: personBody{FirstName: p.FirstName, LastName: p.LastName, DOB: nullable(p.DOB),
				Nationality: nonNil(p.Nationality), BirthCountry: nullable(p.BirthCountry),
				IDDocumentType: nullable(p.IDDocumentType), IDDocumentNumber: nullable(p.IDDocumentNumber),
				Address: addressResponse(p.Address)}})
	}
	if bz := u.Business; bz != nil {
		b.Business = &businessBody{CompanyName: bz.CompanyName, TradingName: nullable(bz.TradingName), Type: bz.Type,
			RegistrationNumber: nullable(bz.RegistrationNumber), RegistrationDate: nullable(bz.RegistrationDate),
			Phone: nullable(bz.Phone), Website: nullable(bz.Website),
			RegisteredAddress: addressResponse(bz.RegisteredAddress), TradingAddress: addressResponse(bz.TradingAddress)}
	}
	return b
}

// businessPersonBody is spec §2.5 with null for members not given, like
// the rest of the User.
type businessPersonBody struct {
	Types     []string   `json:"types"`
	Ownership *float64   `json:"ownership"`
	Person    personBody `json:"person"`
}

type personBody struct {
	FirstName        string       `json:"firstName"`
	LastName         string       `json:"lastName"`
	DOB              *string      `json:"dob"`
	Nationality      []string     `json:"nationality"`
	BirthCountry     *string      `json:"birthCountry"`
	IDDocumentType   *string      `json:"idDocumentType"`
	IDDocumentNumber *string      `json:"idDocumentNumber"`
	Address          *addressBody `json:"address"`
}

func addressResponse(a *domain.Address) *addressBody {
	if a == nil {
		return nil
	}
	return &addressBody{Line1: a.Line1, Line2: nullable(a.Line2), City: a.City, State: nullable(a.State),
		PostalCode: a.PostalCode, Country: a.Country}
}

// userListItem is spec §2.2.
type userListItem struct {
	ID        string `json:"id"`
	UserID    string `json:"userId"`
	Email     string `json:"email"`
	Name      string `json:"name"`
	UserRole  string `json:"userRole"`
	Status    string `json:"status"`
	CreatedAt string `json:"createdAt"`
	UpdatedAt string `json:"updatedAt"`
}

// page is every list response (contract §1).
type page[T any] struct {
	Items        []T     `json:"items"`
	OffsetMarker *string `json:"offsetMarker"`
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func timestamp(t time.Time) string { return t.UTC().Format(domain.TimeFormat) }
