package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
)

// auditDifference is one thing audit verify found wrong: where (an event, a
// read-model row, a tenant's postings), which field, and what the events
// say it should be against what is stored.
type auditDifference struct {
	Check    string `json:"check"`   // positions, sequencing, chain, replay, postings
	Subject  string `json:"subject"` // "event <id> (position 17)", "payments <id>", "ledger_entries <event id>/2"
	Field    string `json:"field,omitempty"`
	Expected string `json:"expected,omitempty"`
	Actual   string `json:"actual,omitempty"`
	Note     string `json:"note,omitempty"`
}

func (d auditDifference) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-10s %s", d.Check, d.Subject)
	if d.Field != "" {
		b.WriteString(": " + d.Field)
	}
	if d.Expected != "" || d.Actual != "" {
		fmt.Fprintf(&b, ": expected %s, actual %s", d.Expected, d.Actual)
	}
	if d.Note != "" {
		b.WriteString(": " + d.Note)
	}
	return b.String()
}

// auditFindings counts the differences of one check and keeps the first few,
// so memory stays flat however much is wrong.
type auditFindings struct {
	check string // the name of the check; a difference without one is of this check
	keep  int
	count int64
	first []auditDifference
}

func (f *auditFindings) add(d auditDifference) {
	if d.Check == "" {
		d.Check = f.check
	}
	f.count++
	if len(f.first) < f.keep {
		f.first = append(f.first, d)
	}
}

// auditFields compares one read-model row with what the events say it holds.
type auditFields struct {
	f       *auditFindings
	subject string // "users <id>"
}

// eq records a difference unless expected and actual are the same value.
func (c auditFields) eq(field string, expected, actual any) {
	if !auditSame(expected, actual) {
		c.f.add(auditDifference{Subject: c.subject, Field: field, Expected: auditShow(expected), Actual: auditShow(actual)})
	}
}

// note records a difference that is not one field's.
func (c auditFields) note(format string, args ...any) {
	c.f.add(auditDifference{Subject: c.subject, Note: fmt.Sprintf(format, args...)})
}

// json compares two JSON documents member by member (numbers by value),
// naming each differing member by its path under field.
func (c auditFields) json(field string, expected, actual []byte) {
	exp, err := decodeAuditJSON(expected)
	if err != nil {
		c.note("%s: cannot encode the replayed value: %v", field, err)
		return
	}
	act, err := decodeAuditJSON(actual)
	if err != nil {
		c.eq(field, string(expected), string(actual))
		return
	}
	diffAuditJSON(field, exp, act, func(path string, e, a string) {
		c.f.add(auditDifference{Subject: c.subject, Field: path, Expected: e, Actual: a})
	})
}

// sameAsJSON compares two values by their JSON form.
func (c auditFields) sameAsJSON(field string, expected, actual any) {
	e, err1 := json.Marshal(expected)
	a, err2 := json.Marshal(actual)
	if err1 != nil || err2 != nil {
		c.note("%s: cannot encode: %v %v", field, err1, err2)
		return
	}
	c.json(field, e, a)
}

func decodeAuditJSON(raw []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	err := d.Decode(&v)
	return v, err
}

// diffAuditJSON calls report for every member of exp and act that differs:
// objects member by member, arrays element by element, numbers by value.
func diffAuditJSON(path string, exp, act any, report func(path, expected, actual string)) {
	switch e := exp.(type) {
	case map[string]any:
		a, ok := act.(map[string]any)
		if !ok {
			break
		}
		keys := make([]string, 0, len(e)+len(a))
		for k := range e {
			keys = append(keys, k)
		}
		for k := range a {
			if _, ok := e[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			ev, inE := e[k]
			av, inA := a[k]
			switch {
			case !inE:
				report(path+"."+k, "(absent)", auditJSON(av))
			case !inA:
				report(path+"."+k, auditJSON(ev), "(absent)")
			default:
				diffAuditJSON(path+"."+k, ev, av, report)
			}
		}
		return
	case []any:
		a, ok := act.([]any)
		if !ok {
			break
		}
		for i := range max(len(e), len(a)) {
			p := path + "[" + strconv.Itoa(i) + "]"
			switch {
			case i >= len(a):
				report(p, auditJSON(e[i]), "(absent)")
			case i >= len(e):
				report(p, "(absent)", auditJSON(a[i]))
			default:
				diffAuditJSON(p, e[i], a[i], report)
			}
		}
		return
	case json.Number:
		if a, ok := act.(json.Number); ok {
			de, err1 := decimal.NewFromString(string(e))
			da, err2 := decimal.NewFromString(string(a))
			if err1 == nil && err2 == nil && de.Equal(da) {
				return
			}
		}
	default:
		if reflect.DeepEqual(exp, act) {
			return
		}
	}
	report(path, auditJSON(exp), auditJSON(act))
}

func auditJSON(v any) string {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(raw)
}

// auditSame reports whether two column values are equal: instants by time,
// decimals by value, pointers by what they point to.
func auditSame(a, b any) bool {
	switch a := a.(type) {
	case time.Time:
		b, ok := b.(time.Time)
		return ok && a.Equal(b)
	case *time.Time:
		b, ok := b.(*time.Time)
		return ok && (a == nil) == (b == nil) && (a == nil || a.Equal(*b))
	case decimal.Decimal:
		b, ok := b.(decimal.Decimal)
		return ok && a.Equal(b)
	case *uuid.UUID:
		b, ok := b.(*uuid.UUID)
		return ok && (a == nil) == (b == nil) && (a == nil || *a == *b)
	}
	return reflect.DeepEqual(a, b)
}

// auditShow writes a column value for a difference line.
func auditShow(v any) string {
	switch v := v.(type) {
	case string:
		return strconv.Quote(v)
	case time.Time:
		return v.UTC().Format(time.RFC3339Nano)
	case *time.Time:
		if v == nil {
			return "null"
		}
		return v.UTC().Format(time.RFC3339Nano)
	case *uuid.UUID:
		if v == nil {
			return "null"
		}
		return v.String()
	case *int:
		if v == nil {
			return "null"
		}
		return strconv.Itoa(*v)
	case *string:
		if v == nil {
			return "null"
		}
		return strconv.Quote(*v)
	case nil:
		return "null"
	}
	return fmt.Sprint(v)
}
