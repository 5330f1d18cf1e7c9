package client

import (
	"encoding/json"
	"go/build"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/dripfaucet/drip/internal/apiv2"
	"github.com/dripfaucet/drip/internal/apptest"
)

// replyTypes is the type each v2 path's reply data decodes into.
var replyTypes = map[string]any{
	"/balance":                         Balance{},
	"/balances":                        Balances{},
	"/currencies":                      Currencies{},
	"/check-address":                   AddressCheck{},
	"/payouts":                         Payouts{},
	"/faucet":                          Faucet{},
	"/stats/daily":                     DailyStats{},
	"/stats/users":                     Page[UserStat]{},
	"/transactions":                    Page[Transaction]{},
	"/ratelimits":                      RateLimits{},
	"/low-balance-notification":        LowBalanceNotification{},
	"/audit":                           AuditLog{},
	"/events":                          Events{},
	"/faucet/update":                   Faucet{},
	"/ratelimits/set":                  RateLimits{},
	"/ip-whitelist":                    IPWhitelist{},
	"/ip-whitelist/set":                IPWhitelist{},
	"/low-balance-notification/toggle": LowBalanceNotification{},
	"/anti-fraud/rules":                AntiFraudRules{},
	"/anti-fraud/toggle":               AntiFraudRules{},
	"/anti-fraud/rules/update":         AntiFraudRules{},
	"/send":                            SendResult{},
	"/send/batch":                      BatchResult{},
	"/faucet/create":                   CreatedFaucet{},
	"/approval-cost":                   ApprovalCost{},
	"/faucet/request-approval":         ApprovalRequest{},
}

// TestReplyTypesMatchTheOpenAPIDocument holds each v2 reply type to the
// document's schema of that path's data (D39): the same members, none
// missing and none extra, at every depth, each of a Go type that can hold
// the schema's values; whole-coin decimals are json.Number, never float64.
func TestReplyTypesMatchTheOpenAPIDocument(t *testing.T) {
	t.Parallel()
	doc, err := apptest.V2Document()
	if err != nil {
		t.Fatal(err)
	}
	for path, item := range doc.Paths.Map() {
		if "/api/v2"+path == apiv2.OpenAPIPath {
			continue
		}
		typ, ok := replyTypes[path]
		if !ok {
			t.Errorf("%s: the document has the path, the client no reply type for it", path)
			continue
		}
		data := dataSchema(t, path, item.Post)
		if data == nil {
			continue
		}
		compareSchema(t, path, data, reflect.TypeOf(typ))
	}
	for path := range replyTypes {
		if doc.Paths.Value(path) == nil {
			t.Errorf("%s: the client has a reply type for it, the document no such path", path)
		}
	}
}

// dataSchema is the schema of the data member of op's 200 reply.
func dataSchema(t *testing.T, path string, op *openapi3.Operation) *openapi3.Schema {
	t.Helper()
	if op == nil {
		t.Errorf("%s: no POST operation", path)
		return nil
	}
	ok := op.Responses.Status(200)
	if ok == nil {
		t.Errorf("%s: no 200 reply", path)
		return nil
	}
	for _, part := range ok.Value.Content.Get("application/json").Schema.Value.AllOf {
		if d := part.Value.Properties["data"]; part.Ref == "" && d != nil {
			return d.Value
		}
	}
	t.Errorf("%s: the 200 reply does not narrow data", path)
	return nil
}

// countsAsNumber are the members of JSON type number that are counts, not
// amounts of coin, and so may be float64.
var countsAsNumber = map[string]bool{"rate_limit_remaining": true, "per_minute": true, "remaining": true}

// compareSchema reports where Go type typ cannot hold the values schema s
// allows at where, or names members differently.
func compareSchema(t *testing.T, where string, s *openapi3.Schema, typ reflect.Type) {
	t.Helper()
	if typ == reflect.TypeFor[json.RawMessage]() {
		return // any JSON
	}
	// kin-openapi reads a type list's "null" as "" (or "null").
	isNull := func(s string) bool { return s == "null" || s == "" }
	if slices.ContainsFunc(s.Type.Slice(), isNull) {
		if typ.Kind() != reflect.Pointer && typ.Kind() != reflect.Slice && typ.Kind() != reflect.Map {
			t.Errorf("%s: the document allows null, the client's %s cannot hold it", where, typ)
		}
	}
	if typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	types := slices.DeleteFunc(s.Type.Slice(), isNull)
	if len(types) != 1 {
		t.Errorf("%s: schema types %v: this test knows one type besides null", where, s.Type.Slice())
		return
	}
	member := where[strings.LastIndex(where, ".")+1:]
	switch types[0] {
	case "boolean":
		expectKind(t, where, typ, reflect.Bool)
	case "string":
		expectKind(t, where, typ, reflect.String)
		if typ == reflect.TypeFor[json.Number]() {
			t.Errorf("%s: a string in the document, json.Number in the client", where)
		}
	case "integer":
		expectKind(t, where, typ, reflect.Int, reflect.Int64)
	case "number":
		switch {
		case typ == reflect.TypeFor[json.Number]():
		case typ.Kind() == reflect.Float64 && countsAsNumber[member]:
		default:
			t.Errorf("%s: a decimal in the document, %s in the client: want json.Number (exact)", where, typ)
		}
	case "array":
		if expectKind(t, where, typ, reflect.Slice) {
			compareSchema(t, where+"[]", s.Items.Value, typ.Elem())
		}
	case "object":
		if len(s.Properties) == 0 && s.AdditionalProperties.Schema != nil {
			if expectKind(t, where, typ, reflect.Map) {
				compareSchema(t, where+"{}", s.AdditionalProperties.Schema.Value, typ.Elem())
			}
			return
		}
		if !expectKind(t, where, typ, reflect.Struct) {
			return
		}
		fields := jsonFields(typ)
		for name, prop := range s.Properties {
			f, ok := fields[name]
			if !ok {
				t.Errorf("%s: the document's member %q is not in the client's %s", where, name, typ)
				continue
			}
			compareSchema(t, where+"."+name, prop.Value, f)
		}
		for name := range fields {
			if s.Properties[name] == nil {
				t.Errorf("%s: the client's %s has member %q, the document does not", where, typ, name)
			}
		}
	default:
		t.Errorf("%s: schema type %s: this test does not know it", where, types[0])
	}
}

func expectKind(t *testing.T, where string, typ reflect.Type, kinds ...reflect.Kind) bool {
	t.Helper()
	if !slices.Contains(kinds, typ.Kind()) {
		t.Errorf("%s: the client's type %s, want kind %v", where, typ, kinds)
		return false
	}
	return true
}

// jsonFields are the JSON members of struct type typ and their types,
// embedded structs' included, "-" ones left out.
func jsonFields(typ reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range typ.NumField() {
		f := typ.Field(i)
		tag := f.Tag.Get("json")
		if f.Anonymous && tag == "" && f.Type.Kind() == reflect.Struct {
			for name, ft := range jsonFields(f.Type) {
				out[name] = ft
			}
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

// TestImportsNothingInternal: a third party cannot import drip's internal
// packages, so the client's own code must not either (its tests may).
func TestImportsNothingInternal(t *testing.T) {
	t.Parallel()
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(pkg.Imports) == 0 {
		t.Fatal("no imports read: the check would pass whatever the package imports")
	}
	for _, imp := range pkg.Imports {
		if strings.HasPrefix(imp, "github.com/dripfaucet/drip/") {
			t.Errorf("client imports %s: a user of the client could not build it", imp)
		}
	}
}
