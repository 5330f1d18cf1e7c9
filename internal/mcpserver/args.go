package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/dripfaucet/drip/internal/drip"
)

// Arguments. A call's arguments that break the tool's input schema are a
// tool error (isError) saying which argument and why, so an assistant can
// correct the call; the SDK answers the same for its typed tools.

// decodeArguments checks a call's arguments against the tool's input
// schema and decodes them into dst. No arguments are {}.
func decodeArguments(raw json.RawMessage, schema *jsonschema.Resolved, dst any) error {
	if t := bytes.TrimSpace(raw); len(t) == 0 || string(t) == "null" {
		raw = json.RawMessage(`{}`)
	}
	var args map[string]any
	if err := json.Unmarshal(raw, &args); err != nil {
		return drip.Errorf(drip.CodeInvalid, "Invalid arguments: a JSON object is expected.")
	}
	if hasNUL(args) { // PostgreSQL stores no NUL, and v2 takes none either
		return drip.Errorf(drip.CodeInvalid, "Invalid arguments: strings must not contain NUL characters.")
	}
	if err := schema.Validate(args); err != nil {
		return drip.Errorf(drip.CodeInvalid, "Invalid arguments: %s. The tool's input schema says what it takes.", schemaError(err))
	}
	if err := json.Unmarshal(raw, dst); err != nil { // unreachable once the schema passed
		return drip.Errorf(drip.CodeInvalid, "Invalid arguments: %v.", err)
	}
	return nil
}

// auditArguments is what the audit log keeps of arguments that broke the
// input schema: the fields the schema knows, at every depth, with their
// values; the fields it does not know are dropped whole, for the owner's
// read keys read the log, and a client may put anything in a field no tool
// takes (a key, say). Arguments that are no JSON object are {}. Arguments
// that passed are kept as the tool decoded them instead.
func auditArguments(raw json.RawMessage, schema *jsonschema.Schema) any {
	var args map[string]any
	if json.Unmarshal(raw, &args) != nil || args == nil {
		return struct{}{}
	}
	return known(args, schema)
}

// known is v without the object fields schema does not describe.
func known(v any, schema *jsonschema.Schema) any {
	if schema == nil {
		return v
	}
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range v {
			if p, ok := schema.Properties[k]; ok {
				out[k] = known(e, p)
			} else if ap := schema.AdditionalProperties; ap != nil && ap.Not == nil { // a map's keys; {"not": {}} is false
				out[k] = known(e, ap)
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = known(e, schema.Items)
		}
		return out
	}
	return v
}

func hasNUL(v any) bool {
	switch v := v.(type) {
	case string:
		return strings.ContainsRune(v, 0)
	case []any:
		for _, e := range v {
			if hasNUL(e) {
				return true
			}
		}
	case map[string]any:
		for k, e := range v {
			if strings.ContainsRune(k, 0) || hasNUL(e) {
				return true
			}
		}
	}
	return false
}

// schemaPath finds the schema locations of a jsonschema-go validation
// error: "validating /properties/count: maximum: ...".
var schemaPath = regexp.MustCompile(`validating (/[^:]*): `)

// missingProperty finds what a required keyword misses.
var missingProperty = regexp.MustCompile(`required: missing properties: (\[[^\]]*\])`)

// schemaError says in words what a jsonschema-go validation error says in
// keywords: "count must be at most 100" for
// "validating root: validating /properties/count: maximum: 500/1 is greater than 100.000000".
func schemaError(err error) string {
	msg := err.Error()
	if head, branches, ok := strings.Cut(msg, "anyOf: did not validate against any of"); ok {
		// Each branch of an anyOf of required sets names what it misses:
		// the value needs one of them.
		var need []string
		for _, m := range missingProperty.FindAllStringSubmatch(branches, -1) {
			need = append(need, list(m[1]))
		}
		if all := schemaPath.FindAllStringSubmatch(head, -1); len(all) > 0 && len(need) > 0 {
			return fmt.Sprintf("each of %s needs %s", fieldName(all[len(all)-1][1]), strings.Join(need, " or "))
		}
	}
	field := ""
	if all := schemaPath.FindAllStringSubmatchIndex(msg, -1); len(all) > 0 {
		last := all[len(all)-1]
		field, msg = fieldName(msg[last[2]:last[3]]), msg[last[1]:]
	} else {
		msg = strings.TrimPrefix(msg, "validating root: ")
	}
	subject := field
	if subject == "" {
		subject = "the arguments"
	}
	if names, ok := strings.CutPrefix(msg, "unexpected additional properties "); ok {
		if field == "" {
			return "unknown argument " + list(names)
		}
		return fmt.Sprintf("unknown field %s in %s", list(names), field)
	}
	keyword, detail, _ := strings.Cut(msg, ": ")
	bound := func() string { // the number after the last "than "
		i := strings.LastIndex(detail, "than ")
		if i < 0 {
			return "?"
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(detail[i+5:]), 64)
		if err != nil {
			return strings.TrimSpace(detail[i+5:])
		}
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	switch keyword {
	case "type":
		_, want, _ := strings.Cut(detail, "want ")
		want = strings.TrimPrefix(strings.Trim(strings.TrimPrefix(want, "one of "), `"`), "null, ")
		return fmt.Sprintf("%s must be %s", subject, typeWords[want])
	case "minimum":
		return fmt.Sprintf("%s must be at least %s", subject, bound())
	case "maximum":
		return fmt.Sprintf("%s must be at most %s", subject, bound())
	case "minLength":
		if b := bound(); b != "1" {
			return fmt.Sprintf("%s must be at least %s characters", subject, b)
		}
		return fmt.Sprintf("%s must not be empty", subject)
	case "maxLength":
		return fmt.Sprintf("%s must be at most %s characters", subject, bound())
	case "pattern":
		return fmt.Sprintf("%s is not in the form the schema gives (pattern %s)", subject, detail[strings.LastIndex(detail, "regular expression ")+len("regular expression "):])
	case "maxItems":
		return fmt.Sprintf("%s takes at most %s entries", subject, bound())
	case "enum":
		_, values, _ := strings.Cut(detail, "any of: ")
		return fmt.Sprintf("%s must be one of %s", subject, strings.Join(strings.Fields(strings.Trim(values, "[]")), ", "))
	case "required":
		names := list(strings.TrimPrefix(detail, "missing properties: "))
		if field == "" {
			return "missing " + names
		}
		return fmt.Sprintf("each of %s needs %s", field, names)
	}
	if field != "" {
		return field + ": " + msg
	}
	return msg
}

var typeWords = map[string]string{
	"integer": "a whole number", "number": "a number", "string": "a string", "boolean": "true or false",
	"array": "a list", "object": "an object",
}

// fieldName turns a schema location into the argument it constrains:
// /properties/ratelimits/items/properties/per is ratelimits[].per.
func fieldName(path string) string {
	var b strings.Builder
	for _, seg := range strings.Split(strings.Trim(path, "/"), "/") {
		switch seg {
		case "properties", "":
		case "items":
			b.WriteString("[]")
		case "additionalProperties":
			b.WriteString(".<key>")
		default:
			if b.Len() > 0 {
				b.WriteString(".")
			}
			b.WriteString(seg)
		}
	}
	return b.String()
}

// list writes a JSON list of names (["coin","page"]) as words: coin, page.
func list(names string) string {
	var out []string
	if json.Unmarshal([]byte(names), &out) != nil {
		return names
	}
	return strings.Join(out, ", ")
}
