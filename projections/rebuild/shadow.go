package rebuild

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ledger/ledger/eventstore/pguuid"
)

// connect opens the apply connections: their own, never the pool's,
// because their search_path (the shadow schema alone) and their cached
// statements (prepared against the shadow tables) must never serve anyone
// else. synchronous_commit is off for the bulk work; the swap turns it on.
//
// The large JSON values (a payment's state, and its copy in each pending
// webhook delivery) are compressed with lz4 where the server has it: less
// of the COPYs' CPU than pglz (figures: docs/performance.md, Replay), and transparent to readers, since Postgres
// records the method with each value.
func (r *rebuilder) connect(ctx context.Context) error {
	err := r.pool.QueryRow(ctx, `SELECT coalesce(bool_or('lz4' = ANY(enumvals)), false) FROM pg_settings
		WHERE name = 'default_toast_compression'`).Scan(&r.lz4)
	if err != nil {
		return fmt.Errorf("rebuild: settings: %w", err)
	}
	for range r.opt.Connections {
		cfg := r.pool.Config().ConnConfig.Copy()
		cfg.RuntimeParams["search_path"] = ident(r.shadow)
		cfg.RuntimeParams["synchronous_commit"] = "off"
		cfg.RuntimeParams["maintenance_work_mem"] = "256MB" // index builds sort in memory
		// ANALYZE advises the kernel of every block it will sample, one
		// posix_fadvise call each. The
		// shadow tables were just written and are in the page cache, so
		// the advice saves no wait and costs a system call per block.
		cfg.RuntimeParams["maintenance_io_concurrency"] = "0"
		// The apply connections build as many tables' indexes at once as
		// there are connections; parallel workers on top of that compete
		// for the same cores with their own start-up, sorted runs written
		// to temporary files and merge. On two cores they saved nothing
		// (figures: docs/performance.md, Replay). A database server with cores
		// to spare can have them back: max_parallel_maintenance_workers
		// in DATABASE_URL wins.
		if _, set := cfg.RuntimeParams["max_parallel_maintenance_workers"]; !set {
			cfg.RuntimeParams["max_parallel_maintenance_workers"] = "0"
		}
		if r.lz4 {
			cfg.RuntimeParams["default_toast_compression"] = "lz4"
		}
		conn, err := pgx.ConnectConfig(ctx, cfg)
		if err != nil {
			return fmt.Errorf("rebuild: connect: %w", err)
		}
		pguuid.Register(conn.TypeMap()) // every COPY row carries ids
		r.conns = append(r.conns, conn)
	}
	return nil
}

func (r *rebuilder) close() {
	for _, c := range r.conns {
		c.Close(context.Background())
	}
}

// dropLeftovers drops the schemas of rebuilds that died before cleaning up
// (the caller holds the rebuild lock, so none of them is running).
func (r *rebuilder) dropLeftovers(ctx context.Context) error {
	rows, err := r.pool.Query(ctx, `SELECT nspname FROM pg_namespace WHERE nspname ~ '^rebuild_[0-9a-f]{12}(_old)?$'`)
	if err != nil {
		return fmt.Errorf("rebuild: find leftovers: %w", err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("rebuild: find leftovers: %w", err)
	}
	for _, n := range names {
		if err := r.dropSchema(ctx, n); err != nil {
			return err
		}
	}
	return nil
}

// dropSchema drops a rebuild schema and what is in it. A retired table
// with a foreign key to documents needs a brief ACCESS EXCLUSIVE lock on
// documents to go, so the drop waits for it at most a moment at a time.
func (r *rebuilder) dropSchema(ctx context.Context, schema string) error {
	if err := execSteppingAside(ctx, r.pool, `DROP SCHEMA IF EXISTS `+ident(schema)+` CASCADE`, 50, 20*time.Millisecond); err != nil {
		return fmt.Errorf("rebuild: drop schema %s: %w", schema, err)
	}
	return nil
}

// execSteppingAside runs sql in a transaction of its own that waits 200 ms
// at most for each lock. After a lock timeout it steps aside ((try+1) ×
// step, a second at most) and tries again, up to tries times (0: until ctx
// ends). It is for statements that lock the live document store, whose
// uploads hold their transaction open for a whole request body: queueing
// behind one of them would queue every other upload behind the rebuild.
func execSteppingAside(ctx context.Context, db interface {
	Begin(context.Context) (pgx.Tx, error)
}, sql string, tries int, step time.Duration) error {
	for try := 0; ; try++ {
		err := pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SET LOCAL lock_timeout = '200ms'`); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, sql)
			return err
		})
		if err == nil || !isLockTimeout(err) || ctx.Err() != nil || (tries > 0 && try+1 >= tries) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(min(time.Duration(try+1)*step, time.Second)):
		}
	}
}

// tableDef is what a live table needs re-created on its shadow: the
// constraints and indexes LIKE ... EXCLUDING INDEXES leaves out.
type tableDef struct {
	name    string
	storage []string    // the table's storage parameters, each as name = 'value' (toast.name for its TOAST table's)
	columns []string    // ALTER TABLE clauses for what LIKE leaves out of its columns: statistics targets
	keys    [][2]string // primary key, unique and exclusion constraints: name, definition
	indexes [][2]string // other indexes: name, CREATE INDEX on the shadow table
	fks     [][2]string // foreign keys: name, definition (REFERENCES the shadow table within the group)
}

// createShadow creates the shadow schema and tables, without keys: a key
// built once over a loaded table costs less than one kept up row by row in
// stream order, which is random order for the postings' keys (their event
// ids; figures: docs/performance.md, Replay). After the fold, finishShadow
// builds them with the indexes, before the catch-up's statements (whose
// UPDATEs and ON CONFLICTs need them) write the tables.
func (r *rebuilder) createShadow(ctx context.Context) error {
	defs, err := r.describe(ctx)
	if err != nil {
		return err
	}
	r.defs = defs
	c := r.conns[0]
	if _, err := c.Exec(ctx, `CREATE SCHEMA `+ident(r.shadow)); err != nil {
		return fmt.Errorf("rebuild: create schema: %w", err)
	}
	for _, d := range defs {
		// LIKE copies no storage parameters. The shadow's autovacuum is
		// off until the swap: a table just loaded is the first autovacuum
		// picks, and a vacuum running on it when the swap moves it into
		// public holds the swap's locks past their timeout, on every
		// attempt (Postgres cancels an autovacuum only for a waiter of a
		// full deadlock_timeout, and the swap waits half that).
		others, _ := splitAutovacuumSwitches(d.storage)
		with := ` WITH (` + strings.Join(append(others, "autovacuum_enabled = false", "toast.autovacuum_enabled = false"), ", ") + `)`
		if _, err := c.Exec(ctx, `CREATE TABLE `+qualified(r.shadow, d.name)+
			` (LIKE `+qualified("public", d.name)+` INCLUDING ALL EXCLUDING INDEXES)`+with); err != nil {
			return fmt.Errorf("rebuild: create shadow %s: %w", d.name, err)
		}
		if len(d.columns) > 0 {
			if _, err := c.Exec(ctx, `ALTER TABLE `+qualified(r.shadow, d.name)+` `+strings.Join(d.columns, ", ")); err != nil {
				return fmt.Errorf("rebuild: create shadow %s: %w", d.name, err)
			}
		}
	}
	return nil
}

// autovacuumSwitches are the storage parameters the shadow tables override
// until the swap.
var autovacuumSwitches = []string{"autovacuum_enabled", "toast.autovacuum_enabled"}

// splitAutovacuumSwitches parts a table's storage options into the
// autovacuum switches and the others.
func splitAutovacuumSwitches(options []string) (others, switches []string) {
	for _, o := range options {
		name, _, _ := strings.Cut(o, " = ")
		if slices.Contains(autovacuumSwitches, name) {
			switches = append(switches, o)
		} else {
			others = append(others, o)
		}
	}
	return others, switches
}

// autovacuumRestore is the statements that give the swapped-in table d
// back its live table's autovacuum switches, in the swap's transaction.
func autovacuumRestore(d tableDef) []string {
	table := qualified("public", d.name)
	stmts := []string{`ALTER TABLE ` + table + ` RESET (` + strings.Join(autovacuumSwitches, ", ") + `)`}
	if _, set := splitAutovacuumSwitches(d.storage); len(set) > 0 {
		stmts = append(stmts, `ALTER TABLE `+table+` SET (`+strings.Join(set, ", ")+`)`)
	}
	return stmts
}

// keyStatements are the statements adding d's primary-key, unique and
// exclusion constraints to its shadow table, with their live names.
func (r *rebuilder) keyStatements(d tableDef) []string {
	var stmts []string
	for _, k := range d.keys {
		stmts = append(stmts, `ALTER TABLE `+qualified(r.shadow, d.name)+` ADD CONSTRAINT `+ident(k[0])+` `+k[1])
	}
	return stmts
}

// optionSQL is the SQL expression of a storage parameter o, an element
// of a pg_class.reloptions ("name=value"), as WITH takes it:
// prefix + name = 'value'.
func optionSQL(prefix string) string {
	return `format('` + prefix + `%I = %L', split_part(o, '=', 1), substr(o, strpos(o, '=') + 1))`
}

// keyIndexOptionsSQL is the SQL expression of index ix's storage parameters
// (ix a pg_class row, NULL for none) as WITH takes them, "" for none.
var keyIndexOptionsSQL = `coalesce((SELECT string_agg(` + optionSQL("") + `, ', ') FROM unnest(ix.reloptions) o), '')`

// withIndexOptions puts a primary or unique key's index storage
// parameters into the key's definition, as ADD CONSTRAINT takes them:
// before the constraint's attributes (DEFERRABLE, INITIALLY ...), which
// pg_get_constraintdef writes last.
func withIndexOptions(def, options string) string {
	if options == "" {
		return def
	}
	at := len(def)
	if i := strings.LastIndex(def, " DEFERRABLE"); i >= 0 {
		at = i
	}
	return def[:at] + " WITH (" + options + ")" + def[at:]
}

// describe reads the live tables' definitions and refuses what a rebuild
// cannot carry over.
func (r *rebuilder) describe(ctx context.Context) ([]tableDef, error) {
	tx, err := r.pool.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, fmt.Errorf("rebuild: describe: %w", err)
	}
	defer tx.Rollback(ctx)
	// With an empty search_path every name in the definitions below comes
	// out schema-qualified, so they can be pointed at the shadow schema.
	if _, err := tx.Exec(ctx, `SET LOCAL search_path = ''`); err != nil {
		return nil, fmt.Errorf("rebuild: describe: %w", err)
	}
	var problems []string
	rows, err := tx.Query(ctx, `SELECT t.name, c.oid IS NOT NULL,
			coalesce(c.relkind::text, ''), coalesce(c.relrowsecurity, false),
			coalesce((SELECT count(*) FROM pg_trigger g WHERE g.tgrelid = c.oid AND NOT g.tgisinternal), 0),
			coalesce((SELECT count(*) FROM pg_attrdef d WHERE d.adrelid = c.oid AND pg_get_expr(d.adbin, d.adrelid) LIKE 'nextval(%'), 0)
		FROM unnest($1::text[]) AS t(name)
		LEFT JOIN pg_class c ON c.relname = t.name AND c.relnamespace = 'public'::regnamespace`, r.tables)
	if err != nil {
		return nil, fmt.Errorf("rebuild: describe: %w", err)
	}
	var name, kind string
	var exists, rls bool
	var triggers, serials int
	_, err = pgx.ForEachRow(rows, []any{&name, &exists, &kind, &rls, &triggers, &serials}, func() error {
		switch {
		case !exists:
			problems = append(problems, fmt.Sprintf("table public.%s does not exist (migrations not applied?)", name))
		case kind != "r":
			problems = append(problems, fmt.Sprintf("public.%s is not a plain table", name))
		case rls:
			problems = append(problems, fmt.Sprintf("public.%s has row security, which a rebuild does not copy", name))
		case triggers > 0:
			problems = append(problems, fmt.Sprintf("public.%s has triggers, which a rebuild does not copy", name))
		case serials > 0:
			problems = append(problems, fmt.Sprintf("public.%s has a sequence default, which a rebuild cannot carry over", name))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("rebuild: describe: %w", err)
	}
	rows, err = tx.Query(ctx, `SELECT src.relname, con.conname, dst.relname FROM pg_constraint con
		JOIN pg_class src ON src.oid = con.conrelid JOIN pg_class dst ON dst.oid = con.confrelid
		WHERE con.contype = 'f' AND dst.relnamespace = 'public'::regnamespace AND dst.relname = ANY($1)
			AND NOT (src.relnamespace = 'public'::regnamespace AND src.relname = ANY($1))`, r.tables)
	if err != nil {
		return nil, fmt.Errorf("rebuild: describe: %w", err)
	}
	var src, con, dst string
	_, err = pgx.ForEachRow(rows, []any{&src, &con, &dst}, func() error {
		problems = append(problems, fmt.Sprintf("%s (foreign key %s) refers to %s: rebuild them together", src, con, dst))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("rebuild: describe: %w", err)
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("rebuild: %s", strings.Join(problems, "; "))
	}

	defs := make([]tableDef, len(r.tables))
	byName := map[string]*tableDef{}
	for i, t := range r.tables {
		defs[i].name = t
		byName[t] = &defs[i]
	}
	// Storage parameters (toast_tuple_target, fillfactor, autovacuum
	// settings), each as name = 'value', and those of the table's TOAST
	// table as toast.name = 'value'.
	rows, err = tx.Query(ctx, `SELECT relname, array_agg(option) FROM (
			SELECT c.relname, `+optionSQL("")+` AS option
			FROM pg_class c, unnest(c.reloptions) AS o
			WHERE c.relnamespace = 'public'::regnamespace AND c.relname = ANY($1)
			UNION ALL
			SELECT c.relname, `+optionSQL("toast.")+`
			FROM pg_class c JOIN pg_class toast ON toast.oid = c.reltoastrelid, unnest(toast.reloptions) AS o
			WHERE c.relnamespace = 'public'::regnamespace AND c.relname = ANY($1)) AS options
		GROUP BY relname`, r.tables)
	if err != nil {
		return nil, fmt.Errorf("rebuild: describe: %w", err)
	}
	var table string
	var storage []string
	_, err = pgx.ForEachRow(rows, []any{&table, &storage}, func() error {
		byName[table].storage = storage
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("rebuild: describe: %w", err)
	}
	// Statistics targets set on columns.
	rows, err = tx.Query(ctx, `SELECT c.relname, format('ALTER COLUMN %I SET STATISTICS %s', a.attname, a.attstattarget)
		FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
		WHERE c.relnamespace = 'public'::regnamespace AND c.relname = ANY($1)
			AND a.attnum > 0 AND NOT a.attisdropped AND a.attstattarget >= 0
		ORDER BY c.relname, a.attnum`, r.tables)
	if err != nil {
		return nil, fmt.Errorf("rebuild: describe: %w", err)
	}
	var clause string
	_, err = pgx.ForEachRow(rows, []any{&table, &clause}, func() error {
		byName[table].columns = append(byName[table].columns, clause)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("rebuild: describe: %w", err)
	}
	// Keys and foreign keys, with pg_get_constraintdef's text; a foreign key
	// to a table of the group is pointed at its shadow. The text leaves out
	// a primary or unique key's index's storage parameters (an exclusion
	// constraint's has them): they are read beside it.
	rows, err = tx.Query(ctx, `SELECT t.relname, con.conname, con.contype::text,
			CASE WHEN con.contype = 'f' AND ref.relnamespace = 'public'::regnamespace AND ref.relname = ANY($1)
				THEN replace(pg_get_constraintdef(con.oid), format('REFERENCES public.%I(', ref.relname), format('REFERENCES %I.%I(', $2::text, ref.relname))
				ELSE pg_get_constraintdef(con.oid) END,
			`+keyIndexOptionsSQL+`
		FROM pg_constraint con JOIN pg_class t ON t.oid = con.conrelid LEFT JOIN pg_class ref ON ref.oid = con.confrelid
			LEFT JOIN pg_class ix ON ix.oid = con.conindid AND con.contype IN ('p', 'u')
		WHERE t.relnamespace = 'public'::regnamespace AND t.relname = ANY($1) AND con.contype IN ('p', 'u', 'x', 'f')
		ORDER BY t.relname, con.contype DESC, con.conname`, r.tables, r.shadow)
	if err != nil {
		return nil, fmt.Errorf("rebuild: describe: %w", err)
	}
	var cname, ctype, def, options string
	_, err = pgx.ForEachRow(rows, []any{&table, &cname, &ctype, &def, &options}, func() error {
		d := byName[table]
		if ctype == "f" {
			d.fks = append(d.fks, [2]string{cname, def})
		} else {
			d.keys = append(d.keys, [2]string{cname, withIndexOptions(def, options)})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("rebuild: describe: %w", err)
	}
	// Indexes that back no constraint, re-pointed at the shadow table; their
	// names are free there.
	rows, err = tx.Query(ctx, `SELECT t.relname, i.relname, pg_get_indexdef(x.indexrelid),
			replace(pg_get_indexdef(x.indexrelid), format(' ON public.%I ', t.relname), format(' ON %I.%I ', $2::text, t.relname))
		FROM pg_index x JOIN pg_class t ON t.oid = x.indrelid JOIN pg_class i ON i.oid = x.indexrelid
		WHERE t.relnamespace = 'public'::regnamespace AND t.relname = ANY($1)
			AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid AND c.conrelid = x.indrelid AND c.contype IN ('p', 'u', 'x'))
		ORDER BY t.relname, i.relname`, r.tables, r.shadow)
	if err != nil {
		return nil, fmt.Errorf("rebuild: describe: %w", err)
	}
	var iname, orig string
	_, err = pgx.ForEachRow(rows, []any{&table, &iname, &orig, &def}, func() error {
		if def == orig {
			return fmt.Errorf("index %s: cannot point %q at the shadow table", iname, orig)
		}
		byName[table].indexes = append(byName[table].indexes, [2]string{iname, def})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("rebuild: describe: %w", err)
	}
	return defs, nil
}

// onEveryConn runs the statements, each on whichever apply connection is
// free.
func (r *rebuilder) onEveryConn(ctx context.Context, stmts []string) error {
	jobs := make([]func(context.Context, *pgx.Conn) error, len(stmts))
	for i, sql := range stmts {
		jobs[i] = func(ctx context.Context, c *pgx.Conn) error {
			if _, err := c.Exec(ctx, sql); err != nil {
				return fmt.Errorf("rebuild: %s: %w", sql, err)
			}
			return nil
		}
	}
	return r.onEveryConnDo(ctx, jobs)
}

// onEveryConnDo runs the jobs, each on whichever apply connection is free.
func (r *rebuilder) onEveryConnDo(ctx context.Context, jobs []func(context.Context, *pgx.Conn) error) error {
	next := make(chan func(context.Context, *pgx.Conn) error, len(jobs))
	for _, job := range jobs {
		next <- job
	}
	close(next)
	errs := make([]error, len(r.conns))
	var wg sync.WaitGroup
	for i, c := range r.conns {
		wg.Go(func() {
			for job := range next {
				if err := job(ctx, c); err != nil {
					errs[i] = err
					return
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
