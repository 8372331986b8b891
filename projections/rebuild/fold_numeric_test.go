package rebuild

import (
	"math/big"
	"testing"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/shopspring/decimal"
)

// TestSetNumericIsTheProjectorsNumeric checks that the fold's numeric of an
// amount is the one Postgres gets from the projector, which sends the
// amount's String(): the same value, and the same scale, whatever numeric
// it set before.
func TestSetNumericIsTheProjectorsNumeric(t *testing.T) {
	var got pgtype.Numeric
	for _, s := range []string{"0", "0.00", "1", "1.5", "1.50", "150", "15E1", "1E17", "1E18", "0.000000001", "2100",
		"123456789012345678", "1234567890123456789", "99999999999999999.99", "123456789012345678901234.5000",
		"-2.500", "-0.0", "7E-3", "30000000000000000000"} {
		d := decimal.RequireFromString(s)
		var want pgtype.Numeric
		if err := want.Scan(d.String()); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		setNumeric(&got, d)
		if !got.Valid || got.Int.Cmp(want.Int) != 0 || got.Exp != want.Exp {
			t.Errorf("setNumeric(%s) = %v×10^%d, want %v×10^%d (from %q)", s, got.Int, got.Exp, want.Int, want.Exp, d.String())
		}
	}
}

// FuzzSetNumeric is the same check over any decimal text, on a numeric
// that held 1.5 before.
func FuzzSetNumeric(f *testing.F) {
	for _, s := range []string{"1.50", "15E1", "0", "-7E-3", "123456789012345678.9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := decimal.NewFromString(s)
		if err != nil || d.Exponent() > 1000 || d.Exponent() < -1000 {
			return
		}
		var want pgtype.Numeric
		if err := want.Scan(d.String()); err != nil {
			return
		}
		got := pgtype.Numeric{Int: big.NewInt(15), Exp: -1, Valid: true}
		setNumeric(&got, d)
		if !got.Valid || got.Int.Cmp(want.Int) != 0 || got.Exp != want.Exp {
			t.Errorf("setNumeric(%s) = %v×10^%d, want %v×10^%d (from %q)", s, got.Int, got.Exp, want.Int, want.Exp, d.String())
		}
	})
}
