package rebuild

import (
	"strings"
	"testing"
)

// TestKeysKeepTheirIndexOptions adds keys as the rebuild does, from
// pg_get_constraintdef's text and their index's storage parameters
// (keyIndexOptionsSQL, withIndexOptions), and finds Postgres takes each
// with its parameters: a primary key and a deferrable unique key with
// INCLUDE columns (an exclusion constraint's text has its parameters
// already).
func TestKeysKeepTheirIndexOptions(t *testing.T) {
	t.Parallel()
	ctx, conns := testConns(t, 1)
	conn := conns[0]
	keys := []struct{ name, def, options string }{
		{"k_pkey", "PRIMARY KEY (a)", "fillfactor = '80'"},
		{"k_unique", "UNIQUE (b) INCLUDE (c) DEFERRABLE INITIALLY DEFERRED", "fillfactor = '70', deduplicate_items = 'off'"},
		{"k_exclude", "EXCLUDE USING btree (c WITH =) WITH (fillfactor='60') WHERE ((a > 0))", ""},
		{"k_plain", "UNIQUE (c, a)", ""},
	}
	for _, table := range []string{"live", "shadow"} {
		if _, err := conn.Exec(ctx, `CREATE TABLE `+table+` (a int NOT NULL, b int, c int)`); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range keys {
		with := ""
		if k.options != "" {
			with = " WITH (" + k.options + ")"
		}
		// The live key, written as an operator would.
		live := strings.Replace(k.def, ")", ")"+with, 1)
		if strings.HasPrefix(k.def, "UNIQUE (b)") {
			live = "UNIQUE (b) INCLUDE (c)" + with + " DEFERRABLE INITIALLY DEFERRED"
		}
		if _, err := conn.Exec(ctx, `ALTER TABLE live ADD CONSTRAINT `+k.name+` `+live); err != nil {
			t.Fatalf("live %s: %v", live, err)
		}
		var def, options string
		err := conn.QueryRow(ctx, `SELECT pg_get_constraintdef(con.oid), `+keyIndexOptionsSQL+`
			FROM pg_constraint con LEFT JOIN pg_class ix ON ix.oid = con.conindid AND con.contype IN ('p', 'u')
			WHERE con.conname = $1`, k.name).Scan(&def, &options)
		if err != nil {
			t.Fatal(err)
		}
		if def != k.def || options != k.options {
			t.Fatalf("%s: pg_get_constraintdef %q with %q, want %q with %q", k.name, def, options, k.def, k.options)
		}
		shadow := withIndexOptions(def, options)
		if _, err := conn.Exec(ctx, `ALTER TABLE shadow ADD CONSTRAINT `+k.name+`_shadow `+shadow); err != nil {
			t.Errorf("%s: %v", shadow, err)
			continue
		}
		var liveIndex, shadowIndex string
		err = conn.QueryRow(ctx, `SELECT replace(pg_get_indexdef($1::text::regclass), 'public.live', 'T'),
			replace(replace(pg_get_indexdef($2::text::regclass), 'public.shadow', 'T'), $2::text, $1::text)`,
			k.name, k.name+"_shadow").Scan(&liveIndex, &shadowIndex)
		if err != nil {
			t.Fatal(err)
		}
		if shadowIndex != liveIndex {
			t.Errorf("%s: shadow index %q, live %q", k.name, shadowIndex, liveIndex)
		}
	}
}
