package httpapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"

	"github.com/google/uuid"

	"github.com/ledger/ledger/domain"
)

type tenantTokenRequest struct {
	APIKey    string `json:"apiKey"`
	APISecret string `json:"apiSecret"`
}

var errBadCredentials = domain.Errorf(domain.Unauthenticated, "invalid_credentials", "the API key or secret is wrong or revoked")

// issueTenantToken is POST /token: an API key pair for a tenant token.
func (s *Server) issueTenantToken(w http.ResponseWriter, r *http.Request) error {
	var req tenantTokenRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	if err := requireString("apiKey", req.APIKey); err != nil {
		return err
	}
	if err := requireString("apiSecret", req.APISecret); err != nil {
		return err
	}
	cred, err := s.credentials.Credential(r.Context(), req.APIKey)
	if domain.ErrorKind(err) == domain.NotFound {
		return errBadCredentials
	}
	if err != nil {
		return err
	}
	sum := sha256.Sum256([]byte(req.APISecret))
	if subtle.ConstantTimeCompare([]byte(hex.EncodeToString(sum[:])), []byte(cred.SecretHash)) != 1 || cred.Revoked {
		return errBadCredentials
	}
	resp, err := s.issue(r.Context(), Caller{TenantID: cred.TenantID, Kind: KindTenant, APIKey: cred.APIKey}, s.cfg.TenantTokenTTL)
	if err != nil {
		return err
	}
	// A last-use time is a convenience: failing to record it must not cost
	// the partner its token.
	if err := s.credentials.TouchAPIKey(r.Context(), cred.APIKey, s.now()); err != nil {
		s.logger(r).Warn("record api key use", "apiKey", cred.APIKey, "err", err)
	}
	return writeToken(w, resp)
}

type userTokenRequest struct {
	UserID string `json:"userId"`
}

// issueUserToken is POST /users/token (spec 4.2 "Issue user token"): a tenant
// token asks for a token limited to one active user of its tenant.
func (s *Server) issueUserToken(w http.ResponseWriter, r *http.Request) error {
	c, err := tenantCaller(r)
	if err != nil {
		return err
	}
	var req userTokenRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	if err := requireString("userId", req.UserID); err != nil {
		return err
	}
	userID, err := uuid.Parse(req.UserID)
	if err != nil {
		return domain.Invalidf("userId", "must be a UUID")
	}
	status, err := s.credentials.UserStatus(r.Context(), c.TenantID, userID)
	if err != nil {
		return err
	}
	if status != domain.UserActive {
		return domain.ErrNotFound
	}
	resp, err := s.issue(r.Context(), Caller{TenantID: c.TenantID, UserID: userID, Kind: KindUser, APIKey: c.APIKey}, s.cfg.UserTokenTTL)
	if err != nil {
		return err
	}
	return writeToken(w, resp)
}

// writeToken sends a token response, which no cache may keep (RFC 6749
// §5.1: Cache-Control no-store, and Pragma no-cache for HTTP/1.0 caches).
func writeToken(w http.ResponseWriter, resp tokenResponse) error {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	return writeJSON(w, http.StatusOK, resp)
}
