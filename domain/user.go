package domain

import "github.com/google/uuid"

// User roles (contract §2): the owner created with a tenant is the Admin.
const (
	RoleAdmin  = "Admin"
	RoleNormal = "Normal User"
)

// User statuses (spec §3.2).
const (
	UserActive   = "Active"
	UserInactive = "Inactive"
)

// User is the state of one user's stream.
type User struct {
	ID     uuid.UUID
	Email  string
	Name   string
	Role   string
	Status string
}

// UserCreated opens a user's stream.
type UserCreated struct {
	UserID uuid.UUID `json:"userId"`
	Email  string    `json:"email"`
	Name   string    `json:"name"`
	Role   string    `json:"role"`
}

func (UserCreated) EventType() string { return "user.created" }

var _ = register(EventDef{Type: "user.created", Version: 1, New: func() Event { return new(UserCreated) },
	Private: []string{"email", "name"}, Doc: "A user was created in a tenant."})

// ApplyUser folds one event into u.
func ApplyUser(u User, e Event) User {
	switch e := e.(type) {
	case UserCreated:
		u = User{ID: e.UserID, Email: e.Email, Name: e.Name, Role: e.Role, Status: UserActive}
	}
	return u
}
