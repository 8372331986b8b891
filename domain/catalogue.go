package domain

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
)

// Catalogue renders docs/events.md, the public event contract (contract
// §9): the envelope, the hash chain, versioning and personal data, then
// every registered event type with its CloudEvents type, NATS subject,
// fields (by reflection over its struct, with their ledger annotations)
// and an example of its published data. TestEventCatalogue keeps the file
// in step with the code.
func Catalogue() ([]byte, error) {
	return eventTypes.catalogue()
}

func (r registry) catalogue() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(catalogueHeader)
	defs := r.defs()
	b.WriteString("\n## Index\n\n| CloudEvents type | Data withheld from NATS | Meaning |\n|---|---|---|\n")
	for _, d := range defs {
		withheld := "nothing"
		if len(d.Private) > 0 {
			withheld = code(d.Private...)
		}
		fmt.Fprintf(&b, "| [`%s`](#%s) | %s | %s |\n", d.cloudType(), anchor(d.cloudType()), withheld, d.Doc)
	}
	for _, d := range defs {
		if err := d.writeEntry(&b); err != nil {
			return nil, fmt.Errorf("catalogue %s: %w", d.Type, err)
		}
	}
	return b.Bytes(), nil
}

func (d EventDef) cloudType() string { return CloudEventType(d.Type, d.Version) }

// writeEntry writes one event type's section.
func (d EventDef) writeEntry(b *bytes.Buffer) error {
	aggregate, name, _ := strings.Cut(d.Type, ".")
	id := "<" + aggregate + "Id>"
	fmt.Fprintf(b, "\n## %s\n\n%s\n\n", d.cloudType(), d.Doc)
	fmt.Fprintf(b, "- Schema version: %d\n", d.Version)
	fmt.Fprintf(b, "- NATS subject: `ledger.<tenantId>.%s.%s.%s`\n", aggregate, id, name)
	fmt.Fprintf(b, "- CloudEvents subject: `%s/%s`\n", collection(aggregate), id)
	if len(d.Private) == 0 {
		b.WriteString("- Withheld from NATS: nothing\n")
	} else {
		fmt.Fprintf(b, "- Withheld from NATS: %s\n", code(d.Private...))
	}
	rows := fieldRows(reflect.TypeOf(d.New()).Elem(), "", "", map[reflect.Type]bool{})
	if len(rows) == 0 {
		b.WriteString("\nNo fields: `data` is `{}`.\n")
	} else {
		b.WriteString("\n| Field | JSON type | Data |\n|---|---|---|\n")
		for _, row := range rows {
			fmt.Fprintf(b, "| `%s` | %s | %s |\n", row.path, row.typ, row.class)
		}
	}
	example, err := d.example()
	if err != nil {
		return err
	}
	fmt.Fprintf(b, "\nPublished `data` (example):\n\n```json\n%s\n```\n", example)
	return nil
}

// fieldRow is one line of an event's field table.
type fieldRow struct {
	path, typ, class string
}

// fieldRows lists the JSON members of struct type t, and those of the
// objects inside them under dotted names ("a.b", "a[].b"). class is the
// annotation inherited from an enclosing member: withholding an object
// withholds its members.
func fieldRows(t reflect.Type, prefix, inherited string, seen map[reflect.Type]bool) []fieldRow {
	seen[t] = true
	defer delete(seen, t)
	ms, err := members(t)
	if err != nil {
		panic(err) // register has already refused such a type
	}
	var rows []fieldRow
	for _, m := range ms {
		class := m.class
		if class == "" {
			class = inherited
		}
		path := prefix + m.name
		typ := jsonType(m.typ)
		if m.omitempty {
			typ += ", omitted when empty"
		}
		shown := "published"
		if class != "" {
			shown = "**" + class + "**"
		}
		rows = append(rows, fieldRow{path, typ, shown})
		inner := m.typ
		for {
			if inner.Kind() == reflect.Pointer {
				inner = inner.Elem()
			} else if (inner.Kind() == reflect.Slice || inner.Kind() == reflect.Array) && !opaque(inner) {
				inner, path = inner.Elem(), path+"[]"
			} else {
				break
			}
		}
		if inner.Kind() == reflect.Struct && !opaque(inner) && !seen[inner] {
			rows = append(rows, fieldRows(inner, path+".", class, seen)...)
		}
	}
	return rows
}

var (
	timeType    = reflect.TypeFor[time.Time]()
	uuidType    = reflect.TypeFor[uuid.UUID]()
	decimalType = reflect.TypeFor[decimal.Decimal]()
	rawType     = reflect.TypeFor[json.RawMessage]()
)

// jsonType describes how encoding/json writes values of t.
func jsonType(t reflect.Type) string {
	switch t {
	case timeType:
		return "string (RFC 3339 timestamp, UTC)"
	case uuidType:
		return "string (UUID)"
	case decimalType:
		return "string (decimal)"
	case rawType:
		return "object (free-form)"
	}
	switch t.Kind() {
	case reflect.Pointer:
		return jsonType(t.Elem()) + " or null"
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return "string (base64)"
		}
		return "array of " + jsonType(t.Elem())
	case reflect.Map:
		return "object of " + jsonType(t.Elem())
	case reflect.Struct:
		return "object"
	}
	return "JSON (" + t.String() + ")"
}

// example returns the indented published data of an instance of d with
// deterministic values: strings hold their member's name.
func (d EventDef) example() ([]byte, error) {
	e := d.New()
	n := 0
	fillExample(reflect.ValueOf(e).Elem(), "", &n)
	data, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	public, err := d.publicData(d.Version, data)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, public, "", "  "); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// exampleTime is the time of every example.
var exampleTime = time.Date(2026, 11, 22, 10, 15, 30, 123e6, time.UTC)

// fillExample sets v, of a member named name, and everything inside it.
// n numbers the UUIDs.
func fillExample(v reflect.Value, name string, n *int) {
	switch v.Type() {
	case timeType:
		v.Set(reflect.ValueOf(exampleTime))
		return
	case uuidType:
		*n++
		v.Set(reflect.ValueOf(uuid.MustParse(fmt.Sprintf("01937f4e-5a00-7000-8000-%012d", *n))))
		return
	case decimalType:
		v.Set(reflect.ValueOf(decimal.RequireFromString("1250.50")))
		return
	case rawType:
		v.Set(reflect.ValueOf(json.RawMessage(`{}`)))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(name)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(12.5)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fillExample(v.Elem(), name, n)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fillExample(v.Index(0), name, n)
	case reflect.Struct:
		if opaque(v.Type()) {
			return
		}
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() && !f.Anonymous {
				continue
			}
			member, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if member == "" && !f.Anonymous {
				member = f.Name
			}
			if v.Field(i).CanSet() {
				fillExample(v.Field(i), member, n)
			}
		}
	}
}

// code writes names as inline code, comma separated.
func code(names ...string) string {
	return "`" + strings.Join(names, "`, `") + "`"
}

// anchor is the fragment GitHub gives a heading: lower case, punctuation
// other than '-' and '_' dropped.
func anchor(heading string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_':
			return r
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A'
		case r == ' ':
			return '-'
		}
		return -1
	}, heading)
}

// catalogueHeader opens docs/events.md: what every event shares.
const catalogueHeader = `# Event catalogue

<!-- Generated from the code (domain/catalogue.go): go test ./domain -run TestEventCatalogue -update. Do not edit. -->

Every change to a tenant's users, profiles, momo accounts, merchants and payments is an event
(contract §9). Auditors read the events from the store (` + "`GET /events`, `ledgerctl events export`" + `);
analytics consumers subscribe to the NATS JetStream stream ` + "`LEDGER`" + `. Both get the same
CloudEvents 1.0 envelope; the published copy leaves personal data and secrets out of ` + "`data`" + `.
This file is generated from the event structs and a test fails when it is stale, so it is the
contract as the code implements it.

## Envelope

Every event, stored and published, is a CloudEvents 1.0 structured JSON object:

| Attribute | Meaning |
|---|---|
| ` + "`specversion`" + ` | ` + "`1.0`" + ` |
| ` + "`id`" + ` | the event id (UUID); also the NATS ` + "`Nats-Msg-Id`" + ` |
| ` + "`source`" + ` | ` + "`/tenants/<tenantId>`" + ` |
| ` + "`type`" + ` | ` + "`ledger.<aggregate>.<event>.v<N>`" + `: aggregates ` + "`tenant`, `user`, `merchant`, `payment`, `dashboard_user`" + ` |
| ` + "`subject`" + ` | ` + "`<aggregate>s/<aggregateId>`" + `, e.g. ` + "`payments/<paymentId>`" + ` (` + "`unmatched_funds/<id>`" + `: already plural) |
| ` + "`time`" + ` | when the event was recorded: ISO 8601 UTC with milliseconds |
| ` + "`datacontenttype`" + ` | ` + "`application/json`" + ` |
| ` + "`data`" + ` | the event's members, listed below per type |
| ` + "`tenantid`" + ` | extension: the tenant's id |
| ` + "`streamid`" + ` | extension: the aggregate's id, whose stream holds the event |
| ` + "`streamversion`" + ` | extension: integer, the event's place in its stream; the first event is 1 |
| ` + "`position`" + ` | extension: integer, global gap-free order within the store, assigned after commit |
| ` + "`hash`" + ` | extension: this event's link of the tenant's hash chain (below) |
| ` + "`prevhash`" + ` | extension: the ` + "`hash`" + ` of the tenant's previous event in position order; 64 zeros for its first |
| ` + "`actor`" + ` | extension, when known: who caused it: ` + "`apikey:<key>`, `user:<id>`, `operator` or `system:<worker>`" + ` |
| ` + "`requestid`" + ` | extension, when known: the ` + "`X-Request-Id`" + ` of the HTTP request |
| ` + "`correlationid`" + ` | extension, when known: the first request or event of a chain |
| ` + "`causationid`" + ` | extension, when known: the event that caused this one |

NATS: stream ` + "`LEDGER`" + `, subject ` + "`ledger.<tenantId>.<aggregate>.<aggregateId>.<event>`" + ` (the last token is the
` + "`<event>`" + ` part of the type), ` + "`Nats-Msg-Id`" + ` the event id. Every stored event is published, exactly once
per id within the de-duplication window, in stream order per aggregate (transactional outbox).

## Hash chain

    hash = lowercase hex( SHA-256( prevhash + "\n" + JCS(envelope) ) )

where ` + "`JCS(envelope)`" + ` is the RFC 8785 (JSON Canonicalization Scheme) serialisation of the stored
envelope, as ` + "`GET /events`" + ` returns it, without its ` + "`hash`" + ` and ` + "`prevhash`" + ` members, and ` + "`prevhash`" + ` is
the hash of the tenant's previous event in position order (64 zeros for its first). The published
copy carries the same ` + "`hash`" + ` and ` + "`prevhash`" + `, which refer to the stored event: recompute them from
the store, not from NATS, whose ` + "`data`" + ` lacks the withheld members.

## Versioning and upcasting

` + "`v<N>`" + ` in the type is the schema version of ` + "`data`" + `. A change old readers cannot read (a member
renamed, removed or retyped) makes a new version of the type; names never change. A new version
never rewrites history: the store keeps every event as written, with the version it was written
at, and the code registers one upcaster per step (vN to vN+1, ` + "`EventDef.Upcasters`" + ` in
domain/registry.go) that turns older data into the current shape whenever the service decodes an
event (replays, ` + "`audit verify`" + `, point-in-time reads) or publishes one. A stored version above the
current one, or a missing step, is an error, never a guess.

## Personal data

The store keeps every member for auditors; the NATS publication leaves out the members marked
**personal** (names, dates of birth, document numbers, addresses, phone numbers, emails, account
numbers, Lightning addresses, file names and free-form text that may name people) or **secret**
(webhook secrets, API key secret hashes), as contract §9 requires. One mechanism does it: the
event structs' fields carry ` + "`ledger:\"personal\"`" + ` or ` + "`ledger:\"secret\"`" + ` tags, registration derives the
withheld members from them by reflection, and the publication removes those members at any depth
(inside nested objects and in every array element). A withheld object is withheld whole, its
members included. A test fills every string of every event type below with a marker and checks
that exactly the marked members are gone from the published data. Names of businesses (a
merchant's name, a tenant's name, a profile's company name) are not personal data and are
published; a user's KYB business record is withheld whole all the same, since a sole
proprietor's record names its owner.

No event holds a secret a reader could use as it is: API key secrets, sessions and set-password
links are stored as SHA-256 hashes of random values (256 bits: nothing to guess at). A payment's
` + "`webhookSecret`" + `, which the service must use again to sign the payment's webhooks, and a
dashboard password's argon2id hash, which a reader could otherwise try guesses against offline,
with no lock-out, are stored sealed (webhook secrets since the sealing keys of eventstore migration
0011, password hashes since 2026-11-26): ` + "`sealed:v1:<key id>:<base64url>`" + `, AES-256-GCM under a
key kept in the database, opened only by the process that sends a webhook or checks a sign-in.
GET /events, the dashboard and ` + "`ledgerctl events export`" + ` show the sealed text, and the hash
covers it, so an auditor recomputes every hash without learning the secret. Payments and passwords
from before then keep the value as it was given.

In the tables below, ` + "`a.b`" + ` is member ` + "`b`" + ` of object ` + "`a`" + ` and ` + "`a[].b`" + ` member ` + "`b`" + ` of every element of
array ` + "`a`" + `. Decimals are strings, so they stay exact; an array may be ` + "`null`" + ` when empty. The
examples use placeholder values: every string holds its member's name.
`
