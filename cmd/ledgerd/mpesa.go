package main

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/ledger/ledger/workers/rails/mpesa"
)

// mpesaConfig is the M-Pesa rail's settings (LEDGER_MPESA_*): all of them,
// or none.
type mpesaConfig struct {
	ConsumerKey, ConsumerSecret, ConsumerSecretFile string
	ShortCode, PassKey, PassKeyFile                 string
	B2CShortCode, Initiator                         string
	InitiatorPassword, InitiatorPasswordFile        string
	CertFile                                        string
	BaseURL                                         string // "" until validate: mpesa.DefaultBaseURL
	StatementsDir                                   string // the org portal's statements, which reconciliation reads; "" reads none
}

// set says any M-Pesa setting but the base URL is given.
func (m mpesaConfig) set() bool {
	return m.ConsumerKey != "" || m.ConsumerSecret != "" || m.ConsumerSecretFile != "" || m.ShortCode != "" || m.PassKey != "" ||
		m.PassKeyFile != "" || m.B2CShortCode != "" || m.Initiator != "" || m.InitiatorPassword != "" || m.InitiatorPasswordFile != "" ||
		m.CertFile != ""
}

// validateMPesa refuses an M-Pesa rail configured by half: some settings
// without the others, a secret given twice, a base URL alone, or any of it
// in sandbox mode (where momo prompts and payouts are the sandbox's).
func (c *config) validateMPesa() error {
	m := &c.MPesa
	for _, s := range []struct{ name, value, file string }{{"LEDGER_MPESA_CONSUMER_SECRET", m.ConsumerSecret, m.ConsumerSecretFile},
		{"LEDGER_MPESA_PASSKEY", m.PassKey, m.PassKeyFile}, {"LEDGER_MPESA_INITIATOR_PASSWORD", m.InitiatorPassword, m.InitiatorPasswordFile}} {
		if s.value != "" && s.file != "" {
			return fmt.Errorf("%s and %s_FILE are both set: give it once", s.name, s.name)
		}
	}
	switch {
	case c.Mode == "sandbox" && (m.set() || m.BaseURL != "" || m.StatementsDir != ""):
		return fmt.Errorf("LEDGER_MPESA_* configure production's Kenyan momo; the sandbox takes momo deposits and pays momo payouts itself")
	case !m.set() && (m.BaseURL != "" || m.StatementsDir != ""):
		return fmt.Errorf("LEDGER_MPESA_BASE_URL or LEDGER_MPESA_STATEMENTS_DIR is set without the other LEDGER_MPESA_* settings: the M-Pesa rail is half configured")
	case !m.set():
		return nil
	}
	if m.StatementsDir != "" {
		if err := statementsDir("LEDGER_MPESA_STATEMENTS_DIR", m.StatementsDir); err != nil {
			return err
		}
	}
	var missing []string
	for _, s := range []struct {
		name  string
		given bool
	}{{"LEDGER_MPESA_CONSUMER_KEY", m.ConsumerKey != ""}, {"LEDGER_MPESA_CONSUMER_SECRET (or _FILE)", m.ConsumerSecret+m.ConsumerSecretFile != ""},
		{"LEDGER_MPESA_SHORTCODE", m.ShortCode != ""}, {"LEDGER_MPESA_PASSKEY (or _FILE)", m.PassKey+m.PassKeyFile != ""},
		{"LEDGER_MPESA_B2C_SHORTCODE", m.B2CShortCode != ""}, {"LEDGER_MPESA_INITIATOR", m.Initiator != ""},
		{"LEDGER_MPESA_INITIATOR_PASSWORD (or _FILE)", m.InitiatorPassword+m.InitiatorPasswordFile != ""},
		{"LEDGER_MPESA_CERT_FILE", m.CertFile != ""}} {
		if !s.given {
			missing = append(missing, s.name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the M-Pesa rail is half configured: %s missing", strings.Join(missing, ", "))
	}
	if m.BaseURL == "" {
		m.BaseURL = mpesa.DefaultBaseURL
	}
	if u, err := url.Parse(m.BaseURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("LEDGER_MPESA_BASE_URL must be an http(s) URL, not %q", m.BaseURL)
	}
	return nil
}

// secretSetting is a secret given as a value or in a file (trimmed).
func secretSetting(name, value, file string) (string, error) {
	if file == "" {
		return value, nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("%s_FILE: %w", name, err)
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "", fmt.Errorf("%s_FILE: %s is empty", name, file)
	}
	return s, nil
}

// mpesaTimeout bounds one call to Daraja: a prompt whose call times out is
// not sent again (its callback or query tells), a payout's status is asked.
const mpesaTimeout = 30 * time.Second

// newMPesa builds the Daraja client and the rail's settings; nil when the
// rail is not configured. The initiator password is encrypted with the
// certificate once, at start.
func newMPesa(cfg config) (*mpesa.Client, mpesa.Config, error) {
	m := cfg.MPesa
	if !m.set() {
		return nil, mpesa.Config{}, nil
	}
	secret, err := secretSetting("LEDGER_MPESA_CONSUMER_SECRET", m.ConsumerSecret, m.ConsumerSecretFile)
	if err != nil {
		return nil, mpesa.Config{}, err
	}
	passkey, err := secretSetting("LEDGER_MPESA_PASSKEY", m.PassKey, m.PassKeyFile)
	if err != nil {
		return nil, mpesa.Config{}, err
	}
	password, err := secretSetting("LEDGER_MPESA_INITIATOR_PASSWORD", m.InitiatorPassword, m.InitiatorPasswordFile)
	if err != nil {
		return nil, mpesa.Config{}, err
	}
	cert, err := os.ReadFile(m.CertFile)
	if err != nil {
		return nil, mpesa.Config{}, fmt.Errorf("LEDGER_MPESA_CERT_FILE: %w", err)
	}
	credential, err := mpesa.SecurityCredential(password, cert)
	if err != nil {
		return nil, mpesa.Config{}, fmt.Errorf("LEDGER_MPESA_CERT_FILE: %w", err)
	}
	client := mpesa.NewClient(m.BaseURL, m.ConsumerKey, secret, &http.Client{Timeout: mpesaTimeout})
	return client, mpesa.Config{ShortCode: m.ShortCode, PassKey: passkey, B2CShortCode: m.B2CShortCode, Initiator: m.Initiator,
		SecurityCredential: credential, CallbackURL: cfg.PublicURL}, nil
}
