package rebuild

import (
	"encoding/binary"
	"fmt"

	"github.com/jackc/pgx/v5/pgtype"
)

// The fold's array values: ledger_entries' posting lines. pgx's array
// codec boxes every element into an interface and looks up its plan
// again for every array, a cost paid for each of millions of elements
// (figures: docs/performance.md, Replay). The copier frames these two
// one-dimensional arrays itself, COPY's binary array format, each element
// encoded by the connection's codec for the element type, its plan looked
// up once a column.

// textArray is a text[] value without NULLs.
type textArray []string

// numericArray is a numeric[] value; an element that is not Valid is NULL.
type numericArray []pgtype.Numeric

// arrayPlanFor is the plan the copier encodes v with, if v points to one
// of the arrays above (a rowSource's values are pointers, refilled row by
// row): nil otherwise, or when the column is not an array of the
// element's type.
func arrayPlanFor(m *pgtype.Map, oid uint32, v any) pgtype.EncodePlan {
	t, ok := m.TypeForOID(oid)
	if !ok {
		return nil
	}
	ac, ok := t.Codec.(*pgtype.ArrayCodec)
	if !ok {
		return nil
	}
	switch v.(type) {
	case *textArray:
		if ac.ElementType.OID != pgtype.TextOID && ac.ElementType.OID != pgtype.VarcharOID {
			return nil
		}
		return textArrayPlan{elem: ac.ElementType.OID}
	case *numericArray:
		elem := m.PlanEncode(ac.ElementType.OID, pgtype.BinaryFormatCode, &pgtype.Numeric{})
		if elem == nil {
			return nil
		}
		return numericArrayPlan{elem: ac.ElementType.OID, plan: elem}
	}
	return nil
}

// appendArrayHeader appends the binary array header of a one-dimensional
// array of n elements of type elem, lower bound 1; hasNull says whether
// any element is NULL.
func appendArrayHeader(buf []byte, elem uint32, n int, hasNull bool) []byte {
	buf = binary.BigEndian.AppendUint32(buf, 1) // dimensions
	var flag uint32
	if hasNull {
		flag = 1
	}
	buf = binary.BigEndian.AppendUint32(buf, flag)
	buf = binary.BigEndian.AppendUint32(buf, elem)
	buf = binary.BigEndian.AppendUint32(buf, uint32(n))
	return binary.BigEndian.AppendUint32(buf, 1) // lower bound
}

// textArrayPlan encodes a *textArray: text's binary form is its bytes.
type textArrayPlan struct{ elem uint32 }

func (p textArrayPlan) Encode(value any, buf []byte) ([]byte, error) {
	a := *value.(*textArray)
	if a == nil {
		return nil, nil
	}
	buf = appendArrayHeader(buf, p.elem, len(a), false)
	for _, s := range a {
		buf = binary.BigEndian.AppendUint32(buf, uint32(len(s)))
		buf = append(buf, s...)
	}
	return buf, nil
}

// numericArrayPlan encodes a *numericArray, each element with plan.
type numericArrayPlan struct {
	elem uint32
	plan pgtype.EncodePlan
}

func (p numericArrayPlan) Encode(value any, buf []byte) ([]byte, error) {
	a := *value.(*numericArray)
	if a == nil {
		return nil, nil
	}
	hasNull := false
	for i := range a {
		hasNull = hasNull || !a[i].Valid
	}
	buf = appendArrayHeader(buf, p.elem, len(a), hasNull)
	for i := range a {
		var at int
		buf, at = beginValue(buf) // copy.go
		out, err := p.plan.Encode(&a[i], buf)
		if err != nil {
			return nil, fmt.Errorf("element %d: %w", i+1, err)
		}
		buf = endValue(buf, at, out)
	}
	return buf, nil
}
