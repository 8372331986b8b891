package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// healthCheck asks ledgerd's GET /readyz (Postgres and NATS reachable, schema
// current) and fails unless it answers 2xx within five seconds.
func healthCheck(ctx context.Context, _ *database, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("health check", flag.ContinueOnError)
	url := fs.String("url", "http://127.0.0.1:8080/readyz", "the readiness URL to ask")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, *url, nil)
	if err != nil {
		return fmt.Errorf("health check: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("health check: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("health check: %s answered %s: %s", *url, resp.Status, strings.TrimSpace(string(body)))
	}
	_, err = fmt.Fprintf(stdout, "%s answered %s\n", *url, resp.Status)
	return err
}
