package ethereum_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/eventstore"
	"github.com/ledger/ledger/eventstore/testenv"
	"github.com/ledger/ledger/workers/rails/ethereum"
	"github.com/ledger/ledger/workers/rails/ethereum/gethtest"
	"github.com/ledger/ledger/workers/rails/statement"
)

// depositAddress hands out a new deposit address in the rail's books, as
// made at created.
func depositAddress(t *testing.T, pool *pgxpool.Pool, created time.Time) string {
	t.Helper()
	b := make([]byte, 20)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	addr := "0x" + hex.EncodeToString(b)
	if _, err := pool.Exec(context.Background(), `INSERT INTO usdt_addresses (payment_id, tenant_id, address, created_at)
		VALUES ($1, $2, $3, $4)`, uuid.New(), uuid.New(), addr, created); err != nil {
		t.Fatal(err)
	}
	return addr
}

// TestStatementAgainstGeth reads a real chain's Transfer logs: the
// window's first block in and its end's block out, transfers to an
// address handed out long ago listed, to an address not ours or under a
// cent not, and the newest ones pending until confirmed.
func TestStatementAgainstGeth(t *testing.T) {
	t.Parallel()
	chain := gethtest.Start(t)
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, testenv.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := eventstore.Migrate(ctx, pool, eventstore.MigrationSet{Component: "usdt", FS: ethereum.Migrations}); err != nil {
		t.Fatal(err)
	}
	token := chain.DeployToken(t)
	a, b := depositAddress(t, pool, time.Now().Add(-time.Hour)), depositAddress(t, pool, time.Now().Add(-time.Hour))
	old := depositAddress(t, pool, time.Now().Add(-60*24*time.Hour))
	stranger := "0x" + hex.EncodeToString(make([]byte, 20))

	chain.Transfer(t, token, a, 1_000_000) // before the window
	firstBlock := chain.Transfer(t, token, a, 2_000_000)
	bBlock := chain.Transfer(t, token, b, 2_345_678) // booked as 2.34
	chain.Transfer(t, token, a, 5_000)               // under a cent
	chain.Transfer(t, token, stranger, 3_000_000)
	oldBlock := chain.Transfer(t, token, old, 4_000_000)
	endBlock := chain.Transfer(t, token, a, 5_000_000) // the window's end
	// The transfer to b has just enough confirmations (and keeps them as
	// the chain grows); the one to old, in a later block, stays pending
	// until the head has moved on by the blocks between them. geth --dev
	// seals a block of its own now and then, so the margin is those
	// blocks, not one: one block sealed before the statement read the
	// head had confirmed old with one confirmation more than it had.
	confirmations := chain.Head(t) - bBlock + 1

	rpc := ethereum.NewRPC(chain.URL, &http.Client{Timeout: 10 * time.Second})
	timeOf := func(n uint64) time.Time {
		h, err := rpc.HeaderByNumber(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		return time.Unix(int64(h.Timestamp), 0).UTC()
	}
	from, to := timeOf(firstBlock), timeOf(endBlock)
	got, err := ethereum.NewStatement(pool, rpc, token, confirmations).Records(ctx, from, to)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		amount string
		status string
	}{{"2", statement.Success}, {"2.34", statement.Success}, {"4", statement.Pending}}
	if len(got) != len(want) {
		t.Fatalf("got %d records %+v, want %d", len(got), got, len(want))
	}
	ref := regexp.MustCompile(`^0x[0-9a-f]{64}:[0-9]+$`)
	for i, r := range got {
		if r.Rail != "USDT" || r.Currency != "USDT" || r.Direction != statement.In || !ref.MatchString(r.Ref) ||
			!r.Amount.Equal(decimal.RequireFromString(want[i].amount)) || r.Status != want[i].status || r.At.Before(from) || !r.At.Before(to) {
			t.Errorf("record %d: got %+v, want %s USDT %s", i, r, want[i].amount, want[i].status)
		}
	}
	if !got[0].At.Equal(from) {
		t.Errorf("the first block's transfer is dated %s, want %s", got[0].At, from)
	}

	// Confirmed by the blocks after it, the last one is a success.
	chain.Mine(t, int(oldBlock-bBlock))
	got, err = ethereum.NewStatement(pool, rpc, token, confirmations).Records(ctx, from, to)
	if err != nil || len(got) != 3 || got[2].Status != statement.Success {
		t.Fatalf("after two more blocks: got %+v, %v", got, err)
	}

	// A node that does not answer fails the statement.
	down := ethereum.NewRPC("http://127.0.0.1:1", &http.Client{Timeout: time.Second})
	if got, err := ethereum.NewStatement(pool, down, token, 3).Records(ctx, from, to); err == nil {
		t.Fatalf("got %+v from a node that does not answer, and no error", got)
	}
}
