package benchkit

import "testing"

func TestDatabaseURLFor(t *testing.T) {
	t.Parallel()
	got, err := DatabaseURLFor("postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", "ledgerbench_ab12")
	if want := "postgres://postgres@127.0.0.1:5432/ledgerbench_ab12?sslmode=disable"; err != nil || got != want {
		t.Errorf("got %q, %v; want %q", got, err, want)
	}
	if got, err := DatabaseURLFor("postgresql://u:p@db", "x"); err != nil || got != "postgresql://u:p@db/x" {
		t.Errorf("no database in the URL: got %q, %v", got, err)
	}
	if _, err := DatabaseURLFor("host=127.0.0.1 dbname=postgres", "x"); err == nil {
		t.Error("keyword/value DSN: want an error")
	}
}
