// Package pguuid has pgx move google/uuid's UUID as the 16 bytes it is.
//
// pgx knows Postgres's uuid type but not google/uuid's UUID. It encodes
// one through its driver.Valuer: Value formats the string, pgx fails to
// encode a string in binary (building an error with fmt), parses the
// string back and only then writes the 16 bytes; and it scans one through
// its sql.Scanner, formatting the 16 bytes it received as a string for
// uuid.Scan to parse. Every id of every statement paid that, on the write
// path's every append (its share of the CPU is in docs/performance.md,
// "Append"). The codec here moves the 16 bytes as they are,
// both ways, and leaves every other case to pgx's own.
//
// It is a package of its own so that projections (whose rebuild opens
// connections of its own) can use it: the event store's tests import
// projections.
package pguuid

import (
	"errors"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
)

// Register registers the uuid codec on m, for uuid and uuid[].
func Register(m *pgtype.Map) {
	t := &pgtype.Type{Name: "uuid", OID: pgtype.UUIDOID, Codec: uuidCodec{}}
	m.RegisterType(t)
	m.RegisterType(&pgtype.Type{Name: "_uuid", OID: pgtype.UUIDArrayOID, Codec: &pgtype.ArrayCodec{ElementType: t}})
}

// uuidCodec is pgx's UUIDCodec with binary plans for uuid.UUID.
type uuidCodec struct{ pgtype.UUIDCodec }

func (c uuidCodec) PlanEncode(m *pgtype.Map, oid uint32, format int16, value any) pgtype.EncodePlan {
	if _, ok := value.(uuid.UUID); ok && format == pgtype.BinaryFormatCode {
		return encodeUUIDBinary{}
	}
	return c.UUIDCodec.PlanEncode(m, oid, format, value)
}

func (c uuidCodec) PlanScan(m *pgtype.Map, oid uint32, format int16, target any) pgtype.ScanPlan {
	if _, ok := target.(*uuid.UUID); ok && format == pgtype.BinaryFormatCode {
		return scanUUIDBinary{}
	}
	return c.UUIDCodec.PlanScan(m, oid, format, target)
}

type encodeUUIDBinary struct{}

func (encodeUUIDBinary) Encode(value any, buf []byte) ([]byte, error) {
	u := value.(uuid.UUID)
	return append(buf, u[:]...), nil
}

type scanUUIDBinary struct{}

// Scan leaves the target as it is for NULL, as uuid.UUID's Scan does.
func (scanUUIDBinary) Scan(src []byte, target any) error {
	if src == nil {
		return nil
	}
	if len(src) != 16 {
		return errors.New("uuid: binary value is not 16 bytes")
	}
	copy(target.(*uuid.UUID)[:], src)
	return nil
}
