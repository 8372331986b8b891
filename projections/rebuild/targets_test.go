package rebuild

import "testing"

// TestStatementTargets: the projector's statements are kept or left out of
// a rebuild by the tables they write, CTEs included, and a statement that
// cannot be placed in exactly one group is refused.
func TestStatementTargets(t *testing.T) {
	r := &rebuilder{keep: map[string]bool{"payments": true, "webhook_deliveries": true, "webhook_attempts": true}}
	cases := []struct {
		sql     string
		keep    bool
		refused bool
	}{
		{sql: `INSERT INTO payments (id) VALUES ($1)`, keep: true},
		{sql: `  update merchants SET name = $1`, keep: false},
		{sql: `DELETE FROM webhook_deliveries WHERE event_id = $1`, keep: true},
		{sql: `INSERT INTO ledger_entries (a) VALUES ($1) ON CONFLICT (a) DO UPDATE SET a = $1`, keep: false},
		{sql: `INSERT INTO merchants (a) VALUES ($1) on conflict (a) do update set a = $1`, keep: false},
		{sql: `WITH attempt AS (INSERT INTO webhook_attempts (a) VALUES ($1)), delivery AS (DELETE FROM webhook_deliveries)
			UPDATE payments SET version = version + 1`, keep: true},
		{sql: `WITH p AS (UPDATE payments SET a = 1 RETURNING a) INSERT INTO merchants SELECT a FROM p`, refused: true},
		{sql: `INSERT INTO nowhere (a) VALUES ($1)`, refused: true},
		{sql: `SELECT 1 FROM payments FOR UPDATE SKIP LOCKED`, refused: true},
	}
	for _, c := range cases {
		keep, err := r.newApplier(nil).keeps(c.sql)
		if (err != nil) != c.refused || keep != c.keep {
			t.Errorf("%q: got keep %v, err %v; want keep %v, refused %v", c.sql, keep, err, c.keep, c.refused)
		}
	}
}
