package dashboard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/domain"
)

// templateFuncs are the formatting helpers the templates use.
var templateFuncs = template.FuncMap{
	"money":    domain.FormatAmount,
	"moneyInt": func(n int64, unit string) string { return domain.FormatAmount(decimal.NewFromInt(n), unit) },
	"when":     when,
	"short":    short,
	"envelope": envelopeJSON,
	"pretty":   prettyJSON,
	"size":     size,
	"deref":    func(p *int) int { return *p },
	"derefs":   func(p *string) string { return *p },
}

// short names an id in lists and headings: its last 8 hex digits. Ids are
// UUIDv7, whose leading digits are the creation time and so alike for
// anything made the same minute; the trailing ones are random.
func short(id uuid.UUID) string {
	s := id.String()
	return s[len(s)-8:]
}

// when renders a time as a <time> element: UTC in the text and on hover;
// the page's script rewrites the text in the viewer's time zone, leaving
// UTC in the title. Without the script the UTC text stands.
func when(t time.Time) template.HTML {
	if t.IsZero() {
		return "—"
	}
	t = t.UTC()
	return template.HTML(fmt.Sprintf(`<time datetime="%s" title="%s">%s</time>`,
		t.Format(domain.TimeFormat), t.Format("2006-01-02 15:04:05 UTC"), t.Format("2006-01-02 15:04 UTC")))
}

// envelopeJSON is a stored event as its CloudEvents JSON, indented.
func envelopeJSON(rec domain.Record) string {
	raw, err := json.MarshalIndent(domain.Envelope(rec), "", "  ")
	if err != nil {
		return err.Error()
	}
	return string(raw)
}

// prettyJSON indents raw JSON; what is not JSON is shown as it is.
func prettyJSON(raw []byte) string {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return string(raw)
	}
	return b.String()
}

// size is a byte count for people.
func size(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
