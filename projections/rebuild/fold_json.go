package rebuild

import (
	"bytes"
	"cmp"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/domain/rawjson"
	"github.com/ledger/ledger/projections"
)

// jsonObject is a JSON object by its top-level members, as the
// projection's || and jsonb_set merge them: a list, not a map, because a
// payment's state has some forty members and a map of them cost a fifth
// of the rebuild's allocations. Names are unique, and the members are kept
// in jsonb's key order (shorter names first, then bytewise): sorted, a
// repeated name is found beside its first, and the folded state lists its
// members as the projector's merge (jsonb's text) does. The state is
// stored as json (migration 0014), so Postgres takes the members in any
// order; when it was jsonb, members in order also spared its parser a
// quicksort of every state.
type jsonObject struct {
	members []jsonMember
}

type jsonMember struct {
	name  string
	value json.RawMessage
}

// parseObject splits a JSON object into its top-level members, without
// decoding their values (which stay slices of raw). raw is an event's
// data or a value of it, encoding/json's output (in a struct's order):
// valid JSON (rawjson). Anything else hands the stream to the projector. A
// repeated name keeps its last value, as jsonb does.
func parseObject(raw []byte) (jsonObject, error) {
	ms := make([]jsonMember, 0, 48)
	err := rawjson.Object(raw, func(rawName, _, value []byte) error {
		ms = append(ms, jsonMember{domain.Intern(rawName), value})
		return nil
	})
	if err != nil {
		return jsonObject{}, errUnfoldable
	}
	if !slices.IsSortedFunc(ms, compareMembers) {
		sortMembers(ms)
	}
	// Repeats are side by side now, the last one given last: keep it.
	kept := ms[:0]
	for i, m := range ms {
		if i+1 < len(ms) && ms[i+1].name == m.name {
			continue
		}
		kept = append(kept, m)
	}
	return jsonObject{members: kept}, nil
}

// compareMembers orders members by name in jsonb's key order.
func compareMembers(a, b jsonMember) int {
	return jsonbKeyCompare(a.name, b.name)
}

// jsonbKeyCompare orders names as jsonb does: shorter first, then
// bytewise.
func jsonbKeyCompare(a, b string) int {
	if len(a) != len(b) {
		return cmp.Compare(len(a), len(b))
	}
	return strings.Compare(a, b)
}

// get returns the value of member name.
func (o *jsonObject) get(name string) (json.RawMessage, bool) {
	for _, m := range o.members {
		if m.name == name {
			return m.value, true
		}
	}
	return nil, false
}

// set gives member name value, adding it in key order when it is new. The
// members are few and most names differ in length, so a scan beats a
// binary search's comparisons; the members being in order, the scan ends
// at the name or at the first member after it.
func (o *jsonObject) set(name string, value json.RawMessage) {
	at := len(o.members)
	for i, m := range o.members {
		c := jsonbKeyCompare(m.name, name)
		if c == 0 {
			o.members[i].value = value
			return
		}
		if c > 0 {
			at = i
			break
		}
	}
	o.members = slices.Insert(o.members, at, jsonMember{name, value})
}

// text encodes o for a json or jsonb column. Its members are valid JSON
// already (parsed from an event, or encoded by encoding/json), so they are
// written as they are, in key order.
func (o *jsonObject) text() []byte {
	n := 2
	for _, m := range o.members {
		n += len(m.name) + len(m.value) + 4
	}
	b := make([]byte, 1, n)
	b[0] = '{'
	for _, m := range o.members {
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = appendJSONString(b, m.name)
		b = append(b, ':')
		b = append(b, m.value...)
	}
	return append(b, '}')
}

// sortMembers puts ms in jsonb's key order, repeated names in the order
// given. Most payments' events give a payment's members in one of a few
// orders (encoding/json's order of domain.Payment, less the empty members
// it omits), so the permutations that sorted the orders seen last are kept
// and used again: checking forty names against a kept order costs less
// than sorting them, and BenchmarkPaymentState measured a payment's state
// as cheap to fold as before its members were kept in order.
func sortMembers(ms []jsonMember) {
	var order *memberOrder
	recent := recentMemberOrders.Load()
	if recent != nil {
		for _, o := range *recent {
			if o.fits(ms) {
				order = o
				break
			}
		}
	}
	if order == nil {
		order = newMemberOrder(ms)
		next := []*memberOrder{order}
		if recent != nil {
			next = append(next, (*recent)[:min(len(*recent), memberOrdersKept-1)]...)
		}
		recentMemberOrders.Store(&next)
	}
	var buf [64]jsonMember // a payment's state fits: no allocation
	given := append(buf[:0], ms...)
	for i, j := range order.perm {
		ms[i] = given[j]
	}
}

// memberOrder is an order of member names and the permutation that puts
// them in jsonb's key order: the member at perm[i] goes i-th.
type memberOrder struct {
	names []string
	perm  []int
}

// recentMemberOrders are the orders sortMembers sorted last, newest
// first, shared by the fold's workers: a slice never changed once stored.
var recentMemberOrders atomic.Pointer[[]*memberOrder]

// memberOrdersKept bounds recentMemberOrders: more than the orders a
// payment's creation can give in practice (its optional members are few).
const memberOrdersKept = 16

func newMemberOrder(ms []jsonMember) *memberOrder {
	o := &memberOrder{names: make([]string, len(ms)), perm: make([]int, len(ms))}
	for i, m := range ms {
		o.names[i], o.perm[i] = m.name, i
	}
	slices.SortStableFunc(o.perm, func(a, b int) int { return jsonbKeyCompare(o.names[a], o.names[b]) })
	return o
}

// fits reports whether ms has o's names in o's order.
func (o *memberOrder) fits(ms []jsonMember) bool {
	if len(ms) != len(o.names) {
		return false
	}
	for i, m := range ms {
		if m.name != o.names[i] {
			return false
		}
	}
	return true
}

// appendJSONString appends s as a JSON string.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// stateChanges writes a payment event's changes into the payment's state
// (domain.WritePaymentChanges: `state || projections.JSONOf(changes)`), each value's
// JSON written directly into the folder's arena, the same value as projections.JSONOf
// gives (encoding/json's reflection was a visible share of a rebuild's Go
// time, the status lines' as much again; figures: docs/performance.md, Replay). The deliveries
// queued before the first change get their copy of the state first.
type stateChanges struct {
	s       *streamFold
	changed bool
	logs    bool // statusLogs was among them, which the line's append would undo
}

// touch gives the deliveries queued before the state's first change their
// copy of it.
func (c *stateChanges) touch() {
	if !c.changed {
		c.s.copyStateToDeliveries()
		c.changed = true
	}
}

// begin is where a member's value of up to n bytes starts in the arena.
func (c *stateChanges) begin(name string, n int) int {
	c.touch()
	c.logs = c.logs || name == "statusLogs"
	return c.s.values.begin(n)
}

// end sets member name to the value written since start.
func (c *stateChanges) end(name string, start int) {
	c.s.payment.state.set(name, c.s.values.since(start))
}

func (c *stateChanges) String(name, v string) {
	at := c.begin(name, len(v)+2)
	c.s.values.chunk = appendJSONString(c.s.values.chunk, v)
	c.end(name, at)
}

func (c *stateChanges) Int(name string, v int64) {
	at := c.begin(name, 20)
	c.s.values.chunk = strconv.AppendInt(c.s.values.chunk, v, 10)
	c.end(name, at)
}

func (c *stateChanges) Bool(name string, v bool) {
	at := c.begin(name, 5)
	c.s.values.chunk = strconv.AppendBool(c.s.values.chunk, v)
	c.end(name, at)
}

func (c *stateChanges) Decimal(name string, v decimal.Decimal) {
	at := c.begin(name, 24)
	c.s.values.chunk = appendJSONDecimal(c.s.values.chunk, v)
	c.end(name, at)
}

func (c *stateChanges) Time(name string, v time.Time) {
	at := c.begin(name, 40)
	c.s.values.chunk = appendJSONTime(c.s.values.chunk, v)
	c.end(name, at)
}

// appendStatusLine appends the line a status event adds to statusLogs.
func appendStatusLine(b []byte, line domain.StatusLogEntry) []byte {
	b = appendJSONString(append(b, `{"status":`...), line.Status)
	b = appendJSONString(append(b, `,"message":`...), line.Message)
	return append(appendJSONTime(append(b, `,"at":`...), line.At), '}')
}

// appendJSONDecimal appends d as its MarshalJSON writes it.
func appendJSONDecimal(b []byte, d decimal.Decimal) []byte {
	if decimal.MarshalJSONWithoutQuotes {
		return append(b, d.String()...)
	}
	return append(append(append(b, '"'), d.String()...), '"')
}

// appendJSONTime appends t as its MarshalJSON writes it (RFC 3339 with
// the nanoseconds it has), through encoding/json for a time written
// otherwise (a year outside 0-9999, an offset of seconds).
func appendJSONTime(b []byte, t time.Time) []byte {
	_, offset := t.Zone()
	if y := t.Year(); y < 0 || y > 9999 || offset%60 != 0 {
		return append(b, projections.JSONOf(t)...)
	}
	return append(t.AppendFormat(append(b, '"'), time.RFC3339Nano), '"')
}

// jsonArena hands out the JSON values the fold writes into a payment's
// state (a member an event changes, the grown statusLogs) from shared
// chunks: each was an allocation of its own, several an event. A value stays valid as long as anything refers to
// it: a chunk's bytes are never written again once handed out.
type jsonArena struct {
	chunk []byte
}

// jsonArenaChunk is the size of a chunk: a payment's changes and status
// lines come to a few hundred bytes an event.
const jsonArenaChunk = 32 << 10

// begin makes room for n bytes in the current chunk and returns where
// they start.
func (a *jsonArena) begin(n int) int {
	if cap(a.chunk)-len(a.chunk) < n {
		a.chunk = make([]byte, 0, max(jsonArenaChunk, n))
	}
	return len(a.chunk)
}

// since is what was appended to the chunk since start, for keeps.
func (a *jsonArena) since(start int) json.RawMessage {
	return a.chunk[start:len(a.chunk):len(a.chunk)]
}

// withLine returns the JSON array logs with line's JSON appended:
// (state->'statusLogs') || '[line]'. logs is an array's text, its last
// byte ']'.
func (a *jsonArena) withLine(logs []byte, line domain.StatusLogEntry) json.RawMessage {
	start := a.begin(len(logs) + len(line.Status) + len(line.Message) + 80)
	a.chunk = append(a.chunk, logs[:len(logs)-1]...)
	if len(bytes.TrimSpace(logs[1:len(logs)-1])) > 0 { // the array has lines already
		a.chunk = append(a.chunk, ',')
	}
	a.chunk = append(appendStatusLine(a.chunk, line), ']')
	return a.since(start)
}
