package benchkit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"time"
)

// Partner is one simulated partner (tenant) with its token and the South
// African bank merchant its payments go to.
type Partner struct {
	TenantID   string
	Token      string
	MerchantID string
}

// benchMerchant is the merchant every partner creates: a South African bank
// payout, which a payment from BTC (the default fromCountry) reaches as a
// Lightning-funded WRAPPED_INTERBANK_PAYMENT.
var benchMerchant = map[string]string{"name": "Bench Shop", "country": "SouthAfrica",
	"bankName": "Capitec Bank", "accountNumber": "1234567890"}

// NewHTTPClient returns the one client every request of the run shares:
// keep-alive connections, as many kept idle per host as there are workers,
// so no worker pays for a new TCP connection after the first request.
func NewHTTPClient(maxWorkers int) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil // ledgerd is on loopback
	tr.MaxIdleConns = max(100, maxWorkers)
	tr.MaxIdleConnsPerHost = maxWorkers
	tr.DisableCompression = true
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

// SetupPartners creates n tenants with ledgerctl (as an operator would), a
// tenant token for each (POST /token) and a merchant each (POST /merchants).
func SetupPartners(ctx context.Context, client *http.Client, ledgerctl string, env []string, baseURL string, n int) ([]Partner, error) {
	ps := make([]Partner, n)
	for i := range ps {
		out, err := runLedgerctl(ctx, ledgerctl, env, "tenant", "create",
			"--name", fmt.Sprintf("Bench Partner %d", i), "--email", fmt.Sprintf("partner%d@ledgerbench.invalid", i))
		if err != nil {
			return nil, err
		}
		var keys struct {
			TenantID  string `json:"tenantId"`
			APIKey    string `json:"apiKey"`
			APISecret string `json:"apiSecret"`
		}
		if err := json.Unmarshal(out, &keys); err != nil || keys.APIKey == "" || keys.APISecret == "" {
			return nil, fmt.Errorf("ledgerctl tenant create: unexpected output %q", out)
		}
		var tok struct {
			AccessToken string `json:"accessToken"`
		}
		if err := callJSON(ctx, client, baseURL+"/token", "", map[string]string{"apiKey": keys.APIKey, "apiSecret": keys.APISecret},
			http.StatusOK, &tok); err != nil {
			return nil, fmt.Errorf("partner %d: %w", i, err)
		}
		var merchant struct {
			ID string `json:"id"`
		}
		if err := callJSON(ctx, client, baseURL+"/merchants", tok.AccessToken, benchMerchant, http.StatusCreated, &merchant); err != nil {
			return nil, fmt.Errorf("partner %d: %w", i, err)
		}
		ps[i] = Partner{TenantID: keys.TenantID, Token: tok.AccessToken, MerchantID: merchant.ID}
	}
	return ps, nil
}

// runLedgerctl runs ledgerctl with args and returns its stdout.
func runLedgerctl(ctx context.Context, bin string, env []string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("ledgerctl %s: %w: %s", strings.Join(args[:2], " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// callJSON POSTs body as JSON to url, with token as bearer if not empty,
// and decodes the answer into out. Any status but want is an error that
// carries the answer's body verbatim: that is what to look at.
func callJSON(ctx context.Context, client *http.Client, url, token string, body any, want int, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	answer, err := Post(ctx, client, url, token, b, want)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(answer, out); err != nil {
		return fmt.Errorf("POST %s: decode answer %q: %w", url, answer, err)
	}
	return nil
}

// PaymentRequest is the body of POST /payments a load sends; the webhook
// fields only where the load has them (ledgerbench lifecycle's, ledgerchaos's).
type PaymentRequest struct {
	MerchantID    string `json:"merchantId"`
	Amount        int    `json:"amount"`
	Reference     string `json:"reference"`
	WebhookURL    string `json:"webhookUrl,omitempty"`
	WebhookSecret string `json:"webhookSecret,omitempty"`
}

// Post sends body to url and returns the answer's body, or, for any status
// but want, an error quoting it.
func Post(ctx context.Context, client *http.Client, url, token string, body []byte, want int) ([]byte, error) {
	return PostKeyed(ctx, client, url, token, "", body, want)
}

// PostKeyed is Post with an Idempotency-Key header (contract §1) when key
// is not empty: what a careful partner sends, so that a retry after a lost
// answer cannot create a second payment. ledgerd then records the request
// and its answer, which is the cost a keyed benchmark measures.
func PostKeyed(ctx context.Context, client *http.Client, url, token, key string, body []byte, want int) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("POST %s: %w", req.URL.Path, err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("POST %s: read answer: %w", req.URL.Path, err)
	}
	if resp.StatusCode != want {
		return nil, fmt.Errorf("POST %s answered %s, want %d: %s", req.URL.Path, resp.Status, want, bytes.TrimSpace(answer))
	}
	return answer, nil
}
