package dashboard

import (
	"net/http"
	"strconv"

	"github.com/ledger/ledger/domain"
)

type eventsView struct {
	Type  string
	Types []string
	Items []domain.Record
	Next  string
}

// eventsPage is GET /dashboard/events?type=&after=: the tenant's events in
// position order, each with its CloudEvents JSON, like GET /events.
func (d *Dashboard) eventsPage(w http.ResponseWriter, r *http.Request) error {
	v := viewerFrom(r.Context())
	q := r.URL.Query()
	view := eventsView{Type: q.Get("type")}
	for _, def := range domain.EventDefs() {
		view.Types = append(view.Types, def.Type)
	}
	if _, ok := domain.LookupEvent(view.Type); view.Type != "" && !ok {
		return domain.Invalidf("type", "Choose an event type from the list.")
	}
	var after int64
	if s := q.Get("after"); s != "" {
		var err error
		if after, err = strconv.ParseInt(s, 10, 64); err != nil || after < 0 {
			return domain.Invalidf("after", "The position to start after is a whole number.")
		}
	}
	items, err := d.Events.TenantEvents(r.Context(), v.TenantID, after, pageSize, view.Type)
	if err != nil {
		return err
	}
	view.Items = items
	if len(items) == pageSize {
		next := q
		next.Set("after", strconv.FormatInt(items[len(items)-1].Position, 10))
		view.Next = r.URL.Path + "?" + next.Encode()
	}
	d.render(w, r, http.StatusOK, "events", "Events", view)
	return nil
}
