package lndtest

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"slices"
	"strconv"
	"time"
)

// sentPayment is a payment the node sent, as ListPayments lists it.
type sentPayment struct {
	hash     [32]byte
	valueSat int64
	created  time.Time
}

// PayByHand records a payment of valueSat made from the node at at by its
// operator (lncli payinvoice), not by the ledger: settled, to a payee the
// ledger never heard of. It returns the payment hash (hex).
func (n *Node) PayByHand(valueSat int64, at time.Time) string {
	var hash [32]byte
	if _, err := rand.Read(hash[:]); err != nil {
		n.t.Fatalf("lndtest: %v", err)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.sent = append(n.sent, sentPayment{hash: hash, valueSat: valueSat, created: at})
	n.payments[hash] = "SUCCEEDED"
	n.preimages[hash] = [32]byte{}
	return hex.EncodeToString(hash[:])
}

// listQuery reads the paging and creation date filters lnd's list calls
// share: the index to start after, how many, and the creation dates
// (seconds, both inclusive; 0: open).
func listQuery(r *http.Request, max string) (offset uint64, limit int, start, end int64, ok bool) {
	q := r.URL.Query()
	num := func(name string) (int64, bool) {
		v := q.Get(name)
		if v == "" {
			return 0, true
		}
		n, err := strconv.ParseInt(v, 10, 64)
		return n, err == nil && n >= 0
	}
	o, ok1 := num("index_offset")
	l, ok2 := num(max)
	start, ok3 := num("creation_date_start")
	end, ok4 := num("creation_date_end")
	if l == 0 {
		l = 100 // lnd's default page
	}
	return uint64(o), int(l), start, end, ok1 && ok2 && ok3 && ok4
}

// inRange says created falls in lnd's inclusive creation date filter.
func inRange(created time.Time, start, end int64) bool {
	return created.Unix() >= start && (end == 0 || created.Unix() <= end)
}

// listInvoices is ListInvoices (GET /v1/invoices), paging forward by
// add_index: invoices after index_offset, oldest first.
func (n *Node) listInvoices(w http.ResponseWriter, r *http.Request) {
	offset, limit, start, end, ok := listQuery(r, "num_max_invoices")
	if !ok {
		grpcError(w, http.StatusBadRequest, "bad request")
		return
	}
	n.mu.Lock()
	var found []*invoice
	hashes := map[*invoice][32]byte{}
	for hash, inv := range n.invoices {
		if inv.index > offset && inRange(inv.created, start, end) {
			found = append(found, inv)
			hashes[inv] = hash
		}
	}
	slices.SortFunc(found, func(a, b *invoice) int { return cmp.Compare(a.index, b.index) })
	list := []map[string]any{}
	first, last := uint64(0), uint64(0)
	for _, inv := range found[:min(limit, len(found))] {
		hash := hashes[inv]
		settled := "0"
		if !inv.settledAt.IsZero() {
			settled = strconv.FormatInt(inv.settledAt.Unix(), 10)
		}
		list = append(list, map[string]any{"r_hash": hash[:], "payment_request": inv.pr, "value": strconv.FormatInt(inv.value, 10),
			"creation_date": strconv.FormatInt(inv.created.Unix(), 10), "settle_date": settled, "state": inv.state,
			"amt_paid_sat": strconv.FormatInt(inv.paid, 10), "add_index": strconv.FormatUint(inv.index, 10)})
		if first == 0 {
			first = inv.index
		}
		last = inv.index
	}
	n.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"invoices": list, "first_index_offset": strconv.FormatUint(first, 10),
		"last_index_offset": strconv.FormatUint(last, 10)})
}

// listPayments is ListPayments (GET /v1/payments), paging forward by
// payment_index; without include_incomplete, succeeded payments only.
func (n *Node) listPayments(w http.ResponseWriter, r *http.Request) {
	offset, limit, start, end, ok := listQuery(r, "max_payments")
	if !ok {
		grpcError(w, http.StatusBadRequest, "bad request")
		return
	}
	incomplete := r.URL.Query().Get("include_incomplete") == "true"
	n.mu.Lock()
	list := []map[string]any{}
	first, last := uint64(0), uint64(0)
	for i, p := range n.sent {
		index := uint64(i + 1)
		status := n.payments[p.hash]
		if index <= offset || !inRange(p.created, start, end) || !incomplete && status != "SUCCEEDED" {
			continue
		}
		if len(list) == limit {
			break
		}
		entry := n.paymentJSON(p.hash, status)
		entry["value_sat"], entry["value_msat"] = strconv.FormatInt(p.valueSat, 10), strconv.FormatInt(p.valueSat*1000, 10)
		entry["creation_time_ns"] = strconv.FormatInt(p.created.UnixNano(), 10)
		entry["payment_index"] = strconv.FormatUint(index, 10)
		list = append(list, entry)
		if first == 0 {
			first = index
		}
		last = index
	}
	n.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"payments": list, "first_index_offset": strconv.FormatUint(first, 10),
		"last_index_offset": strconv.FormatUint(last, 10)})
}
