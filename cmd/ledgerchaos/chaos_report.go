package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// chaosResult is one scenario's report.
type chaosResult struct {
	Scenario     string         `json:"scenario"`
	About        string         `json:"about"`
	Passed       bool           `json:"passed"`
	Seconds      float64        `json:"seconds"`
	Dir          string         `json:"dir"` // logs and data (removed when every scenario passed, unless -keep)
	Error        string         `json:"error,omitempty"`
	Answers      chaosAnswers   `json:"answers"`
	Acknowledged chaosAckCounts `json:"acknowledged"`
	Findings     chaosFindings  `json:"findings"`
	Notes        map[string]int `json:"notes,omitempty"`
	Checks       []chaosCheck   `json:"checks"`
}

// chaosAckCounts are the writes the cluster acknowledged, by kind.
type chaosAckCounts struct {
	Users       int `json:"users"`
	MomoAdded   int `json:"momoAdded"`
	MomoRemoved int `json:"momoRemoved"`
	Payments    int `json:"payments"`
	Deposits    int `json:"deposits"`
	Unanswered  int `json:"unanswered"` // operations that stopped at a refusal or never got a definite answer
}

// chaosCheck is one checked figure.
type chaosCheck struct {
	What string `json:"what"`
	Got  int    `json:"got"`
	Want string `json:"want"`
	OK   bool   `json:"ok"`
}

func (r *chaosResult) add(what string, got, want int) {
	r.Checks = append(r.Checks, chaosCheck{What: what, Got: got, Want: fmt.Sprint(want), OK: got == want})
}

func (r *chaosResult) addAtLeast(what string, got, least int) {
	r.Checks = append(r.Checks, chaosCheck{What: what, Got: got, Want: fmt.Sprintf(">= %d", least), OK: got >= least})
}

func (r *chaosResult) addAtMost(what string, got, most int) {
	r.Checks = append(r.Checks, chaosCheck{What: what, Got: got, Want: fmt.Sprintf("<= %d", most), OK: got <= most})
}

// commonChecks are what every scenario must show: nothing lost, nothing
// done twice, nothing answered 500.
func (r *chaosResult) commonChecks() {
	f, a := r.Findings, r.Answers
	settled := 0
	if f.Settled {
		settled = 1
	}
	r.add("settled: every payment final, every webhook answered, the relay caught up", settled, 1)
	r.add("answers that were 500, or 503 without problem+json and Retry-After", a.ServerErrors, 0)
	r.add("requests that never got a definite answer", a.GaveUp, 0)
	r.addAtLeast("payments deposited (acknowledged)", r.Acknowledged.Deposits, 1)
	r.add("acknowledged users missing", f.UsersMissing, 0)
	r.add("acknowledged payments missing", f.PaymentsMissing, 0)
	r.add("acknowledged momo accounts missing", f.MomoMissing, 0)
	r.add("acknowledged momo removals undone", f.MomoResurrected, 0)
	r.add("payments not final (success, failed or expired)", f.NotFinal, 0)
	r.add("payments with an acknowledged deposit that succeeded", f.Succeeded, f.Deposited)
	r.add("payouts made (one per payment that succeeded)", f.Payouts, f.StoreSuccess)
	r.add("payments paid out twice", f.DoublePayouts, 0)
	r.add("events in JetStream (by Nats-Msg-Id)", f.StreamMsgs, f.Events)
	r.add("events never published", f.StreamMissing, 0)
	r.add("events published twice", f.StreamDups, 0)
	r.add("messages of no stored event", f.StreamExtra, 0)
	r.add("status webhooks never answered 2xx", f.WebhooksLost, 0)
	r.add("webhooks sent again after a 2xx, with no crash or outage to explain it", f.RepeatsUnexplained, 0)
	r.add("webhooks with a bad signature or body", f.BadWebhooks, 0)
	auditOK := 0
	if f.AuditVerify == "ok" {
		auditOK = 1
	}
	r.add("ledgerctl audit verify passes (hash chains, replay = read models, postings)", auditOK, 1)
}

// printChaosResult prints a scenario's figures and checks.
func printChaosResult(w io.Writer, r chaosResult) {
	verdict := "PASSED"
	if !r.Passed {
		verdict = "FAILED"
	}
	fmt.Fprintf(w, "\nchaos %s: %s in %.0f s\n  %s\n", r.Scenario, verdict, r.Seconds, r.About)
	if r.Error != "" {
		fmt.Fprintf(w, "  error: %s\n", strings.ReplaceAll(r.Error, "\n", "\n    "))
	}
	a, k, f := r.Answers, r.Acknowledged, r.Findings
	fmt.Fprintf(w, "  acknowledged: %d users, %d momo added, %d momo removed, %d payments, %d deposits (%d operations unanswered or refused)\n",
		k.Users, k.MomoAdded, k.MomoRemoved, k.Payments, k.Deposits, k.Unanswered)
	fmt.Fprintf(w, "  answers: %d 2xx (%d replayed), %d 4xx, %d 429, %d 503 problem+json, %d no answer, %d other 5xx, %d gave up\n",
		a.Acknowledged, a.Replayed, a.ClientErrors, a.RateLimited, a.Unavailable, a.NoAnswer, a.ServerErrors, a.GaveUp)
	fmt.Fprintf(w, "  store: %d events, %d in JetStream; %d deposited, %d succeeded; rail: %d calls, %d payouts\n",
		f.Events, f.StreamMsgs, f.Deposited, f.Succeeded, f.PayoutCalls, f.Payouts)
	fmt.Fprintf(w, "  webhooks: %d owed, %d answered 2xx, %d sent again after a 2xx (%d unexplained)\n",
		f.Deliveries, f.Delivered2xx, f.Repeats, f.RepeatsUnexplained)
	if len(r.Notes) > 0 {
		keys := make([]string, 0, len(r.Notes))
		for k := range r.Notes {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var parts []string
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%s=%d", k, r.Notes[k]))
		}
		fmt.Fprintf(w, "  notes: %s\n", strings.Join(parts, " "))
	}
	for _, c := range r.Checks {
		mark := "ok  "
		if !c.OK {
			mark = "FAIL"
		}
		fmt.Fprintf(w, "  %s %s: %d (want %s)\n", mark, c.What, c.Got, c.Want)
	}
	for _, e := range a.Examples {
		fmt.Fprintf(w, "  server error: %s\n", e)
	}
	for _, e := range f.RepeatExamples {
		fmt.Fprintf(w, "  sent again after a 2xx, unexplained: %s\n", e)
	}
	for _, l := range f.RepeatLog {
		fmt.Fprintf(w, "    %s\n", l)
	}
	if f.AuditVerify != "ok" && f.AuditVerify != "" {
		fmt.Fprintf(w, "  audit verify: %s\n", strings.ReplaceAll(f.AuditVerify, "\n", "\n    "))
	}
}
