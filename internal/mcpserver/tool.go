package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"runtime/debug"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/payout"
)

// tool is one tool: what tools/list shows of it, and its handler.
type tool struct {
	def     *mcp.Tool
	manage  bool // needs the manage scope; recorded in the audit log
	handler mcp.ToolHandler
}

// spec describes a tool whose arguments decode into In and whose result
// (structuredContent) is Out. Both schemas are inferred from the types; the
// jsonschema tags of their fields are the descriptions an assistant reads.
type spec[In, Out any] struct {
	name        string
	title       string
	description string
	manage      bool
	annotations *mcp.ToolAnnotations
	// refine adds what types cannot say to the input schema: ranges, enums.
	refine func(in *jsonschema.Schema)
	// run does the call; message says what a manage call did.
	run func(ctx context.Context, c *payout.Caller, in In) (out Out, message string, err error)
}

// warned is a result that may carry a warning (warning.go).
type warned interface{ warningText() string }

// newTool builds a tool from its spec. The handler is the SDK's low-level
// one: the typed mcp.AddTool re-encodes every result through float64, which
// would write 1 satoshi's balance_bitcoin as 1e-8; here structuredContent is
// the result's own JSON, amounts exact as v2 writes them (D1).
func newTool[In, Out any](h *Handler, s spec[In, Out]) tool {
	in, out := schemaFor[In](true), schemaFor[Out](false)
	if in.Properties == nil {
		in.Properties = map[string]*jsonschema.Schema{} // "no arguments", said explicitly
	}
	if s.refine != nil {
		s.refine(in)
	}
	inSchema, outSchema := resolve(s.name, in), resolve(s.name, out)
	// run calls the tool: its result, what the audit log keeps of what it
	// did (summary) and of its arguments (args: see auditArguments).
	run := func(ctx context.Context, c *payout.Caller, raw json.RawMessage) (res *mcp.CallToolResult, summary string, args any) {
		args = struct{}{}
		defer func() {
			// The SDK calls a handler on a goroutine of its own, without
			// recover: a panic would end the process.
			if p := recover(); p != nil {
				res, summary = h.failure(ctx, s.name, fmt.Errorf("panic: %v\n%s", p, debug.Stack()))
			}
		}()
		if s.manage && !c.Key.Has(drip.ScopeManage) { // a second lock: such keys are not served this tool
			res, summary = h.failure(ctx, s.name, drip.Errorf(drip.CodeInsufficientScope, "This key lacks the manage scope %s needs.", s.name))
			return res, summary, args
		}
		var input In
		if err := decodeArguments(raw, inSchema, &input); err != nil {
			res, summary = h.failure(ctx, s.name, err)
			return res, summary, auditArguments(raw, in)
		}
		args = input
		data, message, err := s.run(ctx, c, input)
		if err != nil {
			res, summary = h.failure(ctx, s.name, err)
			return res, summary, args
		}
		b, err := json.Marshal(data)
		if err == nil {
			err = validate(b, outSchema)
		}
		if err != nil {
			res, summary = h.failure(ctx, s.name, fmt.Errorf("result of %s: %w", s.name, err))
			return res, summary, args
		}
		// The JSON is also text content, for clients that read no
		// structuredContent; a warning comes first, where it is seen.
		var content []mcp.Content
		summary = message
		if w, ok := any(data).(warned); ok && w.warningText() != "" {
			content = append(content, &mcp.TextContent{Text: "Warning: " + w.warningText()})
			summary += " Warning: " + w.warningText()
		}
		if !s.annotations.ReadOnlyHint && message != "" { // what a change did
			content = append(content, &mcp.TextContent{Text: message})
		}
		content = append(content, &mcp.TextContent{Text: string(b)})
		return &mcp.CallToolResult{Content: content, StructuredContent: json.RawMessage(b)}, summary, args
	}
	return tool{
		manage: s.manage,
		def: &mcp.Tool{Name: s.name, Title: s.title, Description: s.description,
			InputSchema: in, OutputSchema: out, Annotations: s.annotations},
		handler: func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			c := callerFrom(ctx)
			if c == nil {
				return nil, fmt.Errorf("mcpserver: %s called without an authorized caller", s.name)
			}
			res, summary, args := run(ctx, c, req.Params.Arguments)
			if s.manage {
				h.record(ctx, c, s.name, args, summary, res.IsError)
			}
			return res, nil
		},
	}
}

// failure is a tool result an assistant can act on: isError, and the
// error's message (D25), or "Internal error." for an error without a code.
// Faults are logged (a panic's stack with it: never in the result); an
// outage is a tool error that says to retry (D58).
func (h *Handler) failure(ctx context.Context, tool string, err error) (*mcp.CallToolResult, string) {
	if code := drip.ErrorCode(err); code.Fault() {
		h.Log.ErrorContext(ctx, "tool call failed", "tool", tool, "code", code, "err", err)
	}
	msg := drip.ErrorMessage(err)
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}, msg
}

// record writes a manage call to the audit log. The write outlives a client
// that hangs up: the change it records was made.
func (h *Handler) record(ctx context.Context, c *payout.Caller, tool string, args any, result string, isError bool) {
	if err := h.Audit.Record(context.WithoutCancel(ctx), c.Faucet.ID, c.Key.ID, tool, args, result, isError); err != nil {
		h.Log.ErrorContext(ctx, "recording a manage call failed", "tool", tool, "faucet", c.Faucet.ID, "err", err)
	}
}

// validate checks a result against its output schema: a result that breaks
// the schema the tool publishes is the server's bug, not the client's.
func validate(b []byte, schema *jsonschema.Resolved) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	return schema.Validate(v)
}

// typeSchemas are the schemas of types that marshal unlike their kind:
// json.Number is written as a JSON number (D1).
var typeSchemas = map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[json.Number](): {Type: "number"},
}

// schemaFor infers the schema of T. Input schemas take no nulls (an absent
// argument is the default); output schemas allow null only where a record
// says so, never for a list (lists are written [] when empty).
func schemaFor[T any](input bool) *jsonschema.Schema {
	s, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: typeSchemas})
	if err != nil {
		panic(fmt.Sprintf("mcpserver: schema of %T: %v", *new(T), err))
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

func resolve(tool string, s *jsonschema.Schema) *jsonschema.Resolved {
	r, err := s.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
	if err != nil {
		panic(fmt.Sprintf("mcpserver: schema of %s: %v", tool, err))
	}
	return r
}

// readAnnotations are a read tool's hints. Every tool works on the key's
// faucet and nothing beyond it: openWorldHint is false on all of them.
func readAnnotations(title string) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: true, OpenWorldHint: new(false)}
}

// manageAnnotations are a manage tool's hints, each set explicitly:
// destructive when it replaces or switches off what was there, idempotent
// when calling it again with the same arguments changes nothing more.
func manageAnnotations(title string, readOnly, destructive, idempotent bool) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: readOnly, DestructiveHint: new(destructive),
		IdempotentHint: idempotent, OpenWorldHint: new(false)}
}
