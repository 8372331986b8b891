package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ledger/ledger/eventstore/eventrow"
	"github.com/ledger/ledger/eventstore/pguuid"
)

// auditSnapshot is a set of connections that see one and the same state of
// the database: read-only REPEATABLE READ transactions sharing an exported
// snapshot, in which the chains and the postings are checked while the
// service keeps writing. The connections are its own, not the pool's, as
// the relay's are: one streams the events for the whole run.
type auditSnapshot struct {
	conns []*pgx.Conn
}

// openAuditSnapshot connects n times and begins n transactions, all in the
// snapshot of the first. The first locks ledger_entries (ACCESS SHARE, as
// reading it does) before it takes the snapshot: a query resolves a
// table's name in the catalog as it is now, not as of the snapshot, so a
// rebuild's swap committed between the snapshot and the first read of the
// table would have the audit read the new table in the old snapshot,
// short of the rows the swap itself wrote.
func openAuditSnapshot(ctx context.Context, cfg *pgx.ConnConfig, n int) (*auditSnapshot, error) {
	s := &auditSnapshot{}
	var id string
	for i := range n {
		c, err := pgx.ConnectConfig(ctx, cfg.Copy())
		if err != nil {
			s.close()
			return nil, fmt.Errorf("audit snapshot: connect: %w", err)
		}
		pguuid.Register(c.TypeMap())
		s.conns = append(s.conns, c)
		if _, err := c.Exec(ctx, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"); err != nil {
			s.close()
			return nil, fmt.Errorf("audit snapshot: %w", err)
		}
		if i == 0 {
			if _, err = c.Exec(ctx, "LOCK TABLE public.ledger_entries IN ACCESS SHARE MODE"); err == nil {
				err = c.QueryRow(ctx, "SELECT pg_export_snapshot()").Scan(&id)
			}
		} else {
			_, err = c.Exec(ctx, "SET TRANSACTION SNAPSHOT '"+strings.ReplaceAll(id, "'", "''")+"'")
		}
		if err != nil {
			s.close()
			return nil, fmt.Errorf("audit snapshot: %w", err)
		}
	}
	return s, nil
}

// close ends the transactions with the connections.
func (s *auditSnapshot) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, c := range s.conns {
		c.Close(ctx)
	}
	s.conns = nil
}

// auditEventColumns are the columns of an event as the event store reads
// them (eventrow), so that the hash is recomputed over exactly the envelope
// the sequencer hashed.
var auditEventColumns = eventrow.ColumnsOf("e")
