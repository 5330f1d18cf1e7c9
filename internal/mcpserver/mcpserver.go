// Package mcpserver serves the tool server for AI assistants (spec 4.3):
// a remote Model Context Protocol server over streamable HTTP, stateless,
// answering in JSON. Its tools run the operations v2 runs, so it keeps no
// state and no SQL of its own; none of them can send
// funds, withdraw, mint keys or register webhooks, whatever the key's
// scopes.
//
// A request carries a v2 key in "Authorization: Bearer <key>". The key is
// authorized once per HTTP request, as v2 authorizes it (its expiry,
// revocation and IP whitelist, the faucet's IP whitelist, the owner's
// suspension and the key's request rate, D14, D40); the caller then travels
// in the request's context to the tools. An HTTP request carries one
// JSON-RPC message: JSON-RPC batches, which the SDK would run call by call
// under the one authorization, are refused, so each tool call takes one
// request from the key's rate, as a v2 call does. A key with the manage
// scope is served every tool; a key with only read is served a server
// without the manage tools, so it neither sees nor can call them.
//
// Every refusal of the HTTP layer is a JSON-RPC error body, which clients
// show: drip's own (method, origin, key, batch), and what the SDK refuses
// in plain text (a body that is no JSON, or no JSON-RPC 2.0 request, an
// unknown method, a body over 256 KiB, a Content-Type that is not JSON),
// each keeping its HTTP status.
package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dripfaucet/drip/internal/audit"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/key"
	"github.com/dripfaucet/drip/internal/operation"
	"github.com/dripfaucet/drip/internal/payout"
	"github.com/dripfaucet/drip/internal/requestlog"
	"github.com/dripfaucet/drip/internal/version"
)

// Path is where the tool server is mounted ({mcp_url} is this path on the
// service's address, or on --mcp-listen's).
const Path = "/mcp"

// maxBody bounds a request body, as v2 bounds its own.
const maxBody = 256 << 10

// protocolVersions are the MCP protocol versions served, newest first. The
// SDK also knows 2024-11-05, which is left out: it predates the streamable
// HTTP transport.
var protocolVersions = []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"}

// ProtocolVersions are the MCP protocol versions served, newest first.
func ProtocolVersions() []string { return slices.Clone(protocolVersions) }

// Deps are what the tool server is built on.
type Deps struct {
	Ops     *operation.Service // the operations the tools run
	Payouts *payout.Service    // authorizes keys
	Audit   *audit.Service     // records every manage call
	Log     *slog.Logger
	// ClientIP tells the caller's address (server.ClientIP). Required.
	ClientIP func(*http.Request) netip.Addr
	// AllowedOrigins are the browser origins ("https://app.example.com")
	// that may call besides the service's own. A request with any other
	// Origin header is refused: it comes from a web page the owner did not
	// choose.
	AllowedOrigins []string
}

// Handler serves the tool server.
type Handler struct {
	Deps
	// servers serve each set of scopes a key may hold of read and manage
	// its tools: a tool is listed and callable only for a key with its
	// scope (D16), as its v2 path is.
	servers map[scopes]*mcp.Server
	mcp     http.Handler
	origins map[string]bool
}

// scopes are which of the tool server's two scopes a key holds.
type scopes struct{ read, manage bool }

// New returns the tool server's handler; mount it at Path.
func New(d Deps) *Handler { return newHandler(d, nil) }

// newHandler is New serving, besides every tool, those extra builds (a
// seam for tests; see export_test.go).
func newHandler(d Deps, extra func(*Handler) []tool) *Handler {
	if d.ClientIP == nil {
		panic("mcpserver: Deps.ClientIP is required")
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	h := &Handler{Deps: d, origins: map[string]bool{}, servers: map[scopes]*mcp.Server{}}
	for _, o := range d.AllowedOrigins {
		h.origins[normalOrigin(o)] = true
	}
	var tools []tool
	for _, r := range table(d.Ops) {
		tools = append(tools, newTool(h, r))
	}
	if extra != nil {
		tools = append(tools, extra(h)...)
	}
	for _, set := range []scopes{{read: true}, {manage: true}, {read: true, manage: true}} {
		srv, unlisted := h.newServer(), map[string]drip.Scope{}
		for _, t := range tools {
			if set.has(t.scope) {
				srv.AddTool(t.def, t.handler)
			} else {
				unlisted[t.def.Name] = t.scope
			}
		}
		srv.AddReceivingMiddleware(unlistedTools(unlisted))
		h.servers[set] = srv
	}
	h.mcp = mcp.NewStreamableHTTPHandler(h.server, &mcp.StreamableHTTPOptions{
		Stateless:    true,
		JSONResponse: true,
		// The SDK refuses loopback requests whose Host is not loopback,
		// against DNS rebinding. drip behind a reverse proxy on the same
		// host gets exactly such requests; a rebinding page has no key,
		// and Origin is checked here.
		DisableLocalhostProtection: true,
		MaxRequestBodyBytes:        maxBody,
	})
	return h
}

func (h *Handler) newServer() *mcp.Server {
	return mcp.NewServer(&mcp.Implementation{Name: "drip", Title: "drip faucet", Version: version.String()}, &mcp.ServerOptions{
		Instructions: instructions,
		// Tools only, and their list never changes while a key is in use.
		Capabilities:              &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
		SupportedProtocolVersions: ProtocolVersions(),
		// tools/list differs by key (a read key is not shown the manage
		// tools): only the key holder's client may cache it, no shared
		// cache. The other cacheable results, server/discover among them,
		// are the same for every key.
		SetCacheable: func(_ context.Context, req mcp.Request, c *mcp.Cacheable) {
			if _, ok := req.(*mcp.ListToolsRequest); ok {
				c.CacheScope = "private"
			}
		},
	})
}

const instructions = `Tools to read and manage one faucet of drip, a faucet payout service. ` +
	`The faucet is the one the key belongs to. Amounts are whole numbers in the coin's smallest unit ` +
	`(1 coin = 100000000); fields ending in _bitcoin give the same amount in whole coins. ` +
	`No tool can send payouts, withdraw funds, create keys or register webhooks. ` +
	`Manage tools change the faucet at once and are recorded in the owner's audit log; ` +
	`a result with a "warning" weakened a protection: tell the owner what it says.`

func (s scopes) has(scope drip.Scope) bool {
	return scope == drip.ScopeRead && s.read || scope == drip.ScopeManage && s.manage
}

// unlistedTools answers a call of a tool the key's server does not list
// (unlisted: each such tool's scope) as the SDK answers any unknown tool,
// a JSON-RPC error (the key is not offered the tool), saying why the tool
// is unknown to this key.
func unlistedTools(unlisted map[string]drip.Scope) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && method == "tools/call" {
				if scope, ok := unlisted[p.Name]; ok {
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
						Message: fmt.Sprintf("unknown tool %q: it is a %s tool, and this key lacks the %s scope", p.Name, scope, scope)}
				}
			}
			return next(ctx, method, req)
		}
	}
}

// server picks the MCP server for an authorized request by its key's
// scopes. The SDK may call it more than once per request.
func (h *Handler) server(r *http.Request) *mcp.Server {
	c := callerFrom(r.Context())
	if c == nil {
		return nil // unreachable: ServeHTTP authorizes first
	}
	return h.servers[scopes{read: c.Key.Has(drip.ScopeRead), manage: c.Key.Has(drip.ScopeManage)}]
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		// Stateless: no SSE stream to GET, no session to DELETE.
		w.Header().Set("Allow", "POST")
		h.refuse(w, r, nil, drip.Errorf(drip.CodeMethodNotAllowed, "Method %s not allowed here: the tool server takes POST.", r.Method))
		return
	}
	body := peekBody(r)
	if !h.originAllowed(r) {
		h.refuse(w, r, body, drip.Errorf(drip.CodeForbidden, "Requests from this web page's origin are not allowed."))
		return
	}
	c, err := h.authorize(r)
	if err != nil {
		h.refuse(w, r, body, err)
		return
	}
	if t := bytes.TrimLeft(body, " \t\r\n"); len(t) > 0 && t[0] == '[' {
		// The SDK runs each call of a batch (under 2025-03-26, or with no
		// version header), all under this one authorization.
		writeRPCError(w, http.StatusBadRequest, nil, jsonrpc.CodeInvalidRequest,
			"Batches are not accepted: send one JSON-RPC request per HTTP request.", nil)
		return
	}
	pw := &plainErrors{ResponseWriter: w}
	h.mcp.ServeHTTP(pw, r.WithContext(withCaller(r.Context(), c)))
	if pw.status != 0 {
		if pw.status >= http.StatusInternalServerError {
			h.Log.ErrorContext(r.Context(), "tool server request failed", "status", pw.status, "err", strings.TrimSpace(pw.text.String()))
		}
		id, code, message := protocolError(pw.status, body, pw.text.String())
		writeRPCError(w, pw.status, id, code, message, nil)
	}
}

// peekBody reads r's body, up to maxBody bytes and one more, and puts it
// back for the SDK, which still sees the rest of a longer one (and refuses
// it with 413, which ServeHTTP answers as JSON-RPC).
func peekBody(r *http.Request) []byte {
	body, _ := io.ReadAll(io.LimitReader(r.Body, maxBody+1)) // what a failed read missed, the SDK's read misses too
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
	return body
}

// plainErrors holds back a refusal the SDK answers in plain text (its
// http.Error: any status from 400 up without a JSON Content-Type), for
// ServeHTTP to answer as JSON-RPC with the same status; every other
// answer, the SDK's JSON-RPC errors included, passes through.
type plainErrors struct {
	http.ResponseWriter
	status int          // the refusal's HTTP status; 0 when none
	text   bytes.Buffer // what the SDK said
}

func (p *plainErrors) WriteHeader(status int) {
	if status >= http.StatusBadRequest && !strings.HasPrefix(p.Header().Get("Content-Type"), "application/json") {
		p.status = status
		return
	}
	p.ResponseWriter.WriteHeader(status)
}

func (p *plainErrors) Write(b []byte) (int, error) {
	if p.status != 0 {
		return p.text.Write(b)
	}
	return p.ResponseWriter.Write(b)
}

func (p *plainErrors) Flush() {
	if f, ok := p.ResponseWriter.(http.Flusher); ok && p.status == 0 {
		f.Flush()
	}
}

func (p *plainErrors) Unwrap() http.ResponseWriter { return p.ResponseWriter }

// protocolError is the JSON-RPC error answering a request the SDK refused
// in plain text (refusal) with status. A body over maxBody (413) is an
// invalid request to id null, as the id of a body not read whole cannot be
// told; an error of the SDK's own (5xx) is an internal error, its text
// logged, not shown; any other refusal but a 400 (415 for a Content-Type
// that is not JSON) is an invalid request saying what the SDK said. Of a
// 400: a parse error for a body that is no JSON, an invalid request for
// JSON that is no JSON-RPC 2.0 request (both to id null), and for a
// request the SDK found wanting, method not found (as the SDK answers it
// under 2026-07-28) or invalid request, saying what the SDK said, to the
// request's id.
func protocolError(status int, body []byte, refusal string) (id json.RawMessage, code int, message string) {
	detail := strings.TrimSpace(refusal)
	for _, prefix := range []string{"Bad Request: ", "invalid request: "} {
		detail = strings.TrimPrefix(detail, prefix)
	}
	invalid := "Invalid request: " + strings.TrimSuffix(detail, ".") + "."
	switch {
	case status == http.StatusRequestEntityTooLarge:
		return nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("Request body too large: the limit is %d KiB.", maxBody>>10)
	case status >= http.StatusInternalServerError:
		return requestID(body), jsonrpc.CodeInternalError, "Internal error."
	case status != http.StatusBadRequest:
		return requestID(body), jsonrpc.CodeInvalidRequest, invalid
	}
	var msg struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
	}
	if !json.Valid(body) {
		return nil, jsonrpc.CodeParseError, "Parse error: the body is not JSON."
	}
	if json.Unmarshal(body, &msg) != nil || msg.JSONRPC != "2.0" || (len(msg.ID) > 0 && string(msg.ID) != "null" && rpcID(msg.ID) == nil) {
		return nil, jsonrpc.CodeInvalidRequest,
			`Invalid request: the body must be one JSON-RPC 2.0 request object, with "jsonrpc": "2.0" and a string or number id.`
	}
	if strings.Contains(detail, "not handled") { // the SDK's jsonrpc2.ErrNotHandled: no such method
		return rpcID(msg.ID), jsonrpc.CodeMethodNotFound, fmt.Sprintf("Method not found: %q.", msg.Method)
	}
	return rpcID(msg.ID), jsonrpc.CodeInvalidRequest, invalid
}

// authorize authorizes the request's key for the tool server: scope read or
// manage, in one lookup and one token of the key's request rate.
func (h *Handler) authorize(r *http.Request) (*payout.Caller, error) {
	secret := key.Bearer(r)
	requestlog.SetKey(r.Context(), secret)
	c, err := h.Payouts.AuthorizeV2(r.Context(), secret, h.ClientIP(r), drip.ScopeRead, drip.ScopeManage)
	if drip.ErrorCode(err) == drip.CodeInsufficientScope {
		return nil, drip.Errorf(drip.CodeInsufficientScope, "This key has neither the read nor the manage scope the tool server needs.")
	}
	return c, err
}

// originAllowed admits requests without an Origin header (assistants call
// from their servers), from the service's own origin, and from
// AllowedOrigins.
func (h *Handler) originAllowed(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	if h.origins[normalOrigin(origin)] {
		return true
	}
	u, err := url.Parse(origin)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && strings.EqualFold(u.Host, r.Host)
}

func normalOrigin(s string) string {
	return strings.ToLower(strings.TrimSuffix(strings.TrimSpace(s), "/"))
}

// httpStatus is the one table of the HTTP statuses the tool server refuses
// a request with, before any tool runs. Refusals inside a tool are tool
// results instead (see tool.go). A code not in it is 500, logged.
var httpStatus = map[drip.Code]int{
	drip.CodeUnauthenticated:   http.StatusUnauthorized,
	drip.CodeForbidden:         http.StatusForbidden,
	drip.CodeInsufficientScope: http.StatusForbidden,
	drip.CodeRateLimited:       http.StatusTooManyRequests,
	drip.CodeMethodNotAllowed:  http.StatusMethodNotAllowed,
	drip.CodeUnavailable:       http.StatusServiceUnavailable, // D58: retry after Retry-After
	drip.CodeOutcomeUnknown:    http.StatusServiceUnavailable,
}

// rpcError is the body of a request refused before any tool ran: a
// JSON-RPC error response to the request, so that MCP clients show its
// message. A refusal of the key or caller carries drip's error code in
// data.
type rpcError struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"` // null when the request has none that can be read
	Error   struct {
		Code    int        `json:"code"`
		Message string     `json:"message"`
		Data    *errorData `json:"data,omitempty"`
	} `json:"error"`
}

type errorData struct {
	Code drip.Code `json:"code"`
}

// serverError is the JSON-RPC code of an error the server defines.
const serverError = -32000

func writeRPCError(w http.ResponseWriter, status int, id json.RawMessage, code int, message string, data *errorData) {
	body := rpcError{JSONRPC: "2.0", ID: id}
	body.Error.Code, body.Error.Message, body.Error.Data = code, message, data
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // "Bearer <key>" as written
	_ = enc.Encode(body)
}

// refuse answers a request refused before any tool ran; body is the
// request's body, whose id the answer carries.
func (h *Handler) refuse(w http.ResponseWriter, r *http.Request, body []byte, err error) {
	code := drip.ErrorCode(err)
	status, ok := httpStatus[code]
	if !ok {
		status, code = http.StatusInternalServerError, drip.CodeInternal
	}
	if code.Fault() {
		h.Log.ErrorContext(r.Context(), "tool server request failed", "code", code, "err", err)
	}
	switch code {
	case drip.CodeUnauthenticated: // RFC 6750 section 3
		challenge := `Bearer realm="drip"`
		if key.Bearer(r) != "" {
			challenge += `, error="invalid_token"`
		}
		w.Header().Set("WWW-Authenticate", challenge)
	case drip.CodeInsufficientScope:
		w.Header().Set("WWW-Authenticate", `Bearer realm="drip", error="insufficient_scope", scope="read manage"`)
	case drip.CodeRateLimited, drip.CodeUnavailable, drip.CodeOutcomeUnknown:
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter(err)))
	}
	writeRPCError(w, status, requestID(body), serverError, drip.ErrorMessage(err), &errorData{Code: code})
}

// requestID is the id of the JSON-RPC request body is, or nil (null) when
// it is no single request with one. A client matches a response to its
// request by id: one with a null id is dropped unread.
func requestID(body []byte) json.RawMessage {
	var msg struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(body, &msg) != nil {
		return nil
	}
	return rpcID(msg.ID)
}

// rpcID is id if it is a JSON-RPC id (a string or a number), else nil.
func rpcID(id json.RawMessage) json.RawMessage {
	if len(id) == 0 {
		return nil
	}
	if c := id[0]; c != '"' && c != '-' && (c < '0' || c > '9') {
		return nil
	}
	return id
}

// retryAfter is the Retry-After of a 429, in whole seconds.
func retryAfter(err error) int {
	var e *drip.Error
	if errors.As(err, &e) && e.RetryAfter > 0 {
		return int(e.RetryAfter.Seconds()) + 1
	}
	return 60
}

type callerKey struct{}

// withCaller returns ctx carrying the authorized caller of the request.
func withCaller(ctx context.Context, c *payout.Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// callerFrom is the authorized caller ctx carries, or nil.
func callerFrom(ctx context.Context) *payout.Caller {
	c, _ := ctx.Value(callerKey{}).(*payout.Caller)
	return c
}
