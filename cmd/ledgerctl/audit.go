package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/ledger/ledger/projections/rebuild"
)

// auditReport is what audit verify prints (--json: as is).
type auditReport struct {
	OK               bool              `json:"ok"`
	EventsChecked    int64             `json:"eventsChecked"` // sequenced events whose hash and chain link were checked
	Tenants          int64             `json:"tenants"`       // hash chains walked
	Unsequenced      int64             `json:"unsequenced"`   // events still waiting for a position
	EventsReplayed   int64             `json:"eventsReplayed"`
	RowsCompared     int64             `json:"rowsCompared"`    // live read-model rows (ledger_entries included) compared with the replay's
	PostingsChecked  int64             `json:"postingsChecked"` // ledger_entries lines checked
	Differences      int64             `json:"differences"`
	ByCheck          map[string]int64  `json:"differencesByCheck"` // positions, sequencing, chain, replay, postings
	FirstDifferences []auditDifference `json:"firstDifferences"`
	Seconds          float64           `json:"seconds"`
}

// auditVerify is `ledgerctl audit verify` (contract §9). Side by side, it
// walks the hash chains in position order per tenant and checks the
// postings in ledger_entries, both in one snapshot (auditChainCheck,
// auditPostingsCheck), and replays every stream into shadow tables with
// the rebuild's own fold and compares them with the read models
// (rebuild.Verify). Each streams through the events or leaves the
// comparing to Postgres, so memory does not grow with the history.
// webhook_deliveries and webhook_attempts are the webhooks' work list and
// delivery log, not read models, and are not compared.
func auditVerify(ctx context.Context, db *database, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("audit verify", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print the report as JSON")
	keep := fs.Int("max", 20, "list at most this many differences")
	age := fs.Duration("unsequenced-after", time.Minute, "report events without a position for longer than this")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("audit verify takes no arguments, got %q", fs.Args())
	}
	*keep = max(*keep, 0)
	start := time.Now()
	chain := &auditChainCheck{unsequencedAge: *age}
	postings := &auditPostingsCheck{}
	replay := auditFindings{}
	checks := []struct {
		name string
		f    *auditFindings
	}{{"positions", &chain.positions}, {"sequencing", &chain.sequencing}, {"chain", &chain.chain},
		{"replay", &replay}, {"postings", &postings.postings}}
	for _, c := range checks {
		c.f.check, c.f.keep = c.name, *keep
	}
	defer rebuild.WithGC()()
	verified, err := runAudit(ctx, db, chain, postings, *keep)
	if err != nil {
		return err
	}
	addReplayDifferences(&replay, verified)
	rep := auditReport{EventsChecked: chain.events, Tenants: chain.tenants, Unsequenced: chain.unsequenced,
		EventsReplayed: verified.Events, PostingsChecked: postings.lines, FirstDifferences: []auditDifference{},
		ByCheck: map[string]int64{}, Seconds: time.Since(start).Seconds()}
	for _, n := range verified.Tables {
		rep.RowsCompared += n
	}
	for _, c := range checks {
		rep.ByCheck[c.name] = c.f.count
		rep.Differences += c.f.count
		for _, d := range c.f.first {
			if len(rep.FirstDifferences) < *keep {
				rep.FirstDifferences = append(rep.FirstDifferences, d)
			}
		}
	}
	rep.OK = rep.Differences == 0
	if *asJSON {
		if err := printJSON(stdout, rep); err != nil {
			return err
		}
	} else {
		printAudit(stdout, rep)
	}
	if !rep.OK {
		return fmt.Errorf("audit verify: %d differences found", rep.Differences)
	}
	return nil
}

// runAudit runs the chain and postings checks in one snapshot beside the
// replay; the first error stops the others.
func runAudit(ctx context.Context, db *database, chain *auditChainCheck, postings *auditPostingsCheck, keep int) (rebuild.Verified, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := db.open(ctx); err != nil {
		return rebuild.Verified{}, err
	}
	snap, err := openAuditSnapshot(ctx, db.pool.Config().ConnConfig, 3)
	if err != nil {
		return rebuild.Verified{}, err
	}
	defer snap.close()
	var wg sync.WaitGroup
	errs := make([]error, 3)
	var verified rebuild.Verified
	for i, check := range []func() error{
		func() error { return chain.run(ctx, snap.conns[0], snap.conns[1]) },
		func() error { return postings.run(ctx, snap.conns[2]) },
		func() (err error) { verified, err = rebuild.Verify(ctx, db.pool, rebuild.Options{}, keep); return err },
	} {
		wg.Go(func() {
			if errs[i] = check(); errs[i] != nil {
				cancel()
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return verified, fmt.Errorf("audit verify: %w", err)
	}
	return verified, nil
}

// addReplayDifferences adds the rows on which the replay and the read
// models disagree, each counted once and listed once per differing column,
// or per differing member of a column holding a JSON object.
func addReplayDifferences(f *auditFindings, v rebuild.Verified) {
	for _, d := range v.First {
		subject := d.Table + " " + d.Key
		switch d.Kind {
		case "missing":
			f.add(auditDifference{Subject: subject, Note: "missing: the events make this row"})
		case "unexpected":
			f.add(auditDifference{Subject: subject, Note: "extra: no event makes this row"})
		default:
			for _, c := range slices.Sorted(maps.Keys(d.Expected)) {
				diffAuditColumn(f, subject, c, string(d.Expected[c]), string(d.Actual[c]))
			}
		}
	}
	f.count = v.Differences
}

func printAudit(w io.Writer, r auditReport) {
	fmt.Fprintf(w, "hash chains:  %d sequenced events checked in %d tenant chains; %d events not sequenced yet\n",
		r.EventsChecked, r.Tenants, r.Unsequenced)
	fmt.Fprintf(w, "replay:       %d events replayed; %d read-model rows compared\n", r.EventsReplayed, r.RowsCompared)
	fmt.Fprintf(w, "postings:     %d ledger_entries lines checked\n", r.PostingsChecked)
	fmt.Fprintf(w, "differences:  %d (%.2f s)\n", r.Differences, r.Seconds)
	if len(r.FirstDifferences) == 0 {
		return
	}
	fmt.Fprintln(w)
	for _, d := range r.FirstDifferences {
		fmt.Fprintln(w, "  "+d.String())
	}
}
