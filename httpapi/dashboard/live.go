package dashboard

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/ledger/ledger/domain"
)

// liveHeartbeat keeps idle event streams open through proxies.
const liveHeartbeat = 15 * time.Second

// paymentUpdate is one Server-Sent Event: a payment's status now. A
// payment's own page then re-reads its other sections.
type paymentUpdate struct {
	ID        string `json:"id"`
	Status    string `json:"status"`
	UpdatedAt string `json:"updatedAt"`
}

// live is GET /dashboard/live[?payment=ID]: Server-Sent Events carrying the
// current state of each of the tenant's payments an event is published
// about (fed from NATS), one payment's only when payment is given. The
// tenant is the session's, never the URL's. With payment, the payment's
// state is sent first, so a change between the page's render and the
// stream's start is not missed.
func (d *Dashboard) live(w http.ResponseWriter, r *http.Request) error {
	v := viewerFrom(r.Context())
	var only uuid.UUID
	if p := r.URL.Query().Get("payment"); p != "" {
		id, err := uuid.Parse(p)
		if err != nil {
			return errNotFound
		}
		if _, err := d.Payments.Payment(r.Context(), v.TenantID, id); err != nil {
			return notFoundAsPage(err)
		}
		only = id
	}
	changes, err := d.Feed.PaymentChanges(r.Context(), v.TenantID)
	if err != nil {
		return err
	}
	rc := http.NewResponseController(w)
	if err := rc.SetWriteDeadline(time.Time{}); err != nil { // the server's write timeout would end the stream
		return err
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, "retry: 2000\n\n")
	if only != uuid.Nil {
		if err := d.sendPayment(w, r, v.TenantID, only); err != nil {
			return nil // the status line is out; the browser reconnects
		}
	}
	rc.Flush()
	heartbeat := time.NewTicker(liveHeartbeat)
	defer heartbeat.Stop()
	var checked time.Time // when the session was last found open
	for {
		select {
		case <-r.Context().Done():
			return nil
		case <-d.closing:
			return nil
		case <-heartbeat.C:
			if !d.stillSignedIn(r, v, &checked, 0) {
				return nil
			}
			fmt.Fprint(w, ": heartbeat\n\n")
		case id, ok := <-changes:
			if !ok {
				return nil
			}
			if only != uuid.Nil && id != only {
				continue
			}
			if !d.stillSignedIn(r, v, &checked, time.Second) {
				return nil
			}
			if err := d.sendPayment(w, r, v.TenantID, id); err != nil {
				d.Log.Warn("dashboard live update", "payment", id, "err", err)
				return nil
			}
		}
		if err := rc.Flush(); err != nil {
			return nil
		}
	}
}

// stillSignedIn reports whether the stream's session is still open, asking
// unless it was found open less than fresh ago. A stream is checked when it
// opens like any request; a sign-out, a new password or the session's end
// must close one already open too, before it sends anything more.
func (d *Dashboard) stillSignedIn(r *http.Request, v viewer, checked *time.Time, fresh time.Duration) bool {
	if fresh > 0 && time.Since(*checked) < fresh {
		return true
	}
	if _, err := d.Accounts.DashboardSession(r.Context(), tokenHash(v.SessionID), d.now()); err != nil {
		if domain.ErrorKind(err) != domain.NotFound {
			d.Log.Warn("dashboard live: check session", "err", err)
		}
		return false
	}
	*checked = time.Now()
	return true
}

// sendPayment writes the payment's current state as a "payment" event.
func (d *Dashboard) sendPayment(w http.ResponseWriter, r *http.Request, tenantID, id uuid.UUID) error {
	p, err := d.Payments.Payment(r.Context(), tenantID, id)
	if err != nil {
		return err
	}
	data, err := json.Marshal(paymentUpdate{ID: p.ID.String(), Status: p.Status,
		UpdatedAt: p.UpdatedAt.UTC().Format(domain.TimeFormat)})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "event: payment\ndata: %s\n\n", data)
	return err
}
