package httpapi

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/mux"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ledger/ledger/httpapi/statusrec"
)

type requestIDKey struct{}

// validRequestID bounds what is echoed back and written to logs.
var validRequestID = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)

// requestID echoes X-Request-Id when the caller sent a sane one and makes one
// up otherwise; every log line of the request carries it.
func (s *Server) requestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-Id")
		if !validRequestID.MatchString(id) {
			id = uuid.Must(uuid.NewV7()).String()
		}
		w.Header().Set("X-Request-Id", id)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id)))
	})
}

func requestIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// logger returns the server's logger with the request's id.
func (s *Server) logger(r *http.Request) *slog.Logger {
	return s.log.With("requestId", requestIDFrom(r.Context()))
}

// recoverPanics turns a handler panic into a logged 500.
func (s *Server) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.writeProblem(w, r, fmt.Errorf("panic: %v", v))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

type httpMetrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	held     prometheus.Gauge // request body bytes held in memory (holdBody)
}

func newHTTPMetrics(reg prometheus.Registerer) *httpMetrics {
	m := &httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ledger_http_requests_total",
			Help: "HTTP requests by route template, method and status."}, []string{"route", "method", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "ledger_http_request_duration_seconds",
			Help: "HTTP request latency by route template, method and status.", Buckets: prometheus.DefBuckets},
			[]string{"route", "method", "status"}),
		held: prometheus.NewGauge(prometheus.GaugeOpts{Name: "ledger_http_request_bytes_held",
			Help: "Request body bytes held in memory (keyed requests), against LEDGER_MAX_BUFFERED_BYTES."}),
	}
	if reg != nil {
		reg.MustRegister(m.requests, m.latency, m.held)
	}
	return m
}

// logAndMeasure logs one JSON line per request and records its metrics by
// route template (never the raw path, which would explode label cardinality).
func (s *Server) logAndMeasure(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := s.now()
		rec := &statusrec.Recorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		route := "unmatched"
		if cr := mux.CurrentRoute(r); cr != nil {
			if tpl, err := cr.GetPathTemplate(); err == nil {
				route = tpl
			}
		}
		elapsed := time.Since(start)
		status := strconv.Itoa(rec.Status())
		s.metrics.requests.WithLabelValues(route, r.Method, status).Inc()
		s.metrics.latency.WithLabelValues(route, r.Method, status).Observe(elapsed.Seconds())
		s.logger(r).Info("request", "method", r.Method, "route", route, "status", rec.Status(),
			"durationMs", elapsed.Milliseconds())
	})
}

// noSniff has browsers take every response's Content-Type as sent: a JSON
// body or problem whose text a caller shaped (a reference, a name) is
// never run as HTML or script.
func noSniff(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		next.ServeHTTP(w, r)
	})
}
