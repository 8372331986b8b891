package rebuild

import (
	"encoding/json"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/ledger/ledger/eventstore/pguuid"
)

// TestCopierStoresWhatPgxCopyFromStores COPYs the same rows through pgx's
// CopyFrom and through the fold's copier, a column's values changing Go
// type from row to row (values, pointers, nil pointers, nil, pgx's own
// types, valid and not, arrays), and finds the same rows stored; a value the column's
// type cannot take is an error naming the column.
func TestCopierStoresWhatPgxCopyFromStores(t *testing.T) {
	t.Parallel()
	ctx, conns := testConns(t, 1)
	conn := conns[0]
	pguuid.Register(conn.TypeMap()) // as the rebuild's connections
	for _, table := range []string{"by_pgx", "by_copier"} {
		if _, err := conn.Exec(ctx, `CREATE TABLE `+table+` (id int4, u uuid, n int4, at timestamptz, s text, j json, d numeric, ta text[], na numeric[])`); err != nil {
			t.Fatal(err)
		}
	}
	columns := []string{"id", "u", "n", "at", "s", "j", "d", "ta", "na"}
	id, at, text := uuid.New(), time.Date(2026, 11, 28, 7, 0, 0, 123456000, time.UTC), "naïve \"quoted\""
	rows := [][]any{
		{1, id, 5, at, "x", []byte(`{"a": 1}`), pgtype.Numeric{Int: big.NewInt(15), Exp: -1, Valid: true},
			[]string{"customer_funds", text, ""}, []pgtype.Numeric{{Int: big.NewInt(84167), Valid: true}, {Int: big.NewInt(15), Exp: -20, Valid: true}}},
		{2, (*uuid.UUID)(nil), (*int)(nil), (*time.Time)(nil), (*string)(nil), []byte(nil), pgtype.Numeric{}, []string{}, []pgtype.Numeric(nil)},
		{3, &id, int64(7), &at, &text, `{"b": []}`, &pgtype.Numeric{Int: big.NewInt(-2), Exp: 3, Valid: true},
			[]string(nil), []pgtype.Numeric{{Int: big.NewInt(1), Valid: true}, {}}},
		{4, nil, pgtype.Int8{Int64: 9, Valid: true}, pgtype.Timestamptz{Time: at, Valid: true}, pgtype.Text{}, json.RawMessage(`[1]`), nil,
			[]string{"debit", "credit"}, []pgtype.Numeric{}},
		{5, pgtype.UUID{Bytes: id, Valid: true}, int32(-1), at.Add(time.Hour), "", []byte(`null`), pgtype.Numeric{Int: big.NewInt(0), Valid: true},
			[]string{}, []pgtype.Numeric{{Int: big.NewInt(15), Exp: -1, Valid: true}}},
	}
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{"by_pgx"}, columns, pgx.CopyFromRows(rows)); err != nil {
		t.Fatal(err)
	}
	enc, err := newCopyEncoder(ctx, conn, "public", "by_copier", columns)
	if err != nil {
		t.Fatal(err)
	}
	w := newCopier(conn, "public")
	w.encoders["by_copier"] = enc
	if err := w.copy(ctx, copyJob{table: "by_copier", rows: pgx.CopyFromRows(rows), n: len(rows)}); err != nil {
		t.Fatal(err)
	}
	dump := func(table string) []string {
		// t::text shows an array's bounds, which row_to_json leaves out.
		r, err := conn.Query(ctx, `SELECT row_to_json(t)::text || t::text FROM `+table+` t ORDER BY id`)
		if err != nil {
			t.Fatal(err)
		}
		got, err := pgx.CollectRows(r, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	want, got := dump("by_pgx"), dump("by_copier")
	if len(want) != len(rows) || !slices.Equal(got, want) {
		t.Errorf("the copier stored\n%s\npgx's CopyFrom\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	err = w.copy(ctx, copyJob{table: "by_copier", rows: pgx.CopyFromRows([][]any{{6, id, int64(1) << 40, at, "x", "{}", nil, nil, nil}})})
	if err == nil || !strings.Contains(err.Error(), "encode n") {
		t.Errorf("an int4 column given 2^40: %v, want an error naming n", err)
	}
	if n := len(dump("by_copier")); n != len(rows) {
		t.Errorf("after the failed COPY the table has %d rows, want %d", n, len(rows))
	}
}
