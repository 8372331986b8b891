package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"sync"
	"time"
)

// auditReport is what audit verify prints (--json: as is).
type auditReport struct {
	OK               bool              `json:"ok"`
	EventsChecked    int64             `json:"eventsChecked"` // sequenced events whose hash and chain link were checked
	Tenants          int64             `json:"tenants"`       // hash chains walked
	Unsequenced      int64             `json:"unsequenced"`   // events still waiting for a position
	StreamsReplayed  int64             `json:"streamsReplayed"`
	EventsReplayed   int64             `json:"eventsReplayed"`
	RowsCompared     int64             `json:"rowsCompared"`    // read-model and ledger_entries rows compared field by field
	PostingsChecked  int64             `json:"postingsChecked"` // posting lines carried by the events
	Differences      int64             `json:"differences"`
	ByCheck          map[string]int64  `json:"differencesByCheck"` // positions, sequencing, chain, replay, postings
	FirstDifferences []auditDifference `json:"firstDifferences"`
	Seconds          float64           `json:"seconds"`
}

// auditVerify is `ledgerctl audit verify` (contract §9). It reads
// one snapshot of the database on two connections at once: one walks the
// hash chains in position order per tenant (auditChainCheck), the other replays
// every stream through the domain and compares it with the read models and
// ledger_entries (auditReplayCheck). Both stream the events through cursors, so
// memory does not grow with the number of events.
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
	start := time.Now()
	chain := &auditChainCheck{unsequencedAge: *age}
	replay := &auditReplayCheck{}
	checks := []struct {
		name string
		f    *auditFindings
	}{{"positions", &chain.positions}, {"sequencing", &chain.sequencing}, {"chain", &chain.chain},
		{"replay", &replay.replay}, {"postings", &replay.postings}}
	for _, c := range checks {
		c.f.check, c.f.keep = c.name, max(*keep, 0)
	}
	if err := runAudit(ctx, db, chain, replay); err != nil {
		return err
	}
	rep := auditReport{EventsChecked: chain.events, Tenants: chain.tenants, Unsequenced: chain.unsequenced,
		StreamsReplayed: replay.streams, EventsReplayed: replay.events, RowsCompared: replay.rows,
		PostingsChecked: replay.postingLines, FirstDifferences: []auditDifference{}, ByCheck: map[string]int64{},
		Seconds: time.Since(start).Seconds()}
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

// runAudit runs both checks side by side in one snapshot; the first error
// stops the other.
func runAudit(ctx context.Context, db *database, chain *auditChainCheck, replay *auditReplayCheck) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := db.open(ctx); err != nil {
		return err
	}
	snap, err := openAuditSnapshot(ctx, db.pool.Config().ConnConfig, 4)
	if err != nil {
		return err
	}
	defer snap.close()
	var wg sync.WaitGroup
	var chainErr, replayErr error
	wg.Go(func() {
		if chainErr = chain.run(ctx, snap.conns[0], snap.conns[1]); chainErr != nil {
			cancel()
		}
	})
	wg.Go(func() {
		if replayErr = replay.run(ctx, snap.conns[2], snap.conns[3]); replayErr != nil {
			cancel()
		}
	})
	wg.Wait()
	if err := errors.Join(chainErr, replayErr); err != nil {
		return fmt.Errorf("audit verify: %w", err)
	}
	return nil
}

func printAudit(w io.Writer, r auditReport) {
	fmt.Fprintf(w, "hash chains:  %d sequenced events checked in %d tenant chains; %d events not sequenced yet\n",
		r.EventsChecked, r.Tenants, r.Unsequenced)
	fmt.Fprintf(w, "replay:       %d streams replayed (%d events); %d read-model and posting rows compared\n",
		r.StreamsReplayed, r.EventsReplayed, r.RowsCompared)
	fmt.Fprintf(w, "postings:     %d posting lines checked\n", r.PostingsChecked)
	fmt.Fprintf(w, "differences:  %d (%.2f s)\n", r.Differences, r.Seconds)
	if len(r.FirstDifferences) == 0 {
		return
	}
	if int64(len(r.FirstDifferences)) < r.Differences {
		fmt.Fprintf(w, "\nfirst %d differences:\n", len(r.FirstDifferences))
	} else {
		fmt.Fprintln(w)
	}
	for _, d := range r.FirstDifferences {
		fmt.Fprintln(w, "  "+d.String())
	}
}
