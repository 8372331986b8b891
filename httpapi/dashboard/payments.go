package dashboard

import (
	"errors"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/ledger/ledger/domain"
)

type paymentsView struct {
	Items     []domain.PaymentSnapshot
	Merchants map[uuid.UUID]string // id -> name, for the filter and the rows
	Statuses  []string
	Filter    paymentsFilter
	Next      string
	FirstPage bool   // new payments appear live on the first page only
	Error     string // a filter that cannot be used, shown above the form
}

// paymentsFilter is the list's filter form, as the viewer typed it.
type paymentsFilter struct {
	Status, Merchant, From, To string
}

// paymentsPage is GET /dashboard/payments?status=&merchant=&from=&to=&offset=:
// the tenant's payments, newest first. from and to are UTC dates, both
// included.
func (d *Dashboard) paymentsPage(w http.ResponseWriter, r *http.Request) error {
	v := viewerFrom(r.Context())
	q := r.URL.Query()
	view := paymentsView{Statuses: domain.PaymentStatuses,
		Filter: paymentsFilter{Status: q.Get("status"), Merchant: q.Get("merchant"), From: q.Get("from"), To: q.Get("to")}}
	var err error
	if view.Merchants, err = d.merchantNames(r, v.TenantID); err != nil {
		return err
	}
	f, err := view.Filter.parse()
	var bad *domain.Error
	if errors.As(err, &bad) && bad.Kind == domain.Invalid {
		view.Error = bad.Message
		d.render(w, r, http.StatusBadRequest, "payments", "Payments", view)
		return nil
	}
	if err != nil {
		return err
	}
	items, next, err := d.Payments.ListPayments(r.Context(), v.TenantID, f, pageSize, q.Get("offset"))
	if err != nil {
		return err
	}
	view.Items, view.Next, view.FirstPage = items, nextPage(r, next), q.Get("offset") == ""
	d.render(w, r, http.StatusOK, "payments", "Payments", view)
	return nil
}

// parse checks the filter form and returns the read model's filter.
func (pf paymentsFilter) parse() (domain.PaymentFilter, error) {
	var f domain.PaymentFilter
	if pf.Status != "" {
		valid := false
		for _, s := range domain.PaymentStatuses {
			valid = valid || s == pf.Status
		}
		if !valid {
			return f, domain.Invalidf("status", "Choose a status from the list.")
		}
		f.Status = pf.Status
	}
	if pf.Merchant != "" {
		id, err := uuid.Parse(pf.Merchant)
		if err != nil {
			return f, domain.Invalidf("merchant", "Choose a merchant from the list.")
		}
		f.MerchantID = id
	}
	for _, date := range []struct {
		in  string
		out *time.Time
		add time.Duration
	}{{pf.From, &f.CreatedFrom, 0}, {pf.To, &f.CreatedBefore, 24 * time.Hour}} {
		if date.in == "" {
			continue
		}
		t, err := time.Parse(time.DateOnly, date.in)
		if err != nil {
			return f, domain.Invalidf("date", "Dates are YYYY-MM-DD.")
		}
		*date.out = t.Add(date.add)
	}
	return f, nil
}

// merchantNames maps the tenant's merchants (the first hundred) to their names.
func (d *Dashboard) merchantNames(r *http.Request, tenantID uuid.UUID) (map[uuid.UUID]string, error) {
	ms, _, err := d.Payments.ListMerchants(r.Context(), tenantID, 100, "")
	if err != nil {
		return nil, err
	}
	names := make(map[uuid.UUID]string, len(ms))
	for _, m := range ms {
		names[m.ID] = m.Name
	}
	return names, nil
}

type paymentView struct {
	domain.PaymentSnapshot
	Merchant  string
	Documents []domain.PaymentDocumentItem
	Links     map[uuid.UUID]string // document id -> presigned download link
	Webhooks  []domain.WebhookAttemptItem
	Events    []domain.Record
}

// paymentPage is GET /dashboard/payments/{paymentId}: one payment with its
// status timeline, amounts, funding, documents, webhook attempts and events.
func (d *Dashboard) paymentPage(w http.ResponseWriter, r *http.Request) error {
	v := viewerFrom(r.Context())
	id, err := pathID(r, "paymentId")
	if err != nil {
		return err
	}
	ctx := r.Context()
	p, err := d.Payments.Payment(ctx, v.TenantID, id)
	if err != nil {
		return notFoundAsPage(err)
	}
	view := paymentView{PaymentSnapshot: p}
	if view.Documents, _, err = d.Payments.ListPaymentDocuments(ctx, v.TenantID, id, 100, ""); err != nil {
		return err
	}
	if view.Links, err = documentLinks(d, r, view.Documents, func(doc domain.PaymentDocumentItem) uuid.UUID { return doc.ID }); err != nil {
		return err
	}
	if view.Webhooks, err = d.Payments.ListWebhookAttempts(ctx, v.TenantID, id); err != nil {
		return err
	}
	if view.Events, err = d.Events.StreamHistory(ctx, domain.StreamRef{TenantID: v.TenantID, Type: "payment", ID: id}); err != nil {
		return err
	}
	if m, err := d.Payments.Merchant(ctx, v.TenantID, p.MerchantID); err == nil {
		view.Merchant = m.Name
	} else if domain.ErrorKind(err) != domain.NotFound {
		return err
	}
	d.render(w, r, http.StatusOK, "payment", "Payment "+short(id), view)
	return nil
}
