package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore/eventrow"
)

const exportHelp = `usage: ledgerctl events export [flags]

Writes the event store's sequenced events (their position, hash and prevhash
final) as NDJSON in position order, one CloudEvents envelope per line: the
envelope as stored, with every extension and the personal data (the auditor's
export, from which every hash can be recomputed), or with --public the form
published on NATS, whose data leaves personal fields out (its hash still
refers to the stored event). Events are read in batches ("position > last",
1000 at a time), written and flushed as they come: memory stays constant
whatever the size of the store, and ledgerd may keep writing meanwhile.

Resuming: --after is the last position already exported; only the events
after it are written. At the end, stderr says whether the export is complete
(every event sequenced so far written) or not (stopped by --limit, an error
or Ctrl-C), the last position written, and the exact command that fetches
what comes next: the rest of an incomplete export, or the events appended
after a complete one. With --out, events are appended to FILE (created with
mode 0600: it holds personal data); when --after is not given, the export
continues after the position of FILE's last line, so that command is the same
command again, with no event written twice and none skipped. An incomplete
last line, left by an interrupted run, is cut off and its event exported
again. An --after before FILE's last position is refused.

Flags:
`

// exportBatchSize is how many events export reads per query.
const exportBatchSize = 1000

func eventsExport(ctx context.Context, db *database, args []string, stdout io.Writer) error {
	x := exporter{db: db, batchSize: exportBatchSize, stderr: os.Stderr}
	return x.run(ctx, args, stdout)
}

// exporter writes events export's NDJSON.
type exporter struct {
	db        *database // opened once the flags are read
	batchSize int       // events per query
	stderr    io.Writer // where the last position written is reported
	onBatch   func(n int)
}

// exportFilter selects the events exported.
type exportFilter struct {
	tenant  uuid.UUID // uuid.Nil: every tenant
	typ     string    // stored type, "payment.deposited"; "": every type
	version int       // schema version; 0: every version
}

func (x exporter) run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("events export", flag.ContinueOnError)
	fs.SetOutput(x.stderr)
	after := fs.Int64("after", 0, "the last `POSITION` already exported: write the events after it\n(default 0, or with --out the position of FILE's last line)")
	tenant := fs.String("tenant", "", "only the events of the tenant `ID`")
	typ := fs.String("type", "", "only the events of type `TYPE`: a CloudEvents type (ledger.payment.deposited.v1)\nor its short form for every version (payment.deposited)")
	limit := fs.Int64("limit", 0, "write at most `N` events (0: every one)")
	out := fs.String("out", "", "append to `FILE`, continuing after its last event, instead of writing to stdout")
	public := fs.Bool("public", false, "write the NATS publication form: personal data left out of data")
	if ok, err := parseEventsFlags(fs, exportHelp, args); !ok {
		return err
	}
	afterGiven := false
	fs.Visit(func(f *flag.Flag) { afterGiven = afterGiven || f.Name == "after" })
	if *after < 0 || *limit < 0 {
		return errors.New("events export: --after and --limit must not be negative")
	}
	filter, err := parseExportFilter(*tenant, *typ)
	if err != nil {
		return err
	}
	if err := x.db.open(ctx); err != nil {
		return err
	}

	w, closeOut := stdout, func() error { return nil }
	if *out != "" {
		f, last, err := openExportFile(*out, x.stderr)
		if err != nil {
			return err
		}
		switch {
		case !afterGiven:
			*after = last
		case *after < last:
			f.Close()
			return fmt.Errorf("events export: --after %d is before position %d, the last event already in %s: "+
				"the export would repeat events; leave --after out to continue after %d, or write to another file",
				*after, last, *out, last)
		}
		w, closeOut = f, func() error { return errors.Join(f.Sync(), f.Close()) }
	}

	last, n, complete, err := x.export(ctx, bufio.NewWriterSize(w, 64<<10), *after, *limit, filter, *public)
	if cerr := closeOut(); err == nil && cerr != nil {
		err = fmt.Errorf("events export: %w", cerr)
	}
	next := nextExportCommand(fs, *out != "", last)
	switch {
	case err != nil:
		fmt.Fprintf(x.stderr, "events export: interrupted: %d events written; last position exported: %d; to resume: %s\n", n, last, next)
	case !complete:
		fmt.Fprintf(x.stderr, "events export: stopped at --limit %d: %d events written; last position exported: %d; to continue: %s\n",
			*limit, n, last, next)
	default:
		fmt.Fprintf(x.stderr, "events export: complete: %d events written; last position exported: %d; for the events appended later: %s\n",
			n, last, next)
	}
	return err
}

// nextExportCommand is the command that exports what comes after position
// last: the flags as given, with --after last, or without --after at all
// when the export goes to a file, which continues after its own last line.
func nextExportCommand(fs *flag.FlagSet, toFile bool, last int64) string {
	cmd := []string{"ledgerctl", "events", "export"}
	fs.Visit(func(f *flag.Flag) {
		b, isBool := f.Value.(interface{ IsBoolFlag() bool })
		switch {
		case f.Name == "after":
		case isBool && b.IsBoolFlag():
			cmd = append(cmd, "--"+f.Name+"="+f.Value.String())
		default:
			cmd = append(cmd, "--"+f.Name, shellQuote(f.Value.String()))
		}
	})
	if !toFile {
		cmd = append(cmd, "--after", strconv.FormatInt(last, 10))
	}
	return strings.Join(cmd, " ")
}

// shellQuote quotes s for a POSIX shell, unless it needs none.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/:@=+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// export writes the events after position after that match f, at most
// limit of them (0: no limit), reading them batchSize at a time with
// "position > last" and flushing w after each batch. It returns the last
// position written (after when none was), how many events were, and
// whether that was every sequenced event (not stopped by limit or an error).
//
// Positions are gap-free and a position only becomes visible after every
// smaller one (eventstore/sequencer.go), so "position > last" never skips an
// event, however many are appended meanwhile: the same cursor makes --after
// a safe way to resume.
func (x exporter) export(ctx context.Context, w *bufio.Writer, after, limit int64, f exportFilter, public bool) (last, n int64, complete bool, err error) {
	query, filterArgs := f.query()
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	last = after
	for limit == 0 || n < limit {
		size := int64(x.batchSize)
		if limit > 0 {
			size = min(size, limit-n)
		}
		got, batchLast, err := x.batch(ctx, enc, query, append([]any{last, size}, filterArgs...), public, last)
		// The lines encoded so far are complete, even after an error: flush
		// them, then count them as written.
		if ferr := w.Flush(); ferr != nil {
			return last, n, false, fmt.Errorf("events export: write: %w", ferr)
		}
		last, n = batchLast, n+int64(got)
		if x.onBatch != nil {
			x.onBatch(got)
		}
		if err != nil {
			return last, n, false, err
		}
		if int64(got) < size { // the end of the sequenced events
			return last, n, true, nil
		}
	}
	return last, n, false, nil
}

// batch runs one query and encodes its rows as they arrive; it returns how
// many it encoded and the last one's position (last when none).
func (x exporter) batch(ctx context.Context, enc *json.Encoder, query string, args []any, public bool, last int64) (int, int64, error) {
	rows, err := x.db.pool.Query(ctx, query, args...)
	if err != nil {
		return 0, last, fmt.Errorf("events export: read events after position %d: %w", last, err)
	}
	defer rows.Close()
	got := 0
	for rows.Next() {
		rec, err := eventrow.Scan(rows)
		if err != nil {
			return got, last, fmt.Errorf("events export: %w", err)
		}
		env := domain.Envelope(rec)
		if public {
			if env.Data, err = domain.PublicData(rec); err != nil {
				return got, last, fmt.Errorf("events export: event at position %d: %w", rec.Position, err)
			}
		}
		if err := enc.Encode(env); err != nil {
			return got, last, fmt.Errorf("events export: event at position %d: %w", rec.Position, err)
		}
		got, last = got+1, rec.Position
	}
	if err := rows.Err(); err != nil {
		return got, last, fmt.Errorf("events export: read events: %w", err)
	}
	return got, last, nil
}

// exportColumns are the columns of an event as the event store reads them
// (eventrow), so that the envelope is exactly the one the sequencer hashed.
var exportColumns = eventrow.Columns

// query is the statement of one batch: $1 is the last position written, $2
// the batch size, the filter's values follow. Only sequenced events (position
// not null) are read; the filters are left out when not set, so that Postgres
// reads the events' position index, or events_tenant_position for a tenant.
func (f exportFilter) query() (string, []any) {
	var b strings.Builder
	b.WriteString(`SELECT ` + exportColumns + ` FROM events WHERE position IS NOT NULL AND position > $1`)
	var args []any
	add := func(cond string, v any) {
		args = append(args, v)
		fmt.Fprintf(&b, " AND %s = $%d", cond, len(args)+2)
	}
	if f.tenant != uuid.Nil {
		add("tenant_id", f.tenant)
	}
	if f.typ != "" {
		add("type", f.typ)
	}
	if f.version != 0 {
		add("schema_version", f.version)
	}
	b.WriteString(` ORDER BY position LIMIT $2`)
	return b.String(), args
}

// parseExportFilter reads --tenant and --type. A type is a CloudEvents type,
// "ledger.payment.deposited.v1" (that schema version only), or its short
// form "payment.deposited" (every version); it must be in the catalogue, so
// that a typo is an error rather than an empty export.
func parseExportFilter(tenant, typ string) (exportFilter, error) {
	var f exportFilter
	if tenant != "" {
		id, err := uuid.Parse(tenant)
		if err != nil {
			return f, errors.New("events export: --tenant must be a tenant id (UUID)")
		}
		f.tenant = id
	}
	if typ == "" {
		return f, nil
	}
	f.typ = typ
	if rest, ok := strings.CutPrefix(typ, "ledger."); ok {
		f.typ = rest
		if i := strings.LastIndex(rest, ".v"); i > 0 {
			if v, err := strconv.Atoi(rest[i+2:]); err == nil && v > 0 {
				f.typ, f.version = rest[:i], v
			}
		}
	}
	def, ok := domain.LookupEvent(f.typ)
	if !ok {
		return f, fmt.Errorf("events export: --type %q is not an event type of the catalogue (docs/events.md)", typ)
	}
	if f.version > def.Version {
		return f, fmt.Errorf("events export: --type %q: the catalogue's latest version is %s",
			typ, domain.CloudEventType(def.Type, def.Version))
	}
	return f, nil
}

// openExportFile opens path for appending, creating it if needed, and
// returns the position of its last event (0 when it holds none). An
// incomplete last line, left by an interrupted export, is cut off first: its
// event is exported again.
func openExportFile(path string, stderr io.Writer) (*os.File, int64, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, 0, fmt.Errorf("events export: %w", err)
	}
	last, err := lastExported(f, stderr)
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("events export: continue %s: %w", path, err)
	}
	return f, last, nil
}

// lastExported returns the position of the event on f's last line, reading
// the file backwards from its end: one block of memory whatever its size.
func lastExported(f *os.File, stderr io.Writer) (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	size := st.Size()
	end, err := lastIndexByte(f, size, '\n')
	if err != nil {
		return 0, err
	}
	if end+1 < size {
		fmt.Fprintf(stderr, "events export: %s ends with an incomplete line (%d bytes) left by an interrupted export: "+
			"cut off, its event is exported again\n", f.Name(), size-end-1)
		if err := f.Truncate(end + 1); err != nil {
			return 0, err
		}
	}
	if end < 0 {
		return 0, nil
	}
	start, err := lastIndexByte(f, end, '\n')
	if err != nil {
		return 0, err
	}
	line := make([]byte, end-start-1)
	if _, err := f.ReadAt(line, start+1); err != nil {
		return 0, err
	}
	var ev struct {
		Position *int64 `json:"position"`
	}
	if err := json.Unmarshal(line, &ev); err != nil || ev.Position == nil {
		return 0, errors.New("its last line is not an exported event: give --after, or write to another file")
	}
	return *ev.Position, nil
}

// lastIndexByte returns the offset of the last c in f before offset end, or
// -1 if there is none, reading backwards 64 KiB at a time.
func lastIndexByte(f *os.File, end int64, c byte) (int64, error) {
	buf := make([]byte, 64<<10)
	for end > 0 {
		start := max(0, end-int64(len(buf)))
		b := buf[:end-start]
		if _, err := f.ReadAt(b, start); err != nil {
			return 0, err
		}
		if i := bytes.LastIndexByte(b, c); i >= 0 {
			return start + int64(i), nil
		}
		end = start
	}
	return -1, nil
}
