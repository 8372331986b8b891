package httpapi

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

var updateAPIDoc = flag.Bool("update", false, "rewrite docs/api.md from openapi.json")

// apiDocFile is docs/api.md, relative to this package.
const apiDocFile = "../docs/api.md"

// TestAPIReference keeps docs/api.md, the API reference a partner reads in
// the repository, in step with openapi.json; -update rewrites it.
func TestAPIReference(t *testing.T) {
	got, err := renderAPIReference(openAPIDocument)
	if err != nil {
		t.Fatal(err)
	}
	if *updateAPIDoc {
		if err := os.WriteFile(apiDocFile, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(apiDocFile)
	if err != nil {
		t.Fatalf("docs/api.md is stale: run go test ./httpapi -run TestAPIReference -update (%v)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("docs/api.md is stale: run go test ./httpapi -run TestAPIReference -update\n%s", firstDiffLine(want, got))
	}
}

// TestAPIReferenceHasEveryOperationAndSchema checks the renderer drops
// nothing: every operation of every path and every schema has its heading.
func TestAPIReferenceHasEveryOperationAndSchema(t *testing.T) {
	doc, err := renderAPIReference(openAPIDocument)
	if err != nil {
		t.Fatal(err)
	}
	spec := mustOpenAPI(t)
	for path, item := range spec.Paths {
		for method := range item {
			if !slices.Contains(openAPIMethods, method) {
				continue
			}
			want := fmt.Sprintf("### `%s %s`", strings.ToUpper(method), path)
			if !bytes.Contains(doc, []byte(want)) {
				t.Errorf("docs/api.md: got no %q, want every operation", want)
			}
		}
	}
	for name := range spec.Components["schemas"] {
		if want := "### " + name + "\n"; !bytes.Contains(doc, []byte(want)) {
			t.Errorf("docs/api.md: got no %q, want every schema", want)
		}
	}
}

// firstDiffLine describes the first line where the file and the document differ.
func firstDiffLine(file, doc []byte) string {
	a, b := strings.Split(string(file), "\n"), strings.Split(string(doc), "\n")
	for i := range max(len(a), len(b)) {
		var x, y string
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			return fmt.Sprintf("line %d:\n  file:     %s\n  document: %s", i+1, x, y)
		}
	}
	return ""
}

// ordered is a JSON object that remembers its members' order, so the
// reference follows the document's order of paths, members and responses.
type ordered struct {
	keys   []string
	values map[string]json.RawMessage
}

func (o *ordered) UnmarshalJSON(data []byte) error {
	d := json.NewDecoder(bytes.NewReader(data))
	if _, err := d.Token(); err != nil { // {
		return err
	}
	o.values = map[string]json.RawMessage{}
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return err
		}
		key := tok.(string)
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			return err
		}
		o.keys = append(o.keys, key)
		o.values[key] = v
	}
	return nil
}

// apiSchema is the part of a JSON Schema the reference shows.
type apiSchema struct {
	Ref         string          `json:"$ref"`
	Type        json.RawMessage `json:"type"` // a name or a list of names
	Format      string          `json:"format"`
	Items       *apiSchema      `json:"items"`
	OneOf       []apiSchema     `json:"oneOf"`
	AnyOf       []apiSchema     `json:"anyOf"`
	Enum        []any           `json:"enum"`
	Const       any             `json:"const"`
	Description string          `json:"description"`
	Required    []string        `json:"required"`
	Properties  ordered         `json:"properties"`
}

type apiParameter struct {
	Ref         string    `json:"$ref"`
	Name        string    `json:"name"`
	In          string    `json:"in"`
	Required    bool      `json:"required"`
	Description string    `json:"description"`
	Schema      apiSchema `json:"schema"`
}

type apiMedia struct {
	Schema   apiSchema       `json:"schema"`
	Example  json.RawMessage `json:"example"`
	Examples ordered         `json:"examples"`
}

type apiBody struct {
	Ref         string  `json:"$ref"`
	Description string  `json:"description"`
	Content     ordered `json:"content"`
}

type apiOperation struct {
	OperationID string            `json:"operationId"`
	Tags        []string          `json:"tags"`
	Summary     string            `json:"summary"`
	Description string            `json:"description"`
	Security    *[]map[string]any `json:"security"`
	Parameters  []apiParameter    `json:"parameters"`
	RequestBody *apiBody          `json:"requestBody"`
	Responses   ordered           `json:"responses"`
}

type apiDocument struct {
	Info struct {
		Title, Version, Description string
	} `json:"info"`
	Tags []struct {
		Name, Description string
	} `json:"tags"`
	Paths      ordered `json:"paths"`
	Webhooks   ordered `json:"webhooks"`
	Components struct {
		Parameters map[string]apiParameter `json:"parameters"`
		Responses  map[string]apiBody      `json:"responses"`
		Schemas    ordered                 `json:"schemas"`
	} `json:"components"`
}

// located is an operation with the path (or webhook name) it is found at.
type located struct {
	method, path string
	op           apiOperation
}

// renderAPIReference renders an OpenAPI 3.1 document as Markdown: the
// conventions, an index, every operation by tag, the webhooks and the schemas.
func renderAPIReference(raw []byte) ([]byte, error) {
	var doc apiDocument
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("decode openapi.json: %w", err)
	}
	ops, err := operations(doc.Paths)
	if err != nil {
		return nil, err
	}
	hooks, err := operations(doc.Webhooks)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# %s reference (version %s)\n\n", doc.Info.Title, doc.Info.Version)
	b.WriteString("<!-- Generated from httpapi/openapi.json by `go test ./httpapi -run TestAPIReference -update`; edit the JSON, not this file. -->\n\n")
	b.WriteString("Rendered from [`httpapi/openapi.json`](../httpapi/openapi.json), which a running `ledgerd` also serves at `GET /openapi.json`; ")
	b.WriteString("a test fails when this page is stale. The decisions a partner builds on are summed up in [contract.md](contract.md).\n\n")
	// The description's own level-2 headings become level 3 under "Overview".
	b.WriteString("## Overview\n\n")
	b.WriteString(strings.ReplaceAll(strings.TrimSpace(doc.Info.Description), "\n## ", "\n### "))
	b.WriteString("\n\n## Operations\n\n| operation | summary |\n|---|---|\n")
	for _, tag := range doc.Tags {
		for _, o := range ops {
			if slices.Contains(o.op.Tags, tag.Name) {
				fmt.Fprintf(&b, "| [`%s %s`](#%s) | %s |\n", strings.ToUpper(o.method), o.path, anchor("op", o.op.OperationID), cell(o.op.Summary))
			}
		}
	}
	for _, tag := range doc.Tags {
		fmt.Fprintf(&b, "\n## %s\n\n%s\n", tag.Name, tag.Description)
		for _, o := range ops {
			if slices.Contains(o.op.Tags, tag.Name) {
				if err := writeOperation(&b, doc, o); err != nil {
					return nil, err
				}
			}
		}
	}
	b.WriteString("\n## Webhooks\n\nRequests the ledger sends to the partner.\n")
	for _, o := range hooks {
		o.path = "{webhookUrl}"
		if err := writeOperation(&b, doc, o); err != nil {
			return nil, err
		}
	}
	b.WriteString("\n## Schemas\n")
	for _, name := range doc.Components.Schemas.keys {
		var s apiSchema
		if err := json.Unmarshal(doc.Components.Schemas.values[name], &s); err != nil {
			return nil, fmt.Errorf("schema %s: %w", name, err)
		}
		writeSchema(&b, name, s)
	}
	return []byte(b.String()), nil
}

// operations lists the operations of a paths (or webhooks) object in the
// document's order, methods in openAPIMethods' order.
func operations(paths ordered) ([]located, error) {
	var out []located
	for _, path := range paths.keys {
		var item map[string]json.RawMessage
		if err := json.Unmarshal(paths.values[path], &item); err != nil {
			return nil, fmt.Errorf("path %s: %w", path, err)
		}
		for _, method := range openAPIMethods {
			if item[method] == nil {
				continue
			}
			var op apiOperation
			if err := json.Unmarshal(item[method], &op); err != nil {
				return nil, fmt.Errorf("%s %s: %w", method, path, err)
			}
			out = append(out, located{method, path, op})
		}
	}
	return out, nil
}

func writeOperation(b *strings.Builder, doc apiDocument, o located) error {
	fmt.Fprintf(b, "\n<a id=\"%s\"></a>\n### `%s %s`\n\n**%s.** %s\n\n", anchor("op", o.op.OperationID),
		strings.ToUpper(o.method), o.path, strings.TrimSuffix(o.op.Summary, "."), o.op.Description)
	if o.op.Security != nil && len(*o.op.Security) == 0 {
		b.WriteString("No authentication.\n\n")
	} else {
		b.WriteString("Authentication: `Authorization: Bearer <token>`.\n\n")
	}
	if len(o.op.Parameters) > 0 {
		b.WriteString("| parameter | in | type | required | description |\n|---|---|---|---|---|\n")
		for _, p := range o.op.Parameters {
			if p.Ref != "" {
				p = doc.Components.Parameters[refName(p.Ref)]
			}
			fmt.Fprintf(b, "| `%s` | %s | %s | %s | %s |\n", p.Name, p.In, typeOf(p.Schema), yesNo(p.Required), cell(p.Description))
		}
		b.WriteString("\n")
	}
	if o.op.RequestBody != nil {
		for _, ct := range o.op.RequestBody.Content.keys {
			var m apiMedia
			if err := json.Unmarshal(o.op.RequestBody.Content.values[ct], &m); err != nil {
				return fmt.Errorf("%s %s body: %w", o.method, o.path, err)
			}
			fmt.Fprintf(b, "Request body (`%s`): %s\n\n", ct, typeOf(m.Schema))
			if err := writeExamples(b, m); err != nil {
				return fmt.Errorf("%s %s body: %w", o.method, o.path, err)
			}
		}
	}
	b.WriteString("| status | meaning | body |\n|---|---|---|\n")
	for _, status := range o.op.Responses.keys {
		var r apiBody
		if err := json.Unmarshal(o.op.Responses.values[status], &r); err != nil {
			return fmt.Errorf("%s %s %s: %w", o.method, o.path, status, err)
		}
		if r.Ref != "" {
			r = doc.Components.Responses[refName(r.Ref)]
		}
		var bodies []string
		for _, ct := range r.Content.keys {
			var m apiMedia
			if err := json.Unmarshal(r.Content.values[ct], &m); err != nil {
				return fmt.Errorf("%s %s %s: %w", o.method, o.path, status, err)
			}
			bodies = append(bodies, fmt.Sprintf("`%s` %s", ct, typeOf(m.Schema)))
		}
		fmt.Fprintf(b, "| %s | %s | %s |\n", status, cell(r.Description), strings.Join(bodies, "<br>"))
	}
	return nil
}

// writeExamples writes a request body's examples as JSON blocks.
func writeExamples(b *strings.Builder, m apiMedia) error {
	// Indenting the raw text keeps the example's member order.
	write := func(title string, v json.RawMessage) error {
		var j bytes.Buffer
		if err := json.Indent(&j, v, "", "  "); err != nil {
			return err
		}
		fmt.Fprintf(b, "%s\n\n```json\n%s\n```\n\n", title, j.Bytes())
		return nil
	}
	if m.Example != nil {
		return write("Example:", m.Example)
	}
	for _, name := range m.Examples.keys {
		var ex struct {
			Summary string          `json:"summary"`
			Value   json.RawMessage `json:"value"`
		}
		if err := json.Unmarshal(m.Examples.values[name], &ex); err != nil {
			return err
		}
		if err := write("Example ("+ex.Summary+"):", ex.Value); err != nil {
			return err
		}
	}
	return nil
}

func writeSchema(b *strings.Builder, name string, s apiSchema) {
	fmt.Fprintf(b, "\n<a id=\"%s\"></a>\n### %s\n\n", anchor("schema", name), name)
	if s.Description != "" {
		b.WriteString(s.Description + "\n\n")
	}
	if len(s.Properties.keys) == 0 {
		fmt.Fprintf(b, "Type: %s.\n", typeOf(s))
		return
	}
	b.WriteString("| member | type | required | description |\n|---|---|---|---|\n")
	for _, prop := range s.Properties.keys {
		var p apiSchema
		if err := json.Unmarshal(s.Properties.values[prop], &p); err != nil {
			p.Description = "(not a schema)"
		}
		fmt.Fprintf(b, "| `%s` | %s | %s | %s |\n", prop, typeOf(p), yesNo(slices.Contains(s.Required, prop)), cell(p.Description))
	}
}

// typeOf describes a schema in a few words: a link for a reference, the
// alternatives of oneOf/anyOf, the item type of an array, the enum's values.
func typeOf(s apiSchema) string {
	switch {
	case s.Ref != "":
		name := refName(s.Ref)
		return fmt.Sprintf("[%s](#%s)", name, anchor("schema", name))
	case len(s.OneOf) > 0 || len(s.AnyOf) > 0:
		var alts []string
		for _, a := range append(s.OneOf, s.AnyOf...) {
			alts = append(alts, typeOf(a))
		}
		return strings.Join(alts, " or ")
	case s.Const != nil:
		return fmt.Sprintf("`%v`", s.Const)
	}
	var types []string
	if err := json.Unmarshal(s.Type, &types); err != nil {
		var one string
		if json.Unmarshal(s.Type, &one) == nil && one != "" {
			types = []string{one}
		}
	}
	for i, t := range types {
		switch {
		case t == "array" && s.Items != nil:
			types[i] = "array of " + typeOf(*s.Items)
		case s.Format != "" && t != "null":
			types[i] = t + " (" + s.Format + ")"
		}
	}
	desc := strings.Join(types, " or ")
	if desc == "" {
		desc = "any"
	}
	if len(s.Enum) > 0 {
		var vals []string
		for _, v := range s.Enum {
			if v == nil {
				continue // null is named by the type already
			}
			vals = append(vals, fmt.Sprintf("`%v`", v))
		}
		desc += ": " + strings.Join(vals, ", ")
	}
	return desc
}

func refName(ref string) string { return ref[strings.LastIndex(ref, "/")+1:] }

// anchor is an id for a heading, stable whatever the heading's text.
func anchor(kind, name string) string { return kind + "-" + strings.ToLower(name) }

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// cell makes text fit one Markdown table cell.
func cell(s string) string {
	s = strings.ReplaceAll(strings.TrimSpace(s), "|", `\|`)
	return strings.ReplaceAll(s, "\n", "<br>")
}
