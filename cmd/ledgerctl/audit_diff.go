package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
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

// diffAuditColumn adds a difference for a column, or, where the replay and
// the row both hold a JSON object, one for each member that differs (both
// values as jsonb writes them, so equal members have equal text).
func diffAuditColumn(f *auditFindings, subject, field, expected, actual string) {
	var e, a map[string]json.RawMessage
	if json.Unmarshal([]byte(expected), &e) != nil || json.Unmarshal([]byte(actual), &a) != nil || e == nil || a == nil {
		f.add(auditDifference{Subject: subject, Field: field, Expected: expected, Actual: actual})
		return
	}
	members := slices.Collect(maps.Keys(e))
	for k := range a {
		if _, ok := e[k]; !ok {
			members = append(members, k)
		}
	}
	slices.Sort(members)
	for _, k := range members {
		ev, inE := e[k]
		av, inA := a[k]
		if inE && inA && string(ev) == string(av) {
			continue
		}
		d := auditDifference{Subject: subject, Field: field + "." + k, Expected: string(ev), Actual: string(av)}
		if !inE {
			d.Expected = "(absent)"
		}
		if !inA {
			d.Actual = "(absent)"
		}
		f.add(d)
	}
}
