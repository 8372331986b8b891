package camt

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/ledger/ledger/domain"
)

// ImportPath is the operator's route for a bank's camt files. It is served
// beside the partner API, not in it: partners' tokens must never reach the
// operator's money, so it takes the operator token (LEDGER_OPERATOR_TOKEN)
// alone.
const ImportPath = "/operator/deposits/camt"

// Importer records a camt file's credits and returns its report.
type Importer func(ctx context.Context, r io.Reader) (any, error)

// Handler serves ImportPath: POST a camt.054 or camt.053 file as the body
// with "Authorization: Bearer <operator token>".
type Handler struct {
	token [sha256.Size]byte // compared as a hash, in constant time
	imp   Importer
	log   *slog.Logger
}

// NewHandler returns the import route for token.
func NewHandler(token string, imp Importer, log *slog.Logger) *Handler {
	return &Handler{token: sha256.Sum256([]byte(token)), imp: imp, log: log}
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	bearer, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if sum := sha256.Sum256([]byte(bearer)); !ok || subtle.ConstantTimeCompare(sum[:], h.token[:]) != 1 {
		h.log.Warn("camt import: refused a request without the operator token", "remote", r.RemoteAddr)
		w.Header().Set("WWW-Authenticate", `Bearer realm="operator"`)
		http.Error(w, "the operator token is required", http.StatusUnauthorized)
		return
	}
	rep, err := h.imp(r.Context(), http.MaxBytesReader(w, r.Body, MaxSize))
	var de *domain.Error
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		http.Error(w, "the file is larger than the import takes", http.StatusRequestEntityTooLarge)
		return
	case errors.As(err, &de) && de.Kind == domain.Invalid:
		http.Error(w, de.Message, http.StatusBadRequest)
		return
	case err != nil:
		// Entries recorded before the failure stay recorded: posting the
		// file again finishes it.
		h.log.Error("camt import failed", "err", err)
		http.Error(w, "the import failed; post the file again", http.StatusInternalServerError)
		return
	}
	body, err := json.Marshal(rep)
	if err != nil {
		h.log.Error("camt import: encode report", "err", err)
		http.Error(w, "the report could not be encoded", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(append(body, '\n'))
}
