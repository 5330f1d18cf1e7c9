package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/operation"
	"github.com/dripfaucet/drip/internal/payout"
)

// tool is one tool: what tools/list shows of it, the scope it needs, and
// its handler.
type tool struct {
	def     *mcp.Tool
	scope   drip.Scope
	handler mcp.ToolHandler
}

// warned is a record that may carry a warning (operation/warning.go).
type warned interface{ Warned() string }

// newTool builds the tool of a table row. The handler is the SDK's
// low-level one: the typed mcp.AddTool re-encodes every result through
// float64, which would write 1 satoshi's balance_bitcoin as 1e-8; here
// structuredContent is the record's own JSON, amounts exact as v2 writes
// them (D1).
func newTool(h *Handler, r row) tool {
	in, out := r.op.InputSchema(), r.op.OutputSchema()
	inSchema, outSchema := operation.Resolve(r.name, in), operation.Resolve(r.name, out)
	scope := r.op.Scope()
	readOnly := r.annotations.ReadOnlyHint
	// run calls the tool: its result, what the audit log keeps of what it
	// did (summary) and of its arguments (args: see auditArguments).
	run := func(ctx context.Context, c *payout.Caller, raw json.RawMessage) (res *mcp.CallToolResult, summary string, args any) {
		args = struct{}{}
		defer func() {
			// The SDK calls a handler on a goroutine of its own, without
			// recover: a panic would end the process.
			if p := recover(); p != nil {
				res, summary = h.failure(ctx, r.name, fmt.Errorf("panic: %v\n%s", p, debug.Stack()))
			}
		}()
		if !c.Key.Has(scope) { // a second lock: such keys are not served this tool
			res, summary = h.failure(ctx, r.name, drip.Errorf(drip.CodeInsufficientScope, "This key lacks the %s scope %s needs.", scope, r.name))
			return res, summary, args
		}
		decode := func(params any) error {
			if err := decodeArguments(raw, inSchema, params); err != nil {
				args = auditArguments(raw, in)
				return err
			}
			args = params
			return nil
		}
		data, message, err := r.op.Call(ctx, c, decode)
		if err != nil {
			res, summary = h.failure(ctx, r.name, err)
			return res, summary, args
		}
		b, err := json.Marshal(data)
		if err == nil {
			err = validate(b, outSchema)
		}
		if err != nil {
			res, summary = h.failure(ctx, r.name, fmt.Errorf("result of %s: %w", r.name, err))
			return res, summary, args
		}
		// The JSON is also text content, for clients that read no
		// structuredContent; a warning comes first, where it is seen.
		var content []mcp.Content
		summary = message
		if w, ok := data.(warned); ok && w.Warned() != "" {
			content = append(content, &mcp.TextContent{Text: "Warning: " + w.Warned()})
			summary += " Warning: " + w.Warned()
		}
		if !readOnly && message != "" { // what a change did
			content = append(content, &mcp.TextContent{Text: message})
		}
		content = append(content, &mcp.TextContent{Text: string(b)})
		return &mcp.CallToolResult{Content: content, StructuredContent: json.RawMessage(b)}, summary, args
	}
	return tool{
		scope: scope,
		def: &mcp.Tool{Name: r.name, Title: r.title, Description: r.description,
			InputSchema: in, OutputSchema: out, Annotations: r.annotations},
		handler: func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			c := callerFrom(ctx)
			if c == nil {
				return nil, fmt.Errorf("mcpserver: %s called without an authorized caller", r.name)
			}
			res, summary, args := run(ctx, c, req.Params.Arguments)
			if scope == drip.ScopeManage { // every manage call is recorded
				h.record(ctx, c, r.name, args, summary, res.IsError)
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
