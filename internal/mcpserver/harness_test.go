// Tests of the tool server (spec 4.3, issue 4). They drive the real
// application over HTTP: the tool server mounted at mcpserver.Path beside
// the application's own handler (v1, v2), on every engine storetest.Engines
// gives, called with the SDK's own client and, where the wire itself is the
// subject, with raw HTTP.
//
// This file holds the shared harness.
package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dripfaucet/drip/internal/app"
	"github.com/dripfaucet/drip/internal/apptest"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/key"
	"github.com/dripfaucet/drip/internal/mcpserver"
	"github.com/dripfaucet/drip/internal/ratelimit"
	"github.com/dripfaucet/drip/internal/server"
	"github.com/dripfaucet/drip/internal/store"
	"github.com/dripfaucet/drip/internal/store/storetest"
)

// env is a running application with the tool server mounted. The embedded
// apptest.Env gives the fixture factories and the v2 client.
type env struct {
	*apptest.Env
	mcpURL string
	tools  *mcpserver.Handler
}

// envOptions adjust an env.
type envOptions struct {
	rate    ratelimit.Config // default: generous, so tests are not rate limited by accident
	origins []string         // mcpserver.Deps.AllowedOrigins
	log     *slog.Logger     // mcpserver.Deps.Log; default: the application's
	// handler builds the tool server; default mcpserver.New.
	handler func(mcpserver.Deps) *mcpserver.Handler
}

// generous is a request rate no test reaches unless it means to.
var generous = ratelimit.Config{PerMinute: 60000, Burst: 100000}

func newEnv(t *testing.T, st store.Store, opts envOptions) *env {
	t.Helper()
	if opts.rate == (ratelimit.Config{}) {
		opts.rate = generous
	}
	clock := apptest.NewClock(time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC))
	a, err := app.New(context.Background(), st, app.Options{Now: clock.Now, Rate: opts.rate})
	if err != nil {
		t.Fatalf("app: %v", err)
	}
	if opts.log == nil {
		opts.log = a.Log
	}
	if opts.handler == nil {
		opts.handler = mcpserver.New
	}
	tools := opts.handler(mcpserver.Deps{
		Ops: a.Ops, Payouts: a.Payouts, Audit: a.Audit, Log: opts.log, ClientIP: server.ClientIP(nil), AllowedOrigins: opts.origins,
	})
	mux := http.NewServeMux()
	mux.Handle(mcpserver.Path, tools)
	mux.Handle("/", a.Handler(app.HandlerOptions{}))
	srv := httptest.NewServer(mux)
	t.Cleanup(a.Close) // cleanups run last-first: the server closes, then the ledger
	t.Cleanup(srv.Close)
	return &env{Env: &apptest.Env{App: a, Server: srv, Clock: clock}, mcpURL: srv.URL + mcpserver.Path, tools: tools}
}

// run runs fn as a parallel subtest on every engine (D30, D31), each with an
// application of its own.
func run(t *testing.T, opts envOptions, fn func(t *testing.T, e *env)) {
	t.Helper()
	t.Parallel()
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			t.Parallel()
			fn(t, newEnv(t, eng.Open(t), opts))
		})
	}
}

// bearerTransport adds the key to every request, as an assistant's client
// configuration does.
type bearerTransport struct{ key string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.key != "" {
		r.Header.Set("Authorization", "Bearer "+b.key)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// dial connects the SDK's client with the key ("" for none) at the
// protocol version ("" for the SDK's latest).
func (e *env) dial(t testing.TB, key, version string) (*mcp.ClientSession, error) {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "drip-test", Version: "1"}, nil)
	transport := &mcp.StreamableClientTransport{
		Endpoint:   e.mcpURL,
		HTTPClient: &http.Client{Transport: bearerTransport{key: key}, Timeout: 30 * time.Second},
		MaxRetries: -1, DisableStandaloneSSE: true,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

// connect is dial that fails the test on error.
func (e *env) connect(t testing.TB, key string) *mcp.ClientSession {
	t.Helper()
	cs, err := e.dial(t, key, "")
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	return cs
}

// call calls a tool, failing the test on a protocol error (a tool error is
// a result).
func call(t testing.TB, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := callErr(cs, name, args)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func callErr(cs *mcp.ClientSession, name string, args any) (*mcp.CallToolResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
}

// texts are the text contents of a result.
func texts(t testing.TB, res *mcp.CallToolResult) []string {
	t.Helper()
	var out []string
	for _, c := range res.Content {
		tc, ok := c.(*mcp.TextContent)
		if !ok {
			t.Fatalf("content %T, want text only", c)
		}
		out = append(out, tc.Text)
	}
	return out
}

// wantOK fails the test unless res is a success with structuredContent.
func wantOK(t testing.TB, name string, res *mcp.CallToolResult) {
	t.Helper()
	if res.IsError || res.StructuredContent == nil {
		t.Fatalf("%s: isError %v, structuredContent %v: %q", name, res.IsError, res.StructuredContent, texts(t, res))
	}
}

// wantToolError fails the test unless res is a tool error (isError) whose
// one text content contains each of want.
func wantToolError(t testing.TB, name string, res *mcp.CallToolResult, want ...string) {
	t.Helper()
	if !res.IsError {
		t.Errorf("%s: isError false, want a tool error: %q", name, texts(t, res))
		return
	}
	got := texts(t, res)
	if len(got) != 1 {
		t.Errorf("%s: %d text contents, want 1: %q", name, len(got), got)
		return
	}
	for _, w := range want {
		if !strings.Contains(got[0], w) {
			t.Errorf("%s: message %q, want it to contain %q", name, got[0], w)
		}
	}
}

// structured is res's structuredContent as a JSON object.
func structured(t testing.TB, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	m, ok := res.StructuredContent.(map[string]any)
	if !ok {
		t.Fatalf("structuredContent %T, want an object", res.StructuredContent)
	}
	return m
}

// jsonOf decodes JSON text into generic values; exact keeps numbers as
// written (json.Number), else they are float64 as any client reads them.
func jsonOf(t testing.TB, text []byte, exact bool) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(text))
	if exact {
		dec.UseNumber()
	}
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("JSON %s: %v", text, err)
	}
	return v
}

// mint mints a key as p says and returns it with its secret.
func (e *env) mint(t testing.TB, p key.MintParams) (*drip.Key, string) {
	t.Helper()
	k, secret, err := e.App.Keys.Mint(context.Background(), p)
	if err != nil {
		t.Fatalf("mint: %v", err)
	}
	return k, secret
}

// rawReply is a raw HTTP reply of the tool server.
type rawReply struct {
	status int
	header http.Header
	body   []byte
}

// post sends one JSON-RPC message as an MCP client would, with the given
// extra headers; key "" sends none.
func (e *env) post(t testing.TB, key, body string, header map[string]string) rawReply {
	t.Helper()
	return e.send(t, http.MethodPost, key, body, header)
}

func (e *env) send(t testing.TB, method, key, body string, header map[string]string) rawReply {
	t.Helper()
	req, err := http.NewRequest(method, e.mcpURL, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := e.Server.Client().Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", e.mcpURL, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return rawReply{status: resp.StatusCode, header: resp.Header, body: b}
}

// rpc is a JSON-RPC request body.
func rpc(method string, params any) string {
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	if err != nil {
		panic(err)
	}
	return string(b)
}

// rpcReply is a decoded JSON-RPC response, numbers kept as written.
type rpcReply struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Data    struct {
			Code string `json:"code"`
		} `json:"data"`
	} `json:"error"`
}

func decodeRPC(t testing.TB, r rawReply) rpcReply {
	t.Helper()
	var out rpcReply
	if err := json.Unmarshal(r.body, &out); err != nil {
		t.Fatalf("HTTP %d: not a JSON-RPC response: %v\n%s", r.status, err, r.body)
	}
	return out
}
