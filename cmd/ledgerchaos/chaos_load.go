package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/ledger/ledger/cmd/internal/benchkit"
)

// chaosLoad is the mixed load of a fault scenario: users created, the
// owners' mobile-money accounts added and removed, payments created and
// deposited through the sandbox. It remembers every write the cluster
// acknowledged (2xx), which is what the scenario then expects to find.
type chaosLoad struct {
	c        *chaosClient
	partners []benchkit.Partner
	// webhookURL gives the webhookUrl of the n-th payment (the receiver
	// scenario sends some to a hostile or a slow receiver).
	webhookURL func(n int64) string
	secret     string
	payments   atomic.Int64
	// rails, per partner, and fakes are the rails scenario's corridors and
	// providers: its payments go there instead of the sandbox.
	rails []railsPartner
	fakes *railsFakes

	mu    sync.Mutex
	acked chaosAcked
	// momo is, per partner, the owner's accounts as acknowledged: id →
	// present. Only worker p writes partner p's accounts, so the expected
	// state is exact. An id whose last write got no definite answer is in
	// momoUnsure and not checked.
	momo       []map[string]bool
	momoUnsure []map[string]bool
	unanswered int
}

// chaosAcked is what the cluster acknowledged.
type chaosAcked struct {
	Users    []ackedResource
	Payments []ackedPayment
	MomoAdds int
	MomoDels int
}

type ackedResource struct {
	Partner int
	ID      string
}

type ackedPayment struct {
	ackedResource
	Deposited   bool
	DepositedAt time.Time
	WebhookURL  string
}

func newChaosLoad(c *chaosClient, partners []benchkit.Partner, secret string, webhookURL func(int64) string) *chaosLoad {
	l := &chaosLoad{c: c, partners: partners, secret: secret, webhookURL: webhookURL}
	for range partners {
		l.momo = append(l.momo, map[string]bool{})
		l.momoUnsure = append(l.momoUnsure, map[string]bool{})
	}
	return l
}

// run drives workers until ctx ends, starting rate operations a second
// between them (open loop, so a slow cluster builds a backlog as real
// traffic would, bounded by the workers). Worker w acts as partner
// w % partners and, if w < partners, is the only one changing that owner's
// momo accounts.
func (l *chaosLoad) run(ctx context.Context, workers int, rate float64) {
	due := make(chan struct{})
	go func() {
		t := time.NewTicker(time.Duration(float64(time.Second) / rate))
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				select {
				case due <- struct{}{}:
				default: // every worker busy: this operation is dropped, not queued
				}
			}
		}
	}()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-ctx.Done():
					return
				case <-due:
					l.op(ctx, w)
				}
			}
		}()
	}
	wg.Wait()
}

// op runs one operation; what it fails to get acknowledged is counted,
// not fatal: the cluster is being broken on purpose.
func (l *chaosLoad) op(ctx context.Context, w int) {
	p := w % len(l.partners)
	var err error
	switch r := rand.IntN(100); {
	case r < 25:
		err = l.createUser(ctx, p)
	case r < 40 && w < len(l.partners):
		err = l.changeMomo(ctx, p)
	case l.fakes != nil:
		err = l.payRails(ctx, p)
	default:
		err = l.payAndDeposit(ctx, p)
	}
	if err != nil && ctx.Err() == nil {
		l.mu.Lock()
		l.unanswered++
		l.mu.Unlock()
	}
}

func (l *chaosLoad) createUser(ctx context.Context, p int) error {
	body, _ := json.Marshal(map[string]string{"email": "chaos-" + uuid.NewString() + "@example.com", "name": "Chaos User"})
	a, err := l.c.do(ctx, http.MethodPost, "/users", l.partners[p].Token, body)
	if err != nil || a.Status >= 300 {
		return orStatus(err, "POST /users", a)
	}
	var u struct {
		UserID string `json:"userId"`
	}
	if err := json.Unmarshal(a.Body, &u); err != nil || u.UserID == "" {
		return fmt.Errorf("POST /users answer %q", a.Body)
	}
	l.mu.Lock()
	l.acked.Users = append(l.acked.Users, ackedResource{Partner: p, ID: u.UserID})
	l.mu.Unlock()
	return nil
}

// changeMomo adds an account to partner p's owner, or removes one once
// six are there (an owner may hold ten).
func (l *chaosLoad) changeMomo(ctx context.Context, p int) error {
	l.mu.Lock()
	var present []string
	for id, ok := range l.momo[p] {
		if ok && !l.momoUnsure[p][id] {
			present = append(present, id)
		}
	}
	l.mu.Unlock()
	tok := l.partners[p].Token
	if len(present) >= 6 {
		id := present[rand.IntN(len(present))]
		a, err := l.c.do(ctx, http.MethodDelete, "/profile/momo/"+id, tok, nil)
		l.mu.Lock()
		defer l.mu.Unlock()
		if err != nil {
			l.momoUnsure[p][id] = true
			return err
		}
		switch {
		case a.Status == http.StatusNotFound:
			// Only this worker deletes p's accounts, so the account was there:
			// an earlier attempt of this request removed it and its answer was
			// lost (DELETE carries no Idempotency-Key replay).
			l.momo[p][id] = false
			return nil
		case a.Status >= 300:
			return errStatus("DELETE /profile/momo", a)
		}
		l.momo[p][id] = false
		l.acked.MomoDels++
		return nil
	}
	phone := fmt.Sprintf("+2547%08d", rand.IntN(100_000_000))
	body, _ := json.Marshal(map[string]string{"phoneNumber": phone, "mobileNetwork": "MOMO", "countryCode": "KE"})
	a, err := l.c.do(ctx, http.MethodPost, "/profile/momo", tok, body)
	if err != nil || a.Status >= 300 {
		// An add without a definite answer may or may not have happened;
		// the account would be unknown to the check, which only looks for
		// the acknowledged ones.
		return orStatus(err, "POST /profile/momo", a)
	}
	var prof struct {
		MomoAccounts []struct{ ID, PhoneNumber string }
	}
	if err := json.Unmarshal(a.Body, &prof); err != nil {
		return fmt.Errorf("POST /profile/momo answer %q", a.Body)
	}
	for _, acc := range prof.MomoAccounts {
		if acc.PhoneNumber == phone {
			l.mu.Lock()
			l.momo[p][acc.ID] = true
			l.acked.MomoAdds++
			l.mu.Unlock()
			return nil
		}
	}
	return fmt.Errorf("POST /profile/momo: the new account %s is not in the answer %q", phone, a.Body)
}

func (l *chaosLoad) payAndDeposit(ctx context.Context, p int) error {
	n := l.payments.Add(1)
	hook := l.webhookURL(n)
	body, _ := json.Marshal(benchkit.PaymentRequest{MerchantID: l.partners[p].MerchantID, Amount: 100 + rand.IntN(4901),
		Reference: fmt.Sprintf("Chaos %d", n), WebhookURL: hook, WebhookSecret: l.secret})
	a, err := l.c.do(ctx, http.MethodPost, "/payments", l.partners[p].Token, body)
	if err != nil || a.Status != http.StatusCreated {
		return orStatus(err, "POST /payments", a)
	}
	var created struct{ ID string }
	if err := json.Unmarshal(a.Body, &created); err != nil || created.ID == "" {
		return fmt.Errorf("POST /payments answer %q", a.Body)
	}
	rec := ackedPayment{ackedResource: ackedResource{Partner: p, ID: created.ID}, WebhookURL: hook}
	defer func() {
		l.mu.Lock()
		l.acked.Payments = append(l.acked.Payments, rec)
		l.mu.Unlock()
	}()
	a, err = l.c.do(ctx, http.MethodPost, "/sandbox/payments/"+url.PathEscape(created.ID)+"/deposit", l.partners[p].Token, nil)
	if err != nil || a.Status != http.StatusAccepted {
		return orStatus(err, "POST /sandbox/payments/{id}/deposit", a)
	}
	rec.Deposited, rec.DepositedAt = true, time.Now()
	return nil
}

// expectedMomo returns, per partner, the account ids that must be present
// and those that must be gone.
func (l *chaosLoad) expectedMomo() (present, gone []map[string]bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for p := range l.momo {
		present, gone = append(present, map[string]bool{}), append(gone, map[string]bool{})
		for id, ok := range l.momo[p] {
			switch {
			case l.momoUnsure[p][id]:
			case ok:
				present[p][id] = true
			default:
				gone[p][id] = true
			}
		}
	}
	return present, gone
}

func (l *chaosLoad) snapshot() (chaosAcked, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	a := l.acked
	a.Users = append([]ackedResource(nil), l.acked.Users...)
	a.Payments = append([]ackedPayment(nil), l.acked.Payments...)
	return a, l.unanswered
}

// orStatus is err, or the unwanted answer a as an error.
func orStatus(err error, what string, a chaosAnswer) error {
	if err != nil {
		return err
	}
	return errStatus(what, a)
}
