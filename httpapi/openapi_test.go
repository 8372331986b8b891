package httpapi

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// openAPIMethods are the operation keys of an OpenAPI path item.
var openAPIMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

type openAPIDoc struct {
	OpenAPI    string                                `json:"openapi"`
	Paths      map[string]map[string]json.RawMessage `json:"paths"`
	Components map[string]map[string]json.RawMessage `json:"components"`
}

func mustOpenAPI(t *testing.T) openAPIDoc {
	t.Helper()
	var doc openAPIDoc
	if err := json.Unmarshal(openAPIDocument, &doc); err != nil {
		t.Fatalf("openapi.json: got %v, want valid JSON", err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Fatalf("openapi: got %q, want 3.1.0", doc.OpenAPI)
	}
	return doc
}

// routerOperations walks the router and returns "METHOD /path/{var}" for
// every route.
func routerOperations(t *testing.T) map[string]bool {
	t.Helper()
	// Sandbox mode, so the document is compared with every route: the
	// /sandbox routes exist only in sandbox mode (404 in production), and
	// openapi.json documents them, saying so.
	s := New(Config{Sandbox: true}, Deps{Registry: prometheus.NewRegistry(), Log: slog.New(slog.DiscardHandler)})
	routes, err := s.Routes()
	if err != nil {
		t.Fatalf("routes: %v", err)
	}
	ops := map[string]bool{}
	for _, r := range routes {
		ops[r.Method+" "+r.Path] = true
	}
	if len(ops) == 0 {
		t.Fatal("routes: got none, want the API's routes")
	}
	return ops
}

// TestOpenAPIMatchesRouter keeps openapi.json true: every route and method
// of the router is documented, and the document lists nothing else.
func TestOpenAPIMatchesRouter(t *testing.T) {
	t.Parallel()
	doc := mustOpenAPI(t)
	routes := routerOperations(t)

	documented := map[string]bool{}
	for path, item := range doc.Paths {
		for key := range item {
			if slices.Contains(openAPIMethods, key) {
				documented[strings.ToUpper(key)+" "+path] = true
			}
		}
	}
	for op := range routes {
		if !documented[op] {
			t.Errorf("router has %s: got it missing from openapi.json, want it documented", op)
		}
	}
	for op := range documented {
		if !routes[op] {
			t.Errorf("openapi.json has %s: got no such route, want only what the router serves", op)
		}
	}
}

type openAPIOperation struct {
	OperationID string            `json:"operationId"`
	Security    *[]map[string]any `json:"security"`
	Parameters  []struct {
		Ref  string `json:"$ref"`
		Name string `json:"name"`
		In   string `json:"in"`
	} `json:"parameters"`
	RequestBody *json.RawMessage           `json:"requestBody"`
	Responses   map[string]json.RawMessage `json:"responses"`
}

// TestOpenAPIOperations checks each operation for what a client relies on:
// a unique operationId, responses, declared path parameters, a request
// body on POSTs, X-Request-Id, and Idempotency-Key on authenticated POSTs.
func TestOpenAPIOperations(t *testing.T) {
	t.Parallel()
	doc := mustOpenAPI(t)
	pathVar := regexp.MustCompile(`\{([^}:]+)`)
	ids := map[string]string{}
	for path, item := range doc.Paths {
		for method, raw := range item {
			if !slices.Contains(openAPIMethods, method) {
				continue
			}
			name := strings.ToUpper(method) + " " + path
			var op openAPIOperation
			if err := json.Unmarshal(raw, &op); err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			if op.OperationID == "" {
				t.Errorf("%s operationId: got none, want one", name)
			} else if other, dup := ids[op.OperationID]; dup {
				t.Errorf("%s operationId %s: got it also on %s, want unique", name, op.OperationID, other)
			}
			ids[op.OperationID] = name
			if len(op.Responses) == 0 {
				t.Errorf("%s responses: got none, want some", name)
			}
			params := map[string]bool{}
			for _, p := range op.Parameters {
				if p.Ref != "" {
					params[p.Ref] = true
				} else {
					params[p.In+":"+p.Name] = true
				}
			}
			for _, m := range pathVar.FindAllStringSubmatch(path, -1) {
				if !params["path:"+m[1]] {
					t.Errorf("%s: got no path parameter %s, want it declared", name, m[1])
				}
			}
			if !params["#/components/parameters/X-Request-Id"] {
				t.Errorf("%s: got no X-Request-Id parameter, want it", name)
			}
			public := op.Security != nil && len(*op.Security) == 0
			if method == "post" {
				if op.RequestBody == nil {
					t.Errorf("%s requestBody: got none, want one", name)
				}
				if !public && !params["#/components/parameters/Idempotency-Key"] {
					t.Errorf("%s: got no Idempotency-Key parameter, want it on every authenticated POST", name)
				}
			}
			if !public {
				for _, status := range []string{"401", "429", "500"} {
					if _, ok := op.Responses[status]; !ok {
						t.Errorf("%s responses: got no %s, want it on every authenticated operation", name, status)
					}
				}
			}
		}
	}
}

// TestOpenAPIRefs checks that every $ref in the document resolves, and that
// the shared components the conventions promise exist.
func TestOpenAPIRefs(t *testing.T) {
	t.Parallel()
	mustOpenAPI(t)
	var root any
	if err := json.Unmarshal(openAPIDocument, &root); err != nil {
		t.Fatal(err)
	}
	var walk func(v any, at string)
	walk = func(v any, at string) {
		switch v := v.(type) {
		case map[string]any:
			if ref, ok := v["$ref"].(string); ok {
				if _, ok := pointer(root, ref); !ok {
					t.Errorf("%s: $ref %s: got nothing there, want a definition", at, ref)
				}
			}
			for k, e := range v {
				walk(e, at+"/"+k)
			}
		case []any:
			for _, e := range v {
				walk(e, at+"[]")
			}
		}
	}
	walk(root, "#")

	for _, ref := range []string{
		"#/components/schemas/Problem", "#/components/schemas/FieldError",
		"#/components/securitySchemes/bearerAuth",
		"#/components/parameters/Idempotency-Key", "#/components/parameters/X-Request-Id",
		"#/components/headers/X-Request-Id", "#/components/headers/Idempotent-Replayed",
	} {
		if _, ok := pointer(root, ref); !ok {
			t.Errorf("%s: got nothing there, want it defined", ref)
		}
	}
	problem, _ := pointer(root, "#/components/schemas/Problem/properties")
	props, _ := problem.(map[string]any)
	for _, p := range []string{"type", "title", "status", "detail", "instance", "code", "errors"} {
		if _, ok := props[p]; !ok {
			t.Errorf("Problem schema: got no property %s, want it", p)
		}
	}
}

// pointer resolves a local JSON pointer ("#/a/b") in doc.
func pointer(doc any, ref string) (any, bool) {
	if !strings.HasPrefix(ref, "#/") {
		return nil, false
	}
	v := doc
	for _, part := range strings.Split(ref[2:], "/") {
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[part]; !ok {
			return nil, false
		}
	}
	return v, true
}

// TestOpenAPIServed checks that GET /openapi.json serves the document.
func TestOpenAPIServed(t *testing.T) {
	t.Parallel()
	s := New(Config{}, Deps{Registry: prometheus.NewRegistry(), Log: slog.New(slog.DiscardHandler)})
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/openapi.json", nil))
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("GET /openapi.json: got %d %q, want 200 application/json", rec.Code, rec.Header().Get("Content-Type"))
	}
	if rec.Body.String() != string(openAPIDocument) {
		t.Errorf("GET /openapi.json: got a body other than openapi.json")
	}
}
