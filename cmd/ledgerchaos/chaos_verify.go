package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledger/ledger/cmd/internal/benchkit"
	"github.com/ledger/ledger/domain"
)

// chaosFindings are the numbers a scenario's check found once the cluster
// was healthy again and had settled.
type chaosFindings struct {
	Settled       bool `json:"settled"` // every payment final, every webhook answered, the relay caught up
	Events        int  `json:"events"`
	StreamMsgs    int  `json:"streamMessages"`
	StreamMissing int  `json:"streamMissing"` // events never published
	StreamDups    int  `json:"streamDuplicates"`
	StreamExtra   int  `json:"streamExtra"` // messages of no stored event

	UsersMissing    int `json:"usersMissing"`    // acknowledged, then not found
	PaymentsMissing int `json:"paymentsMissing"` // acknowledged, then not found
	MomoMissing     int `json:"momoMissing"`     // acknowledged added, not in the profile
	MomoResurrected int `json:"momoResurrected"` // acknowledged removed, in the profile

	Deposited     int `json:"deposited"`     // acknowledged deposits
	Succeeded     int `json:"succeeded"`     // of those, payments that succeeded
	NotFinal      int `json:"notFinal"`      // payments of the store funded but neither success nor failed
	StoreSuccess  int `json:"storeSuccess"`  // payments of the store that succeeded (a deposit whose answer was lost included)
	PayoutCalls   int `json:"payoutCalls"`   // calls to the sandbox rail, retries included
	Payouts       int `json:"payouts"`       // payouts the rail made
	DoublePayouts int `json:"doublePayouts"` // payments paid out more than once

	Deliveries         int `json:"webhookDeliveries"`  // status webhooks the store owes
	Delivered2xx       int `json:"webhooksDelivered"`  // answered 2xx by the receiver
	WebhooksLost       int `json:"webhooksLost"`       // owed, never answered 2xx
	Repeats            int `json:"repeatsAfter2xx"`    // sent again after the receiver's 2xx
	RepeatsUnexplained int `json:"repeatsUnexplained"` // of those, not in flight at a kill or outage
	BadWebhooks        int `json:"badWebhooks"`        // bad signature or malformed
	// RepeatExamples are the first few unexplained repeats, with their
	// times, to set beside the scenario's faults in its log; RepeatLog,
	// what the ledgerd processes logged about those webhooks (their
	// webhook-id is the event's id), as the run's logs may not outlive it.
	RepeatExamples []string `json:"repeatExamples,omitempty"`
	RepeatLog      []string `json:"repeatLog,omitempty"`
	repeatIDs      []string

	AuditVerify string `json:"auditVerify"` // "ok", or its first lines
}

// settle waits until the cluster has finished the load's work: every
// payment final (one never deposited expires after chaosValidity), no
// webhook delivery pending, every event sequenced and published. It says whether that happened within limit.
func settle(ctx context.Context, pool *pgxpool.Pool, deposited []string, limit time.Duration) (bool, error) {
	deadline := time.Now().Add(limit)
	for {
		var open int
		err := pool.QueryRow(ctx, `SELECT
			(SELECT count(*) FROM payments WHERE id = ANY($1::uuid[]) AND status NOT IN ('success', 'failed'))
			+ (SELECT count(*) FROM payments WHERE status NOT IN ('expired', 'success', 'failed'))
			+ (SELECT count(*) FROM webhook_deliveries WHERE status = 'pending')
			+ (SELECT count(*) FROM events WHERE position IS NULL)
			+ (SELECT last_position - published_position FROM sequencer_state)`, deposited).Scan(&open)
		if err == nil && open == 0 {
			return true, nil
		}
		if time.Now().After(deadline) {
			return false, err
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// verifyStore counts payments, payouts and deliveries in Postgres, and
// compares every stored event with the JetStream stream by Nats-Msg-Id.
func verifyStore(ctx context.Context, pool *pgxpool.Pool, natsURL string, deposited []string, f *chaosFindings) error {
	f.Deposited = len(deposited)
	err := pool.QueryRow(ctx, `SELECT
			(SELECT count(*) FROM payments WHERE id = ANY($1::uuid[]) AND status = 'success'),
			(SELECT count(*) FROM payments WHERE status NOT IN ('expired', 'success', 'failed')),
			(SELECT count(*) FROM payments WHERE status = 'success'),
			(SELECT coalesce(sum(calls), 0) FROM sandbox_payout_calls),
			(SELECT count(*) FROM sandbox_payouts WHERE NOT refund),
			(SELECT count(*) FROM (SELECT payment_id FROM sandbox_payouts WHERE NOT refund GROUP BY payment_id HAVING count(*) > 1) d)`, deposited).
		Scan(&f.Succeeded, &f.NotFinal, &f.StoreSuccess, &f.PayoutCalls, &f.Payouts, &f.DoublePayouts)
	if err != nil {
		return fmt.Errorf("count payments: %w", err)
	}
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM (`+owedWebhooks+`) o`, statusEventTypes()).Scan(&f.Deliveries); err != nil {
		return fmt.Errorf("count webhooks owed: %w", err)
	}
	rows, err := pool.Query(ctx, `SELECT id::text FROM events`)
	if err != nil {
		return err
	}
	stored := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return err
		}
		stored[id] = true
	}
	if err := rows.Err(); err != nil {
		return err
	}
	f.Events = len(stored)
	published, err := streamMessageIDs(ctx, natsURL, "LEDGER")
	if err != nil {
		return err
	}
	for id, n := range published {
		f.StreamMsgs += n
		f.StreamDups += n - 1
		if !stored[id] {
			f.StreamExtra++
		}
	}
	for id := range stored {
		if published[id] == 0 {
			f.StreamMissing++
		}
	}
	return nil
}

// streamMessageIDs reads the whole stream with an ordered consumer and
// counts its messages by Nats-Msg-Id.
func streamMessageIDs(ctx context.Context, natsURL, stream string) (map[string]int, error) {
	nc, err := nats.Connect(natsURL, nats.Name("ledgerchaos check"))
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return nil, fmt.Errorf("stream %s: %w", stream, err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		return nil, err
	}
	ids := map[string]int{}
	if info.State.Msgs == 0 {
		return ids, nil
	}
	cons, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		return nil, err
	}
	for seen := uint64(0); seen < info.State.Msgs; {
		batch, err := cons.FetchNoWait(500)
		if err != nil {
			return nil, err
		}
		n := 0
		for m := range batch.Messages() {
			ids[m.Headers().Get(jetstream.MsgIDHeader)]++
			n++
		}
		// In a cluster the consumer lives on the stream's leader, and the
		// server this check is connected to may not have heard of it yet:
		// the fetch finds no responder, and is tried again.
		if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrNoResponders) {
			return nil, err
		}
		if n == 0 {
			time.Sleep(50 * time.Millisecond)
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
		}
		seen += uint64(n)
	}
	return ids, nil
}

// verifyAcknowledged looks up, through the API, every write the cluster
// acknowledged.
func verifyAcknowledged(ctx context.Context, c *chaosClient, l *chaosLoad, acked chaosAcked, f *chaosFindings) error {
	// countMissing GETs each resource under prefix with its partner's token.
	countMissing := func(prefix string, rs []ackedResource, missing *int) error {
		for _, r := range rs {
			a, err := c.do(ctx, http.MethodGet, prefix+r.ID, l.partners[r.Partner].Token, nil)
			if err != nil {
				return err
			}
			if a.Status != http.StatusOK {
				*missing++
			}
		}
		return nil
	}
	payments := make([]ackedResource, len(acked.Payments))
	for i, p := range acked.Payments {
		payments[i] = p.ackedResource
	}
	if err := countMissing("/users/", acked.Users, &f.UsersMissing); err != nil {
		return err
	}
	if err := countMissing("/payments/", payments, &f.PaymentsMissing); err != nil {
		return err
	}
	present, gone := l.expectedMomo()
	for p, pt := range l.partners {
		a, err := c.do(ctx, http.MethodGet, "/profile", pt.Token, nil)
		if err != nil {
			return err
		}
		var prof struct{ MomoAccounts []struct{ ID string } }
		if a.Status != http.StatusOK || json.Unmarshal(a.Body, &prof) != nil {
			return errStatus("GET /profile", a)
		}
		have := map[string]bool{}
		for _, acc := range prof.MomoAccounts {
			have[acc.ID] = true
		}
		for id := range present[p] {
			if !have[id] {
				f.MomoMissing++
			}
		}
		for id := range gone[p] {
			if have[id] {
				f.MomoResurrected++
			}
		}
	}
	return nil
}

// owedWebhooks lists the ids of the status events ($1: their types) of
// payments with a webhookUrl: the deliveries the store owes (contract §8),
// read from the events because the work list forgets what it delivered.
const owedWebhooks = `SELECT e.id::text FROM events e JOIN payments p ON p.id = e.stream_id
	WHERE e.type = ANY($1::text[]) AND coalesce(p.state->>'webhookUrl', '') <> ''`

func statusEventTypes() []string {
	types := make([]string, len(domain.PaymentStatuses))
	for i, s := range domain.PaymentStatuses {
		types[i] = "payment." + s
	}
	return types
}

// verifyWebhooks compares the deliveries the store owes with what the
// receiver answered. A delivery sent again after its 2xx is explained only
// when its 2xx fell in a disruption window: a process killed, or Postgres
// away, between the receiver's answer and the record of the attempt.
func verifyWebhooks(ctx context.Context, pool *pgxpool.Pool, r *chaosReceiver, disruptions []window, f *chaosFindings) error {
	rows, err := pool.Query(ctx, owedWebhooks, statusEventTypes())
	if err != nil {
		return err
	}
	var owed []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return err
		}
		owed = append(owed, id)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	hs, bad := r.histories()
	f.BadWebhooks = bad
	for _, id := range owed {
		if h, ok := hs[id]; ok && !h.First2xx.IsZero() {
			f.Delivered2xx++
		} else {
			f.WebhooksLost++
		}
	}
	for id, h := range hs {
		if len(h.After2xx) == 0 {
			continue
		}
		f.Repeats += len(h.After2xx)
		explained := false
		for _, w := range disruptions {
			explained = explained || w.contains(h.First2xx)
		}
		if !explained {
			f.RepeatsUnexplained += len(h.After2xx)
			if len(f.RepeatExamples) < 5 {
				f.RepeatExamples = append(f.RepeatExamples, fmt.Sprintf("%s %s of payment %s: 2xx at %s, sent again at %s",
					h.Type, id, h.PaymentID, h.First2xx.Format(time.TimeOnly+".000"), h.After2xx[0].Format(time.TimeOnly+".000")))
				f.repeatIDs = append(f.repeatIDs, id)
			}
		}
	}
	return nil
}

// logLinesAbout returns up to limit lines of the files that mention any
// of ids, each prefixed with its file's base name.
func logLinesAbout(paths, ids []string, limit int) []string {
	var lines []string
	for _, path := range paths {
		f, err := os.Open(path)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() && len(lines) < limit {
			if slices.ContainsFunc(ids, func(id string) bool { return strings.Contains(sc.Text(), id) }) {
				lines = append(lines, filepath.Base(path)+": "+sc.Text())
			}
		}
		f.Close()
	}
	return lines
}

// window is a span of time in which something was broken on purpose.
type window struct{ from, to time.Time }

func (w window) contains(t time.Time) bool { return !t.Before(w.from) && !t.After(w.to) }

// auditVerify runs ledgerctl audit verify on the cluster's database.
func auditVerify(ctx context.Context, ledgerctl, dbURL string) string {
	cmd := exec.CommandContext(ctx, ledgerctl, "audit", "verify")
	cmd.Env = benchkit.Env("DATABASE_URL=" + dbURL)
	out, err := cmd.CombinedOutput()
	if err == nil {
		return "ok"
	}
	lines := strings.SplitN(strings.TrimSpace(string(out)), "\n", 8)
	return errors.Join(err, errors.New(strings.Join(lines[:min(len(lines), 7)], "\n"))).Error()
}
