package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ledger/ledger/cmd/internal/benchkit"
	"github.com/ledger/ledger/workers/webhooks"
)

func TestKeyFlags(t *testing.T) {
	t.Parallel()
	p, err := parsePaymentsFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !p.keyed || p.compareKeys {
		t.Errorf("payments defaults: keyed %t, compare-keys %t; want true, false", p.keyed, p.compareKeys)
	}
	l, err := parseLifecycleFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !l.keyed {
		t.Error("lifecycle default: keyed false, want true")
	}
	p, err = parsePaymentsFlags([]string{"-idempotency-key=false", "-partners", "1", "-compare-keys"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if p.keyed || !p.compareKeys || p.partners != 1 {
		t.Errorf("payments: keyed %t, compare-keys %t, partners %d; want false, true, 1", p.keyed, p.compareKeys, p.partners)
	}
	l, err = parseLifecycleFlags([]string{"-idempotency-key=false", "-partners", "1"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if l.keyed || l.partners != 1 {
		t.Errorf("lifecycle: keyed %t, partners %d; want false, 1", l.keyed, l.partners)
	}
	a, err := parseAllFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !a.payments.compareKeys || !a.payments.keyed || !a.lifecycle.keyed {
		t.Errorf("all: payments compare-keys %t keyed %t, lifecycle keyed %t; want true each",
			a.payments.compareKeys, a.payments.keyed, a.lifecycle.keyed)
	}
}

func TestPaymentLoadKey(t *testing.T) {
	t.Parallel()
	keys := make(chan string, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		keys <- r.Header.Get("Idempotency-Key")
		w.WriteHeader(http.StatusCreated)
	}))
	t.Cleanup(srv.Close)
	for _, keyed := range []bool{true, false} {
		l := &paymentLoad{client: srv.Client(), baseURL: srv.URL, partners: []benchkit.Partner{{Token: "t"}}, keyed: keyed}
		if err := l.op(t.Context(), 0); err != nil {
			t.Fatal(err)
		}
		got := <-keys
		if _, err := uuid.Parse(got); keyed && err != nil {
			t.Errorf("keyed: Idempotency-Key %q, want a UUID", got)
		}
		if !keyed && got != "" {
			t.Errorf("plain: Idempotency-Key %q, want none", got)
		}
	}
}

func TestNewKeyComparison(t *testing.T) {
	t.Parallel()
	k := newKeyComparison(throughput{PerSecond: 800}, throughput{PerSecond: 1000})
	if k.KeyedPlainRatio != 0.8 {
		t.Errorf("keyed/plain = %g, want 0.8", k.KeyedPlainRatio)
	}
	if k := newKeyComparison(throughput{PerSecond: 800}, throughput{}); k.KeyedPlainRatio != 0 {
		t.Errorf("keyed/plain with no plain figure = %g, want 0", k.KeyedPlainRatio)
	}
	b, err := json.Marshal(paymentsLevel{Concurrency: 64, Keys: k})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"keyedPlainRatio":0.8`) {
		t.Errorf("JSON %s has no keyedPlainRatio 0.8", b)
	}
}

func TestRenderMarkdownKeys(t *testing.T) {
	t.Parallel()
	r := sampleAllReport()
	pay := *r.Payments.Report
	pay.Params.IdempotencyKey = true
	pay.Levels = []paymentsLevel{pay.Levels[0]}
	pay.Levels[0].Keys = newKeyComparison(throughput{PerSecond: 905, P99Ms: 162}, throughput{PerSecond: 1131, P99Ms: 120})
	r.Payments.Report = &pay
	md := renderMarkdown(r)
	for _, want := range []string{
		"8 partners, an Idempotency-Key on every POST,",
		"| concurrency | keyed / plain | keyed payments/s | plain payments/s | keyed p99 ms | plain p99 ms |",
		"| 64 | 80% | 905 | 1,131 | 162.00 | 120.00 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q", want)
		}
	}
	if md := renderMarkdown(sampleAllReport()); strings.Contains(md, "keyed / plain") {
		t.Error("a run without -compare-keys renders a keyed / plain table")
	}
}

func TestWebhookReceiverVerifies(t *testing.T) {
	t.Parallel()
	secret := benchkit.WebhookSecret()
	r := &webhookReceiver{secret: secret, successAt: map[string]time.Time{}, seen: map[string]string{},
		stats: webhookStats{ByType: map[string]int{}}}
	deliver := func(msgID, signWith string) {
		t.Helper()
		body := `{"id":"` + msgID + `","type":"payment.success","data":{"id":"p-` + msgID + `"}}`
		now := time.Now()
		sig, err := webhooks.Sign(signWith, msgID, now, []byte(body))
		if err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequest(http.MethodPost, "/webhooks", strings.NewReader(body))
		req.Header.Set(webhooks.HeaderID, msgID)
		req.Header.Set(webhooks.HeaderTimestamp, strconv.FormatInt(now.Unix(), 10))
		req.Header.Set(webhooks.HeaderSignature, sig)
		w := httptest.NewRecorder()
		r.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			t.Errorf("status %d, want 200 (bad signatures are counted, not refused)", w.Code)
		}
	}
	deliver("m1", secret)
	deliver("m2", benchkit.WebhookSecret()) // signed with another payment's secret
	s := r.snapshot()
	if s.Received != 2 || s.BadSignatures != 1 {
		t.Errorf("received %d, bad signatures %d; want 2, 1", s.Received, s.BadSignatures)
	}
}

func TestLifecycleTargetsBadSignature(t *testing.T) {
	t.Parallel()
	r := lifecycleReport{Lifecycle: lifecycleResult{Webhooks: webhookStats{BadSignatures: 3}}}
	for _, tg := range lifecycleTargets(r) {
		if tg.Name == "webhooks with a bad signature" {
			if tg.Met || tg.Got != 3 {
				t.Errorf("target %+v, want missed with 3", tg)
			}
			return
		}
	}
	t.Error("no bad-signature target")
}
