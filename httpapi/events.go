package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/ledger/ledger/domain"
)

// Events is the event history for auditors (contract §9): sequenced
// events only, as stored.
type Events interface {
	TenantEvents(ctx context.Context, tenantID uuid.UUID, after int64, limit int, eventType string) ([]domain.Record, error)
	StreamHistory(ctx context.Context, stream domain.StreamRef) ([]domain.Record, error)
}

type eventPage struct {
	Items []domain.CloudEvent `json:"items"`
	// LastPosition is the position of the page's last event, to pass as
	// after for the next page; null on an empty page.
	LastPosition *int64 `json:"lastPosition"`
}

// listEvents is GET /events?after=&limit=&type= (tenant token): the
// tenant's events in position order, each the CloudEvents envelope as
// stored (personal data included: the tenant's own), so their hashes can
// be recomputed. type is the CloudEvents type (ledger.payment.created.v1)
// or its short form (payment.created).
func (s *Server) listEvents(w http.ResponseWriter, r *http.Request) error {
	c, err := tenantCaller(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	limit, err := pageLimit(q.Get("limit"))
	if err != nil {
		return err
	}
	var after int64
	if v := q.Get("after"); v != "" {
		if after, err = strconv.ParseInt(v, 10, 64); err != nil || after < 0 {
			return domain.Invalidf("after", "must be a position: a whole number from 0")
		}
	}
	typ := q.Get("type")
	if typ != "" {
		short, version := typ, ""
		if rest, ok := strings.CutPrefix(typ, "ledger."); ok {
			if i := strings.LastIndex(rest, ".v"); i > 0 {
				short, version = rest[:i], rest[i+2:]
			}
		}
		def, ok := domain.LookupEvent(short)
		if !ok || (version != "" && version != strconv.Itoa(def.Version)) {
			return domain.Invalidf("type", "is not an event type of the catalogue (docs/events.md)")
		}
		typ = short
	}
	recs, err := s.events.TenantEvents(r.Context(), c.TenantID, after, limit, typ)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, envelopes(recs))
}

func envelopes(recs []domain.Record) eventPage {
	page := eventPage{Items: make([]domain.CloudEvent, 0, len(recs))}
	for _, rec := range recs {
		page.Items = append(page.Items, domain.Envelope(rec))
	}
	if n := len(recs); n > 0 {
		last := recs[n-1].Position
		page.LastPosition = &last
	}
	return page
}

// listPaymentEvents is GET /payments/{paymentId}/events: the payment's
// history, oldest first.
func (s *Server) listPaymentEvents(w http.ResponseWriter, r *http.Request) error {
	c, p, err := s.pathPayment(r)
	if err != nil {
		return err
	}
	recs, err := s.events.StreamHistory(r.Context(), paymentStream(c.TenantID, p.ID))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, envelopes(recs))
}

// listUserEvents is GET /users/{userId}/events: the user's history
// (profile, momo accounts and KYC documents included), oldest first.
func (s *Server) listUserEvents(w http.ResponseWriter, r *http.Request) error {
	c, userID, err := pathUser(r)
	if err != nil {
		return err
	}
	if _, err := s.activeUser(r.Context(), c.TenantID, userID); err != nil {
		return err
	}
	recs, err := s.events.StreamHistory(r.Context(), userStream(c.TenantID, userID))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, envelopes(recs))
}
