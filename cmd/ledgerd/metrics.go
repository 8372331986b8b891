package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metricsServer serves GET /metrics alone, on LEDGER_METRICS_ADDR: the
// metrics tell request rates by route, connection pools and the relay's
// leader, which the API's public address need not show to everyone.
type metricsServer struct {
	ln  net.Listener
	srv *http.Server
}

// listenMetrics listens on addr, so a taken address fails the start.
func listenMetrics(addr string, g prometheus.Gatherer, log *slog.Logger) (*metricsServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s (LEDGER_METRICS_ADDR): %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{}))
	return &metricsServer{ln: ln, srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		WriteTimeout: time.Minute, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}}, nil
}

// serve serves until Shutdown, sending any other end to errs.
func (m *metricsServer) serve(errs chan<- error) {
	if err := m.srv.Serve(m.ln); !errors.Is(err, http.ErrServerClosed) {
		errs <- fmt.Errorf("metrics server: %w", err)
	}
}
