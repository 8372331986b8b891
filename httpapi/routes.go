package httpapi

import (
	"net/http"

	"github.com/gorilla/mux"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ledger/ledger/domain"
)

// routes is the API's route table, so the spec reads at a glance. Public
// routes need no token; the rest go through authenticate.
func (s *Server) routes() *mux.Router {
	r := mux.NewRouter()
	r.Use(s.requestID, s.recoverPanics, s.logAndMeasure)
	// mux runs r.Use's middleware only for matched routes, so its own 404
	// and 405 answers get the same chain here (X-Request-Id, log, metrics).
	r.NotFoundHandler = s.requestID(s.recoverPanics(s.logAndMeasure(
		s.route(func(w http.ResponseWriter, r *http.Request) error { return domain.ErrNotFound }))))
	r.MethodNotAllowedHandler = s.requestID(s.recoverPanics(s.logAndMeasure(s.route(s.methodNotAllowed))))

	r.Handle("/healthz", s.route(s.healthz)).Methods(http.MethodGet)
	r.Handle("/readyz", s.route(s.readyz)).Methods(http.MethodGet)
	if !s.cfg.MetricsElsewhere {
		r.Handle("/metrics", promhttp.HandlerFor(s.gatherer, promhttp.HandlerOpts{})).Methods(http.MethodGet)
	}
	r.Handle("/openapi.json", s.route(s.openAPI)).Methods(http.MethodGet)
	r.Handle("/token", s.limitByIP(s.holdBodies(s.route(s.issueTenantToken)))).Methods(http.MethodPost)
	r.Handle("/documents/{documentId}", s.route(s.downloadDocument)).Methods(http.MethodGet) // presigned, no token

	api := r.NewRoute().Subrouter()
	api.Use(s.authenticate, s.holdBodies, s.idempotent)
	api.Handle("/users/token", s.route(s.issueUserToken)).Methods(http.MethodPost)
	api.Handle("/users", s.route(s.createUser)).Methods(http.MethodPost)
	api.Handle("/users", s.route(s.listUsers)).Methods(http.MethodGet)
	api.Handle("/users/{userId}", s.route(s.getUser)).Methods(http.MethodGet)
	api.Handle("/users/{userId}", s.route(s.updateUser)).Methods(http.MethodPatch)
	api.Handle("/users/{userId}", s.route(s.disableUser)).Methods(http.MethodDelete)
	api.Handle("/users/{userId}/kyc-documents", uploadRoute{s.route(s.uploadKYCDocument)}).Methods(http.MethodPost)
	api.Handle("/users/{userId}/kyc-documents", s.route(s.listKYCDocuments)).Methods(http.MethodGet)
	api.Handle("/profile", s.route(s.getProfile)).Methods(http.MethodGet)
	api.Handle("/profile", s.route(s.updateProfile)).Methods(http.MethodPatch)
	api.Handle("/profile/momo", s.route(s.addMomoAccount)).Methods(http.MethodPost)
	api.Handle("/profile/momo/{id}", s.route(s.updateMomoAccount)).Methods(http.MethodPatch)
	api.Handle("/profile/momo/{id}", s.route(s.removeMomoAccount)).Methods(http.MethodDelete)
	api.Handle("/merchants", s.route(s.createMerchant)).Methods(http.MethodPost)
	api.Handle("/merchants", s.route(s.listMerchants)).Methods(http.MethodGet)
	api.Handle("/merchants/{merchantId}", s.route(s.getMerchant)).Methods(http.MethodGet)
	api.Handle("/payments", s.route(s.createPayment)).Methods(http.MethodPost)
	api.Handle("/payments", s.route(s.listPayments)).Methods(http.MethodGet)
	api.Handle("/payments/{paymentId}", s.route(s.getPayment)).Methods(http.MethodGet)
	api.Handle("/payments/{paymentId}/document", uploadRoute{s.route(s.attachPaymentDocument)}).Methods(http.MethodPost)
	api.Handle("/payments/{paymentId}/documents", s.route(s.listPaymentDocuments)).Methods(http.MethodGet)
	api.Handle("/payments/{paymentId}/webhooks", s.route(s.listWebhookAttempts)).Methods(http.MethodGet)
	if s.cfg.Sandbox {
		api.Handle("/sandbox/payments/{paymentId}/deposit", s.route(s.sandboxDeposit)).Methods(http.MethodPost)
		api.Handle("/sandbox/payouts", s.route(s.sandboxPayouts)).Methods(http.MethodGet)
	}
	api.Handle("/events", s.route(s.listEvents)).Methods(http.MethodGet)
	api.Handle("/payments/{paymentId}/events", s.route(s.listPaymentEvents)).Methods(http.MethodGet)
	api.Handle("/users/{userId}/events", s.route(s.listUserEvents)).Methods(http.MethodGet)
	api.Handle("/ledger/balances", s.route(s.trialBalance)).Methods(http.MethodGet)
	api.Handle("/utils/banks", s.route(s.listBanks)).Methods(http.MethodGet)
	return r
}
