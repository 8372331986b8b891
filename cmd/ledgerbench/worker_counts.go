package main

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// workerCounts is what ledgerd's workers did over a phase, from its
// /metrics (the difference between a scrape before and one after): who
// took each step (the fast path of the process that made the change, or
// the JetStream messages and the webhook dispatcher behind it), the
// messages each durable consumer handled by outcome, and anything given
// up on. Where the work went, not how fast: the figures that say why a
// run was slow.
type workerCounts struct {
	PayoutQueued    float64            `json:"payoutQueued"`    // deposits queued for the fast path's conversion and payout
	PayoutDropped   float64            `json:"payoutDropped"`   // its queue was full: left to the deposited message
	WebhookQueued   float64            `json:"webhookQueued"`   // status changes queued for the fast path's webhook sending
	WebhookDropped  float64            `json:"webhookDropped"`  // its queue was full: left to the dispatcher
	WebhookNoSlot   float64            `json:"webhookNoSlot"`   // queued, then no send slot was free: left to the dispatcher
	WebhookAttempts map[string]float64 `json:"webhookAttempts"` // by outcome: delivered, failed
	Messages        map[string]float64 `json:"messages"`        // "<consumer> <outcome>": ok, later (handed back), error
	DeadLetters     float64            `json:"deadLetters"`
	StalledSteps    float64            `json:"stalledSteps"`
}

// scrapeWorkerCounts reads ledgerd's worker counters.
func scrapeWorkerCounts(ctx context.Context, client *http.Client, baseURL string) (workerCounts, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, baseURL+"/metrics", nil)
	if err != nil {
		return workerCounts{}, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return workerCounts{}, fmt.Errorf("scrape /metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return workerCounts{}, fmt.Errorf("scrape /metrics: %s", resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return workerCounts{}, fmt.Errorf("scrape /metrics: %w", err)
	}
	c := workerCounts{WebhookAttempts: map[string]float64{}, Messages: map[string]float64{}}
	each := func(name string, f func(labels map[string]string, m *dto.Metric)) {
		if fam := families[name]; fam != nil {
			for _, m := range fam.GetMetric() {
				labels := map[string]string{}
				for _, l := range m.GetLabel() {
					labels[l.GetName()] = l.GetValue()
				}
				f(labels, m)
			}
		}
	}
	each("ledger_worker_fast_path_total", func(l map[string]string, m *dto.Metric) {
		v := m.GetCounter().GetValue()
		switch l["step"] + " " + l["outcome"] {
		case "payout queued":
			c.PayoutQueued = v
		case "payout dropped":
			c.PayoutDropped = v
		case "webhook queued":
			c.WebhookQueued = v
		case "webhook dropped":
			c.WebhookDropped = v
		case "webhook no_slot":
			c.WebhookNoSlot = v
		}
	})
	each("ledger_webhook_attempts_total", func(l map[string]string, m *dto.Metric) {
		c.WebhookAttempts[l["outcome"]] = m.GetCounter().GetValue()
	})
	each("ledger_worker_message_seconds", func(l map[string]string, m *dto.Metric) {
		c.Messages[l["consumer"]+" "+l["outcome"]] = float64(m.GetHistogram().GetSampleCount())
	})
	each("ledger_worker_dead_letters_total", func(_ map[string]string, m *dto.Metric) {
		c.DeadLetters += m.GetCounter().GetValue()
	})
	each("ledger_payments_stalled_total", func(_ map[string]string, m *dto.Metric) {
		c.StalledSteps += m.GetCounter().GetValue()
	})
	return c, nil
}

// summary says who took the lifecycle's steps, in one sentence for the
// terminal table and the markdown report alike.
func (c workerCounts) summary() string {
	return fmt.Sprintf("the fast path queued %s payouts (%s dropped, queue full: left to their deposited message) and %s "+
		"status changes' webhooks (%s dropped and %s with no send slot free: left to the dispatcher); webhook attempts: %s; "+
		"messages by durable consumer and outcome: %s; dead letters %s, stalled steps %s", thousands(c.PayoutQueued), thousands(c.PayoutDropped),
		thousands(c.WebhookQueued), thousands(c.WebhookDropped), thousands(c.WebhookNoSlot), byKey(c.WebhookAttempts), byKey(c.Messages),
		thousands(c.DeadLetters), thousands(c.StalledSteps))
}

// since is c minus what an earlier scrape counted.
func (c workerCounts) since(earlier workerCounts) workerCounts {
	d := workerCounts{
		PayoutQueued: c.PayoutQueued - earlier.PayoutQueued, PayoutDropped: c.PayoutDropped - earlier.PayoutDropped,
		WebhookQueued: c.WebhookQueued - earlier.WebhookQueued, WebhookDropped: c.WebhookDropped - earlier.WebhookDropped,
		WebhookNoSlot: c.WebhookNoSlot - earlier.WebhookNoSlot,
		DeadLetters:   c.DeadLetters - earlier.DeadLetters, StalledSteps: c.StalledSteps - earlier.StalledSteps,
		WebhookAttempts: map[string]float64{}, Messages: map[string]float64{},
	}
	for k, v := range c.WebhookAttempts {
		d.WebhookAttempts[k] = v - earlier.WebhookAttempts[k]
	}
	for k, v := range c.Messages {
		d.Messages[k] = v - earlier.Messages[k]
	}
	return d
}

// byKey lists counts as "key n, key n", keys sorted, zero counts left out.
func byKey(counts map[string]float64) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		if counts[k] != 0 {
			parts = append(parts, fmt.Sprintf("%s %.0f", k, counts[k]))
		}
	}
	if parts == nil {
		return "none"
	}
	return strings.Join(parts, ", ")
}
