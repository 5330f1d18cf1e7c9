package operation

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
)

// Schemas are inferred from the Params and Record types with jsonschema-go:
// a field's json tag names it, its jsonschema tag describes it (the tag's
// whole text: it must not begin with "WORD="), a field without omitempty
// is required, and refine adds what a type cannot say.

// typeSchemas are the schemas of types that marshal unlike their kind:
// json.Number is written as a JSON number (D1); json.RawMessage is a
// tool's arguments; an Amount is a whole
// number or a string of one (D22, D27).
var typeSchemas = map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[json.Number](): {Type: "number"},
	// an audit entry's arguments: any JSON object a tool took
	reflect.TypeFor[json.RawMessage](): {Type: "object"},
	reflect.TypeFor[Amount](): {
		Description: "amount in the coin's smallest unit: a positive whole number, or a string of its digits",
		AnyOf: []*jsonschema.Schema{
			{Type: "integer", Minimum: new(1.0)},
			{Type: "string", Pattern: `^[0-9]+$`},
		},
	},
}

// schemaFor infers the schema of T. Input schemas take no nulls (an absent
// parameter is the default); output schemas allow null only where a
// record says so, never for a list (lists are written [] when empty).
func schemaFor[T any](input bool) *jsonschema.Schema {
	s, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: typeSchemas})
	if err != nil {
		panic(fmt.Sprintf("operation: schema of %T: %v", *new(T), err))
	}
	tidy(s, input)
	return s
}

func tidy(s *jsonschema.Schema, input bool) {
	if s == nil {
		return
	}
	if len(s.Types) == 2 && s.Types[0] == "null" && (input || s.Types[1] == "array") {
		s.Type, s.Types = s.Types[1], nil
	}
	for _, p := range s.Properties {
		tidy(p, input)
	}
	tidy(s.Items, input)
	tidy(s.AdditionalProperties, input)
}

// Resolve resolves a schema for validation; a schema that does not
// resolve is a bug of this package's types.
func Resolve(name string, s *jsonschema.Schema) *jsonschema.Resolved {
	r, err := s.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
	if err != nil {
		panic(fmt.Sprintf("operation: schema of %s: %v", name, err))
	}
	return r
}

// Patterns and bounds the Params share with the services that enforce
// them (faucet, payout); refine writes them into the schemas.
const (
	coinPattern   = `^[A-Z0-9]{2,10}$` // an upper-case coin symbol
	maxListEntry  = 320                // an anti-fraud list entry (faucet.SetRules)
	maxIPEntries  = 100                // faucet.SetIPWhitelist
	maxRuleList   = 1000               // faucet.SetRules
	maxLimits     = 50                 // faucet.SetLimits
	maxWindowSecs = 366 * 24 * 3600    // a send limit's window (D41)
)

// coinSchema constrains a coin symbol.
func coinSchema(s *jsonschema.Schema) { s.Pattern = coinPattern }

// enum is a list of strings as a schema's enum.
func enum(list []string) []any {
	out := make([]any, len(list))
	for i, s := range list {
		out[i] = s
	}
	return out
}
