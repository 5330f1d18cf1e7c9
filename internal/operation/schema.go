package operation

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/reply"
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
		Description: "amount in the coin's smallest unit: a positive whole number, or a string of its digits (at most 19)",
		AnyOf: []*jsonschema.Schema{
			{Type: "integer", Minimum: new(1.0)},
			{Type: "string", Pattern: amountPattern, MaxLength: new(19)}, // drip.ParseAmount
		},
		Examples: []any{1000, "1000"},
	},
}

// Records whose schema says more than their type: a balance is never
// negative, a faucet's categories are drip.Categories. Each is inferred
// once and refined, and stands for its type wherever a record holds it
// (later entries may hold earlier ones).
func init() {
	for _, r := range []struct {
		t      reflect.Type
		refine func(s *jsonschema.Schema)
	}{
		{reflect.TypeFor[reply.Balance](), func(s *jsonschema.Schema) { s.Properties["balance"].Minimum = new(0.0) }},
		{reflect.TypeFor[reply.Faucet](), func(s *jsonschema.Schema) {
			s.Properties["categories_selected"].Items.Enum = enum(drip.Categories)
		}},
	} {
		s := schemaOf(r.t, false)
		r.refine(s)
		typeSchemas[r.t] = s
	}
}

// schemaFor infers the schema of T. Input schemas take no nulls (an absent
// parameter is the default); output schemas allow null only where a
// record says so, never for a list (lists are written [] when empty).
func schemaFor[T any](input bool) *jsonschema.Schema { return schemaOf(reflect.TypeFor[T](), input) }

func schemaOf(t reflect.Type, input bool) *jsonschema.Schema {
	s, err := jsonschema.ForType(t, &jsonschema.ForOptions{TypeSchemas: typeSchemas})
	if err != nil {
		panic(fmt.Sprintf("operation: schema of %v: %v", t, err))
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
	coinPattern   = `^[A-Za-z0-9]{2,10}$` // a coin symbol, in any case (D28)
	amountPattern = `^0*[1-9][0-9]*$`     // an amount's digits (drip.ParseAmount)
	maxListEntry  = 320                   // an anti-fraud list entry (faucet.SetRules)
	maxIPEntries  = 100                   // faucet.SetIPWhitelist
	maxRuleList   = 1000                  // faucet.SetRules
	maxLimits     = 50                    // faucet.SetLimits
	maxWindowSecs = 366 * 24 * 3600       // a send limit's window (D41)
)

// coinSchema constrains a coin symbol. Its examples are coins every
// installation starts with active, so a client (or a test generating
// requests from the OpenAPI document) that takes one names a real coin.
func coinSchema(s *jsonschema.Schema) {
	s.Pattern = coinPattern
	s.Examples = []any{"BTC", "DOGE", "LTC", "ETH"}
}

// optionalCoinSchema constrains a coin symbol that may be left out: ""
// is read as absent, as null and no member are.
func optionalCoinSchema(s *jsonschema.Schema) {
	coinSchema(s)
	s.Pattern = `^([A-Za-z0-9]{2,10})?$`
}

// spaces are the characters strings.TrimSpace trims (unicode.IsSpace),
// written literally so that a pattern holding them means the same in Go's
// regexp and in ECMA-262, the dialect of JSON Schema patterns.
const spaces = "\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"

// Patterns of free text. No string parameter takes a NUL character (v2
// refuses one anywhere, and PostgreSQL stores none); a name or a list
// entry, which the services trim, must keep a character once trimmed.
const (
	textPattern     = "^[^\x00]*$"
	nonBlankPattern = "^[^\x00]*[^\x00" + spaces + "][^\x00]*$"
)

// textSchema constrains a free-text parameter.
func textSchema(s *jsonschema.Schema) { s.Pattern = textPattern }

// nonBlankSchema constrains a name or list entry of 1 to max characters,
// blank ones refused.
func nonBlankSchema(s *jsonschema.Schema, max int) {
	s.MinLength, s.MaxLength, s.Pattern = new(1), new(max), nonBlankPattern
}

// NonBlank tells whether s passes nonBlankPattern: it holds a character
// strings.TrimSpace keeps, and no NUL.
func NonBlank(s string) bool { return nonBlank.MatchString(s) }

var nonBlank = regexp.MustCompile(nonBlankPattern)

// The forms a service checks with a parser, as patterns: the schema says
// exactly what the parser takes, and the operation checks the pattern too
// before the parser, so the two cannot disagree.
const (
	// hostnamePattern is faucet.isHostname: dot-separated labels of
	// letters, digits and inner hyphens, at least two.
	hostnamePattern = `^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$`
	// urlPattern is an http(s) URL of a host name, an optional port and a
	// path, query and fragment of printable ASCII with well-formed escapes:
	// what url.Parse takes and faucet.validateSite asks for, its host
	// aside, which must be the faucet's domain.
	urlPattern = `^[hH][tT][tT][pP][sS]?://[A-Za-z0-9.-]+(:[0-9]{1,5})?([/?#]([!-$&-~]|%[0-9A-Fa-f]{2})*)?$`
	ipv4       = `(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])(\.(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])){3}`
	h16        = `[0-9A-Fa-f]{1,4}`
	ipv6       = `(` + h16 + `:){7}` + h16 + `|(` + h16 + `:){1,7}:|(` + h16 + `:){1,6}:` + h16 +
		`|(` + h16 + `:){1,5}(:` + h16 + `){1,2}|(` + h16 + `:){1,4}(:` + h16 + `){1,3}|(` + h16 + `:){1,3}(:` + h16 + `){1,4}` +
		`|(` + h16 + `:){1,2}(:` + h16 + `){1,5}|` + h16 + `:(:` + h16 + `){1,6}|:((:` + h16 + `){1,7}|:)` +
		`|::([fF]{4}(:0{1,4})?:)?` + ipv4 + `|(` + h16 + `:){1,4}:` + ipv4 + `|(` + h16 + `:){6}` + ipv4
	// ipPattern is an IP address or CIDR as faucet.ParseIPOrCIDR takes
	// them, without zones or leading zeros.
	ipPattern = `^((` + ipv4 + `)(/(3[0-2]|[12]?[0-9]))?|(` + ipv6 + `)(/(12[0-8]|1[01][0-9]|[1-9]?[0-9]))?)$`
)

var (
	hostnameRE = regexp.MustCompile(hostnamePattern)
	urlRE      = regexp.MustCompile(urlPattern)
	ipRE       = regexp.MustCompile(ipPattern)
)

// enum is a list of strings as a schema's enum.
func enum(list []string) []any {
	out := make([]any, len(list))
	for i, s := range list {
		out[i] = s
	}
	return out
}
