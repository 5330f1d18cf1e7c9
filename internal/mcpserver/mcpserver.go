// Package mcpserver serves the tool server for AI assistants (spec 4.3,
// issue 4): a remote Model Context Protocol server over streamable HTTP,
// stateless, answering in JSON. Its tools are thin calls to the services v2
// uses, so it keeps no state and no SQL of its own; none of them can send
// funds, withdraw, mint keys or register webhooks, whatever the key's
// scopes.
//
// A request carries a v2 key in "Authorization: Bearer <key>". The key is
// authorized once per HTTP request, as v2 authorizes it (its expiry,
// revocation and IP whitelist, the faucet's IP whitelist, the owner's
// suspension and the key's request rate, D14, D40); the caller then travels
// in the request's context to the tools. A key with the manage scope is
// served every tool; a key with only read is served a server without the
// manage tools, so it neither sees nor can call them.
package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dripfaucet/drip/internal/audit"
	"github.com/dripfaucet/drip/internal/coin"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/faucet"
	"github.com/dripfaucet/drip/internal/listing"
	"github.com/dripfaucet/drip/internal/payout"
	"github.com/dripfaucet/drip/internal/ratelimit"
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

// Deps are the services the tools call: those v2 calls.
type Deps struct {
	Payouts *payout.Service
	Faucets *faucet.Service
	Coins   *coin.Catalog
	Listing *listing.Service
	Audit   *audit.Service   // records every manage call
	Rate    ratelimit.Config // the request rate of every key (D40), reported by get_ratelimits
	Log     *slog.Logger
	Now     func() time.Time
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
	readOnly *mcp.Server // the read tools, for keys without the manage scope
	all      *mcp.Server // every tool, for keys with the manage scope
	mcp      http.Handler
	origins  map[string]bool
}

// New returns the tool server's handler; mount it at Path.
func New(d Deps) *Handler {
	if d.ClientIP == nil {
		panic("mcpserver: Deps.ClientIP is required")
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	h := &Handler{Deps: d, origins: map[string]bool{}}
	for _, o := range d.AllowedOrigins {
		h.origins[normalOrigin(o)] = true
	}
	h.readOnly, h.all = h.newServer(), h.newServer()
	manage := map[string]bool{}
	for _, t := range h.tools() {
		if t.manage {
			manage[t.def.Name] = true
		} else {
			h.readOnly.AddTool(t.def, t.handler)
		}
		h.all.AddTool(t.def, t.handler)
	}
	h.readOnly.AddReceivingMiddleware(unlistedManageTools(manage))
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
	version := "devel"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		version = bi.Main.Version
	}
	return mcp.NewServer(&mcp.Implementation{Name: "drip", Title: "drip faucet", Version: version}, &mcp.ServerOptions{
		Instructions: instructions,
		// Tools only, and their list never changes while a key is in use.
		Capabilities:              &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
		SupportedProtocolVersions: ProtocolVersions(),
	})
}

const instructions = `Tools to read and manage one faucet of drip, a faucet payout service. ` +
	`The faucet is the one the key belongs to. Amounts are whole numbers in the coin's smallest unit ` +
	`(1 coin = 100000000); fields ending in _bitcoin give the same amount in whole coins. ` +
	`No tool can send payouts, withdraw funds, create keys or register webhooks. ` +
	`Manage tools change the faucet at once and are recorded in the owner's audit log; ` +
	`a result with a "warning" weakened a protection: tell the owner what it says.`

// unlistedManageTools answers a call of a manage tool on the read-only
// server as the SDK answers any unknown tool, a JSON-RPC error (the key is
// not offered the tool), saying why the tool is unknown to this key.
func unlistedManageTools(manage map[string]bool) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && method == "tools/call" && manage[p.Name] {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
					Message: fmt.Sprintf("unknown tool %q: it is a manage tool, and this key lacks the manage scope", p.Name)}
			}
			return next(ctx, method, req)
		}
	}
}

// tools are every tool: the read tools, then the manage tools.
func (h *Handler) tools() []tool { return append(h.readTools(), h.manageTools()...) }

// server picks the MCP server for an authorized request by its key's
// scopes. The SDK may call it more than once per request.
func (h *Handler) server(r *http.Request) *mcp.Server {
	c := callerFrom(r.Context())
	switch {
	case c == nil:
		return nil // unreachable: ServeHTTP authorizes first
	case c.Key.Has(drip.ScopeManage):
		return h.all
	}
	return h.readOnly
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		// Stateless: no SSE stream to GET, no session to DELETE.
		w.Header().Set("Allow", "POST")
		h.refuse(w, r, drip.Errorf(drip.CodeMethodNotAllowed, "Method %s not allowed here: the tool server takes POST.", r.Method))
		return
	}
	if !h.originAllowed(r) {
		h.refuse(w, r, drip.Errorf(drip.CodeForbidden, "Requests from this web page's origin are not allowed."))
		return
	}
	c, err := h.authorize(r)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	h.mcp.ServeHTTP(w, r.WithContext(withCaller(r.Context(), c)))
}

// authorize authorizes the request's key for the tool server: scope read or
// manage. AuthorizeV2 checks the scope before it takes from the key's
// request rate, so a manage-only key tried for read first is not charged
// twice.
func (h *Handler) authorize(r *http.Request) (*payout.Caller, error) {
	secret, ip := bearer(r), h.ClientIP(r)
	c, err := h.Payouts.AuthorizeV2(r.Context(), secret, ip, drip.ScopeRead)
	if drip.ErrorCode(err) == drip.CodeInsufficientScope {
		c, err = h.Payouts.AuthorizeV2(r.Context(), secret, ip, drip.ScopeManage)
		if drip.ErrorCode(err) == drip.CodeInsufficientScope {
			return nil, drip.Errorf(drip.CodeInsufficientScope, "This key has neither the read nor the manage scope the tool server needs.")
		}
	}
	return c, err
}

// bearer is the key of an "Authorization: Bearer <key>" header, or "".
func bearer(r *http.Request) string {
	scheme, token, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
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
}

// refusal is the body of a refused request: a JSON-RPC error response to
// the request, so that MCP clients show its message; data carries drip's
// error code.
type refusal struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Data    struct {
			Code drip.Code `json:"code"`
		} `json:"data"`
	} `json:"error"`
}

// serverError is the JSON-RPC code of an error the server defines.
const serverError = -32000

func (h *Handler) refuse(w http.ResponseWriter, r *http.Request, err error) {
	code := drip.ErrorCode(err)
	status, ok := httpStatus[code]
	if !ok {
		h.Log.ErrorContext(r.Context(), "tool server request failed", "err", err)
		status, code = http.StatusInternalServerError, drip.CodeInternal
	}
	switch code {
	case drip.CodeUnauthenticated: // RFC 6750 section 3
		challenge := `Bearer realm="drip"`
		if bearer(r) != "" {
			challenge += `, error="invalid_token"`
		}
		w.Header().Set("WWW-Authenticate", challenge)
	case drip.CodeInsufficientScope:
		w.Header().Set("WWW-Authenticate", `Bearer realm="drip", error="insufficient_scope", scope="read manage"`)
	case drip.CodeRateLimited:
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter(err)))
	}
	body := refusal{JSONRPC: "2.0", ID: requestID(r)}
	body.Error.Code, body.Error.Message, body.Error.Data.Code = serverError, drip.ErrorMessage(err), code
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // "Bearer <key>" as written
	_ = enc.Encode(body)
}

// requestID is the id of the JSON-RPC request r carries, or nil (null) when
// its body is no single request with one. A client matches a response to
// its request by id: one with a null id is dropped unread.
func requestID(r *http.Request) json.RawMessage {
	if r.Body == nil {
		return nil
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	var msg struct {
		ID json.RawMessage `json:"id"`
	}
	if err != nil || json.Unmarshal(body, &msg) != nil || len(msg.ID) == 0 {
		return nil
	}
	if c := msg.ID[0]; c != '"' && c != '-' && (c < '0' || c > '9') { // ids are strings or numbers
		return nil
	}
	return msg.ID
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
