package keys

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// wrappedTable is a table of keys stored wrapped: its key-id column, its
// column of keys still in clear ("" for a table whose keys were wrapped
// from the start), its wrapped column, and what binds a key to its row.
type wrappedTable struct {
	table, id, clear, wrapped string
	aad                       func(id string) string
}

// clearColumn is the clear column as a select list item.
func (t wrappedTable) clearColumn() string {
	if t.clear == "" {
		return "NULL::bytea"
	}
	return t.clear
}

// setWrapped is the UPDATE that stores a key wrapped ($2, under master
// key $3) in the row of key $1, emptying its clear column.
func (t wrappedTable) setWrapped() string {
	set := t.wrapped + ` = $2, kek_id = $3`
	if t.clear != "" {
		set += `, ` + t.clear + ` = NULL`
	}
	return `UPDATE ` + t.table + ` SET ` + set + ` WHERE ` + t.id + ` = $1`
}

// wrappedTables are the tables of keys stored wrapped.
var wrappedTables = []wrappedTable{
	{"signing_keys", "kid", "clear_secret", "wrapped_secret", signingKeyAAD},
	{"sealing_keys", "kid", "clear_key", "wrapped_key", SealingKeyAAD},
	{"server_keys", "purpose", "", "wrapped_key", serverKeyAAD},
}

// WrapStoredKeys wraps under master every key still stored in clear (the
// keys made before envelope encryption) and empties its clear column. It
// runs at every start and does nothing once every key is wrapped; two
// processes running it at once wrap each key once (the row is locked, and
// only a row still in clear is changed).
func WrapStoredKeys(ctx context.Context, pool *pgxpool.Pool, master *MasterKeys) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		for _, t := range wrappedTables {
			if t.clear == "" {
				continue
			}
			rows, err := tx.Query(ctx, `SELECT `+t.id+`, `+t.clear+` FROM `+t.table+` WHERE `+t.clear+` IS NOT NULL FOR UPDATE`)
			if err != nil {
				return fmt.Errorf("wrap %s: %w", t.table, err)
			}
			clear, err := pgx.CollectRows(rows, pgx.RowToStructByPos[storedKey])
			if err != nil {
				return fmt.Errorf("wrap %s: %w", t.table, err)
			}
			for _, k := range clear {
				kekID, wrapped := master.Wrap(t.aad(k.KID), k.Secret)
				if _, err := tx.Exec(ctx, t.setWrapped(), k.KID, wrapped, kekID); err != nil {
					return fmt.Errorf("wrap %s %s: %w", t.table, k.KID, err)
				}
			}
		}
		return nil
	})
}

// storedKey is a key's id and secret, in clear.
type storedKey struct {
	KID    string
	Secret []byte
}

// RewrapKeys wraps every stored key under the master key that newer wraps
// with, opening each with the master keys of older or newer: the second
// step of changing the master key (ledgerctl keys rotate-master), after
// every process holds both and before any holds only the new one. It is
// one transaction, and running it again changes nothing. It returns how
// many keys it wrapped anew.
func RewrapKeys(ctx context.Context, pool *pgxpool.Pool, older, newer *MasterKeys) (int, error) {
	n := 0
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		for _, t := range wrappedTables {
			rows, err := tx.Query(ctx, `SELECT `+t.id+`, `+t.clearColumn()+`, `+t.wrapped+`, kek_id FROM `+t.table+` ORDER BY `+t.id+` FOR UPDATE`)
			if err != nil {
				return fmt.Errorf("rewrap %s: %w", t.table, err)
			}
			var kid string
			var kekID *string
			var clear, wrapped []byte
			type rewrapped struct {
				kid     string
				wrapped []byte
			}
			var todo []rewrapped
			if _, err := pgx.ForEachRow(rows, []any{&kid, &clear, &wrapped, &kekID}, func() error {
				secret := clear
				if kekID != nil {
					if *kekID == newer.ID() {
						return nil
					}
					opener := older
					if !older.has(*kekID) {
						opener = newer
					}
					var err error
					if secret, err = opener.Unwrap(*kekID, t.aad(kid), wrapped); err != nil {
						return err
					}
				}
				_, w := newer.Wrap(t.aad(kid), secret)
				todo = append(todo, rewrapped{kid, w})
				return nil
			}); err != nil {
				return fmt.Errorf("rewrap %s: %w", t.table, err)
			}
			for _, r := range todo {
				if _, err := tx.Exec(ctx, t.setWrapped(), r.kid, r.wrapped, newer.ID()); err != nil {
					return fmt.Errorf("rewrap %s %s: %w", t.table, r.kid, err)
				}
				n++
			}
		}
		return nil
	})
	return n, err
}
