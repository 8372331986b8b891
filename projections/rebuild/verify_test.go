package rebuild

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore"
)

// Verify finds each row an edit, a deletion and an insertion made behind
// the events' back, as the kind of difference it is, with the columns that
// differ, and leaves the live tables and no schema behind.
func TestVerifyFindsRowsTheEventsDoNotMake(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	w := f.seedTenant(0)
	if v := f.verify(100); v.Differences != 0 {
		t.Fatalf("a clean ledger: %d differences, want none: %+v", v.Differences, v.First)
	}
	var deleted, added string
	if err := f.pool.QueryRow(f.ctx, `DELETE FROM ledger_entries WHERE event_id = (SELECT event_id FROM ledger_entries ORDER BY event_id LIMIT 1)
		RETURNING event_id::text`).Scan(&deleted); err != nil {
		t.Fatal(err)
	}
	if err := f.pool.QueryRow(f.ctx, `INSERT INTO merchants SELECT gen_random_uuid(), tenant_id, 'Ghost', country, currency,
			payout_method, bank_name, account_number, phone_number, lnurl, 1, created_at, updated_at FROM merchants LIMIT 1
		RETURNING id::text`).Scan(&added); err != nil {
		t.Fatal(err)
	}
	if _, err := f.pool.Exec(f.ctx, `UPDATE payments SET status = 'success', state = state::jsonb || '{"amount": 1}' WHERE id = $1`,
		w.payments[2]); err != nil {
		t.Fatal(err)
	}
	tables := allTables()
	live := f.dump(tables)

	v := f.verify(100)
	if v.Differences != 3 || len(v.First) != 3 {
		t.Fatalf("got %d differences, %d listed, want 3: %+v", v.Differences, len(v.First), v.First)
	}
	byTable := map[string]Difference{}
	for _, d := range v.First {
		byTable[d.Table] = d
	}
	if d := byTable["ledger_entries"]; d.Kind != "missing" || d.Key != deleted || len(d.Expected) == 0 || len(d.Actual) != 0 {
		t.Errorf("deleted row: got %+v, want missing %s with its columns as replayed", d, deleted)
	}
	if d := byTable["merchants"]; d.Kind != "unexpected" || d.Key != added || len(d.Expected) != 0 || string(d.Actual["name"]) != `"Ghost"` {
		t.Errorf("added row: got %+v, want unexpected %s with its columns as live", d, added)
	}
	d := byTable["payments"]
	if d.Kind != "different" || d.Key != w.payments[2].String() || len(d.Expected) != 2 || string(d.Actual["status"]) != `"success"` ||
		d.Expected["state"] == nil {
		t.Errorf("edited row: got %+v, want different %s in status and state", d, w.payments[2])
	}
	if v := f.verify(1); v.Differences != 3 || len(v.First) != 1 {
		t.Errorf("at most 1 listed: got %d differences, %d listed, want 3, 1", v.Differences, len(v.First))
	}
	sameDump(t, "after verify", live, f.dump(tables))
	if left := f.leftovers(); len(left) > 0 {
		t.Errorf("schemas left behind: %v", left)
	}
}

// Verify compares the live rows with the replay of the very events that
// wrote them while appends go on: no difference.
func TestVerifyWhileAppending(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	w := f.seedTenant(0)
	var appended atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			id := uuid.Must(uuid.NewV7())
			_, err := f.store.Append(f.ctx, testMeta, eventstore.Batch{
				Stream: domain.StreamRef{TenantID: w.tenant, Type: "user", ID: id},
				Events: []domain.Event{domain.UserCreated{UserID: id, Email: id.String() + "@example.com", Name: "U", Role: domain.RoleNormal}}})
			if err != nil {
				t.Errorf("append: %v", err)
				return
			}
			appended.Add(1)
		}
	})
	waitAppended(t, []*atomic.Int64{&appended}, []int64{0})
	before := appended.Load()
	v := f.verify(10)
	during := appended.Load() - before
	close(stop)
	wg.Wait()
	if during == 0 {
		t.Fatal("nothing was appended during verify: the test proves nothing")
	}
	if v.Differences != 0 {
		t.Errorf("got %d differences, want none: %+v", v.Differences, v.First)
	}
	t.Logf("%d users appended during verify; %+v", during, v.Stats)
}

func (f *fixture) verify(keep int) Verified {
	f.t.Helper()
	v, err := Verify(f.ctx, f.pool, Options{}, keep)
	if err != nil {
		f.t.Fatalf("verify: %v", err)
	}
	return v
}
