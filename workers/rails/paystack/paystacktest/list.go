package paystacktest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"
)

// MakeByHand makes a transfer as someone on Paystack's dashboard would:
// no request of ours, the reference Paystack generated, status (success
// unless given) and creation time (now unless given) as tr says.
func (s *Server) MakeByHand(tr Transfer) Transfer {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	tr.ID, tr.TransferCode = s.nextID, fmt.Sprintf("TRF_%d", s.nextID)
	if tr.Reference == "" {
		tr.Reference = fmt.Sprintf("dashboard_%d", s.nextID)
	}
	if tr.Status == "" {
		tr.Status = "success"
	}
	if tr.CreatedAt.IsZero() {
		tr.CreatedAt = time.Now().UTC()
	}
	tr.UpdatedAt = tr.CreatedAt
	s.transfers[tr.Reference] = &tr
	return tr
}

// defaultPerPage is the page size when a list names none (the pagination docs).
const defaultPerPage = 50

// listTransfers is GET /transfer: the transfers created between from and
// to (both inclusive, RFC 3339; either may be absent), newest first.
func (s *Server) listTransfers(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var bounds [2]time.Time
	for i, name := range []string{"from", "to"} {
		if v := q.Get(name); v != "" {
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				answer(w, http.StatusBadRequest, false, "Invalid "+name+" date", nil)
				return
			}
			bounds[i] = t
		}
	}
	page, perPage := 1, defaultPerPage
	for name, p := range map[string]*int{"page": &page, "perPage": &perPage} {
		if v := q.Get(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				answer(w, http.StatusBadRequest, false, "Invalid "+name, nil)
				return
			}
			*p = n
		}
	}
	s.mu.Lock()
	var found []Transfer
	for _, tr := range s.transfers {
		if (bounds[0].IsZero() || !tr.CreatedAt.Before(bounds[0])) && (bounds[1].IsZero() || !tr.CreatedAt.After(bounds[1])) {
			found = append(found, *tr)
		}
	}
	s.mu.Unlock()
	// Newest first, and in one order whatever the map's: transfers made in
	// the same instant must fall on the same page every time, or a paged
	// reader misses one and sees another twice.
	slices.SortFunc(found, func(a, b Transfer) int { return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), cmp.Compare(b.ID, a.ID)) })
	data := []map[string]any{}
	for i := (page - 1) * perPage; i < len(found) && i < page*perPage; i++ {
		data = append(data, transferJSON(found[i], found[i].Status))
	}
	body := map[string]any{"status": true, "message": "Transfers retrieved", "data": data, "meta": map[string]any{
		"total": len(found), "skipped": (page - 1) * perPage, "perPage": perPage, "page": page,
		"pageCount": (len(found) + perPage - 1) / perPage}}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(body)
}
