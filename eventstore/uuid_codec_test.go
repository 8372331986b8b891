package eventstore

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/ledger/ledger/eventstore/testenv"
)

// TestNativeUUIDs sends uuid.UUID values, alone and in arrays, through a
// pool with the native codec and reads them back: the same ids, NULL
// leaving the target as it was (as uuid.UUID's own Scan does), and the
// codec's plans, not pgx's driver.Valuer and sql.Scanner fallbacks, in use.
func TestNativeUUIDs(t *testing.T) {
	t.Parallel()
	ctx := testenv.Context(t, 30*time.Second)
	pool := mustMigrated(t, 2) // mustPool sets NativeUUIDs
	a, b := uuid.New(), uuid.New()

	var got uuid.UUID
	var gotText string
	var gotArray []uuid.UUID
	err := pool.QueryRow(ctx, `SELECT $1::uuid, $1::uuid::text, $2::uuid[]`, a, []uuid.UUID{a, b}).Scan(&got, &gotText, &gotArray)
	if err != nil {
		t.Fatalf("round trip: %v", err)
	}
	if got != a || gotText != a.String() || len(gotArray) != 2 || gotArray[0] != a || gotArray[1] != b {
		t.Errorf("round trip of %s, [%s %s]: got %s, %s, %v", a, a, b, got, gotText, gotArray)
	}
	kept := b
	if err := pool.QueryRow(ctx, `SELECT NULL::uuid`).Scan(&kept); err != nil || kept != b {
		t.Errorf("NULL into a uuid.UUID: got %s, %v; want it left at %s", kept, err, b)
	}

	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	defer conn.Release()
	m := conn.Conn().TypeMap()
	if p := m.PlanEncode(pgtype.UUIDOID, pgtype.BinaryFormatCode, a); p == nil {
		t.Error("no binary encode plan for uuid.UUID")
	} else if fmt.Sprintf("%T", p) != "pguuid.encodeUUIDBinary" {
		t.Errorf("encode plan for uuid.UUID: got %T, want the native one", p)
	}
	if p := m.PlanScan(pgtype.UUIDOID, pgtype.BinaryFormatCode, &got); p == nil {
		t.Error("no binary scan plan for *uuid.UUID")
	} else if fmt.Sprintf("%T", p) != "pguuid.scanUUIDBinary" {
		t.Errorf("scan plan for *uuid.UUID: got %T, want the native one", p)
	}
}
