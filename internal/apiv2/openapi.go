package apiv2

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/dripfaucet/drip/internal/operation"
)

// The OpenAPI document of v2 (D39) is generated, so that it cannot
// disagree with the server: openapi.tmpl.json holds what types cannot say
// (info, servers, security, tags, the envelope and error components, each
// path's summary, description, refusals, error replies and x-scope), and
// Document fills in, from the operation of each path (Routes):
//
//   - the POST request body's schema, the operation's input schema in v2's
//     flavour: an optional parameter also takes null, which v2 reads as
//     absent; a required one does not;
//   - the GET query parameters of a read path, the same schema's
//     properties;
//   - the schema of the 200 reply's data, the record as v2 answers it
//     (operation.Op.RecordSchema), under the component name the template's
//     reference gives it.
//
// openapi.json, embedded and served, is Document's output, kept as a
// golden file: TestOpenAPIGenerated fails when it is stale, and
// `go test ./internal/apiv2 -run TestOpenAPIGenerated -update` writes it.

//go:embed openapi.tmpl.json
var openAPITemplate []byte

// bodyDescription is every request body's description. The size limit is
// the one rule of the body that a schema cannot say.
var bodyDescription = fmt.Sprintf("A JSON object; the body is read as JSON whatever its Content-Type says. "+
	"Unknown fields are refused with 400 invalid; a body that is null, a list or a scalar, "+
	"or larger than %d KiB, with 400 malformed_request.", maxBody>>10)

// Document generates the OpenAPI 3.1 document of v2 over ops.
func Document(ops *operation.Service) ([]byte, error) {
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(openAPITemplate))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("openapi.tmpl.json: %w", err)
	}
	paths := object(doc, "paths")
	schemas := object(object(doc, "components"), "schemas")
	routes := Routes(ops)
	for _, path := range slices.Sorted(maps.Keys(routes)) {
		if paths[path] == nil {
			return nil, fmt.Errorf("openapi.tmpl.json does not describe %s", path)
		}
	}
	for _, path := range slices.Sorted(maps.Keys(paths)) {
		if path == "/openapi.json" {
			continue
		}
		op := routes[path]
		if op == nil {
			return nil, fmt.Errorf("openapi.tmpl.json describes %s, which v2 does not serve", path)
		}
		item := object(paths, path)
		for method := range item {
			if method != "post" && !(method == "get" && takesGET(op)) {
				return nil, fmt.Errorf("openapi.tmpl.json: %s %s, which v2 does not take", method, path)
			}
		}
		if _, ok := item["get"]; takesGET(op) != ok {
			return nil, fmt.Errorf("openapi.tmpl.json: %s must have a GET exactly when its operation is a read", path)
		}
		for method, o := range item {
			operation := o.(map[string]any)
			if err := fill(operation, method, path, op, schemas); err != nil {
				return nil, err
			}
		}
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return visible(out.Bytes()), nil
}

// visible escapes the characters of the JSON text that a reader cannot
// see (the spaces of a pattern that refuses blank names): the same JSON,
// readable.
func visible(b []byte) []byte {
	var out bytes.Buffer
	for _, r := range string(b) {
		if r > unicode.MaxASCII && (unicode.IsSpace(r) || !unicode.IsPrint(r)) {
			fmt.Fprintf(&out, `\u%04x`, r)
			continue
		}
		out.WriteRune(r)
	}
	return out.Bytes()
}

// fill writes the schemas of one method of a path from its operation.
func fill(o map[string]any, method, path string, op *operation.Op, schemas map[string]any) error {
	in := op.InputSchema()
	switch method {
	case "post":
		o["requestBody"] = map[string]any{
			"required":    len(in.Required) > 0,
			"description": bodyDescription,
			"content":     map[string]any{"application/json": map[string]any{"schema": v2Input(in)}},
		}
	case "get":
		params, err := queryParameters(in)
		if err != nil {
			return fmt.Errorf("GET %s: %w", path, err)
		}
		o["parameters"] = params
	}
	// The 200 reply: the envelope and, in data, a reference to the record.
	ok := object(object(o, "responses"), "200")
	parts, _ := object(object(ok, "content"), "application/json")["schema"].(map[string]any)["allOf"].([]any)
	if len(parts) != 2 {
		return fmt.Errorf("%s %s: the 200 reply is not the envelope and data", method, path)
	}
	ref, _ := object(object(parts[1].(map[string]any), "properties"), "data")["$ref"].(string)
	name, found := strings.CutPrefix(ref, "#/components/schemas/")
	if !found {
		return fmt.Errorf("%s %s: the 200 reply's data is not a reference to a component", method, path)
	}
	record := toJSON(op.RecordSchema())
	if prev, ok := schemas[name]; ok && !jsonEqual(prev, record) {
		return fmt.Errorf("%s %s: components.schemas.%s is the record of two operations that differ", method, path, name)
	}
	schemas[name] = record
	return nil
}

// v2Input is an input schema as v2 reads it: null is absent, so every
// optional property, at any depth, also takes null.
func v2Input(s *jsonschema.Schema) any {
	out := toJSON(s)
	nullable(out.(map[string]any))
	return out
}

func nullable(s map[string]any) {
	required := map[string]bool{}
	if list, ok := s["required"].([]any); ok {
		for _, r := range list {
			required[r.(string)] = true
		}
	}
	if props, ok := s["properties"].(map[string]any); ok {
		for name, p := range props {
			p := p.(map[string]any)
			nullable(p)
			if !required[name] && len(p) > 0 && s["type"] == "object" {
				orNull(p)
			}
		}
	}
	for _, sub := range []string{"items", "additionalProperties"} {
		if p, ok := s[sub].(map[string]any); ok {
			nullable(p)
		}
	}
}

// orNull makes a schema take null too.
func orNull(p map[string]any) {
	switch t := p["type"].(type) {
	case string:
		p["type"] = []any{t, "null"}
	case []any:
		if !slices.Contains(t, any("null")) {
			p["type"] = append(t, "null")
		}
	case nil:
		if anyOf, ok := p["anyOf"].([]any); ok {
			p["anyOf"] = append(anyOf, map[string]any{"type": "null"})
		}
	}
	if enum, ok := p["enum"].([]any); ok {
		p["enum"] = append(enum, nil)
	}
}

// queryParameters are a read's parameters as GET takes them: strings and
// whole numbers, each once (D33).
func queryParameters(in *jsonschema.Schema) ([]any, error) {
	var out []any
	for _, name := range propertyNames(in) {
		p := in.Properties[name]
		if p.Type != "string" && p.Type != "integer" {
			return nil, fmt.Errorf("parameter %s is a %s, which a query cannot carry", name, p.Type)
		}
		schema := p.CloneSchemas()
		schema.Description = ""
		out = append(out, map[string]any{
			"name": name, "in": "query", "required": slices.Contains(in.Required, name),
			"description": p.Description, "schema": toJSON(schema),
		})
	}
	return out, nil
}

// propertyNames are a schema's properties in the order of its type's
// fields.
func propertyNames(s *jsonschema.Schema) []string {
	if len(s.PropertyOrder) == len(s.Properties) {
		return s.PropertyOrder
	}
	return slices.Sorted(maps.Keys(s.Properties))
}

func object(m map[string]any, key string) map[string]any {
	o, _ := m[key].(map[string]any)
	return o
}

// toJSON is a schema as the generic JSON the document is built of.
func toJSON(s *jsonschema.Schema) any {
	b, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("apiv2: schema: %v", err)) // a schema of package operation always marshals
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	_ = dec.Decode(&v)
	return v
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}
