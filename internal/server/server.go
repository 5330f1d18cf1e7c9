// Package server assembles drip's HTTP handler: the routes of every
// interface, and the middleware all of them share (panic recovery, access
// logging, security headers).
package server

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/dripfaucet/drip/internal/apiv1"
	"github.com/dripfaucet/drip/internal/apiv2"
	"github.com/dripfaucet/drip/internal/console"
	"github.com/dripfaucet/drip/internal/mcpserver"
	"github.com/dripfaucet/drip/internal/requestlog"
	"github.com/dripfaucet/drip/internal/web"
)

// Handlers are the interfaces the server mounts.
type Handlers struct {
	V1 *apiv1.Handler
	V2 *apiv2.Handler
	// Directory is the public faucet list (D44): web.DirectoryPath,
	// web.ListPath and web.ListPathV1.
	Directory *web.Directory
	// Console is the web console's pages (console.Patterns); nil leaves
	// them out.
	Console http.Handler
	// MCP is the tool server for AI assistants (spec 4.3), mounted at
	// mcpserver.Path; nil leaves it out.
	MCP http.Handler
	// BenchNoop mounts POST /bench/noop: a constant v1-shaped reply through
	// the same listener and middleware, the ceiling drip bench measures
	// scenarios against. Off in production.
	BenchNoop bool
	// RequestTimeout is every request's deadline (D6): the store's waits
	// and a payout's transaction end before it, so each request is
	// answered by then. It must be shorter than the server's write
	// timeout (WriteTimeout). Zero: DefaultRequestTimeout.
	RequestTimeout time.Duration
	// Ready are the checks of GET /readyz (D58), by name.
	Ready []Check
	// ClientIP tells the caller's address for the access log
	// (server.ClientIP); nil: the connection's.
	ClientIP func(*http.Request) netip.Addr
	// NoAccessLog turns the per-request log line off (drip bench); the
	// request id is still given, echoed and put on other lines.
	NoAccessLog bool
}

// DefaultRequestTimeout answers a faucet's PHP script within the few
// seconds it waits on an HTTP call, with time for a payout to commit and,
// if its commit's answer is lost, to be settled (ledger.SettleMargin).
const DefaultRequestTimeout = 5 * time.Second

// WriteTimeout is the write timeout a server of these handlers needs: the
// request's deadline, and time to write the answer after it.
func WriteTimeout(requestTimeout time.Duration) time.Duration {
	if requestTimeout <= 0 {
		requestTimeout = DefaultRequestTimeout
	}
	return requestTimeout + 10*time.Second
}

// NoopPath is the no-op endpoint of Handlers.BenchNoop.
const NoopPath = "/bench/noop"

var noopReply = []byte(`{"status":200,"message":"OK","rate_limit_remaining":119,"currency":"BTC","balance":99999000,"balance_bitcoin":0.99999,"payout_id":1,"payout_user_hash":"0000000000000000000000000000000000000000"}` + "\n")

// New returns the root handler.
func New(h Handlers, log *slog.Logger) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", healthz)
	mux.Handle("GET /readyz", readyz(h.Ready, log))
	if h.MCP != nil {
		mux.Handle(mcpserver.Path, h.MCP)
	}
	if h.BenchNoop {
		mux.HandleFunc("POST "+NoopPath, func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, 64<<10)) // read the body, as v1 does
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Cache-Control", "no-store")
			_, _ = w.Write(noopReply)
		})
	}
	if h.Console != nil {
		for _, p := range console.Patterns {
			mux.Handle(p, h.Console)
		}
	}
	mux.Handle("GET "+web.DirectoryPath, h.Directory)
	mux.Handle(web.ListPath, h.Directory)
	// v1 owns everything under its prefix and answers every path itself
	// (404 for unknown ones), before ServeMux could clean "//send" or
	// "/./send" into a redirect: a v1 reply is always HTTP 200 JSON (D20).
	root := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The faucet list answers under v1's prefix too, where existing
		// faucet-list clients call it; it is not a v1 operation.
		if r.URL.Path == web.ListPathV1 {
			h.Directory.ServeHTTP(w, r)
			return
		}
		if under(r.URL.Path, apiv1.Prefix) {
			h.V1.ServeHTTP(w, r)
			return
		}
		// v2 likewise answers every path under its prefix with its envelope.
		if under(r.URL.Path, apiv2.Prefix) {
			h.V2.ServeHTTP(w, r)
			return
		}
		mux.ServeHTTP(w, r)
	})
	return h.middleware(root, log)
}

// NewMCP returns the root handler of a listener of the tool server's own
// (drip serve --mcp-listen): h.MCP at mcpserver.Path, /healthz and
// /readyz, with the middleware every route has; h's other interfaces are
// not mounted.
func NewMCP(h Handlers, log *slog.Logger) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", healthz)
	mux.Handle("GET /readyz", readyz(h.Ready, log))
	mux.Handle(mcpserver.Path, h.MCP)
	return h.middleware(mux, log)
}

// middleware is what every route of a listener goes through, outermost
// first: the request id and access log (so a panic's 500 is logged with
// its id), panic recovery, the request's deadline.
func (h Handlers) middleware(next http.Handler, log *slog.Logger) http.Handler {
	log = requestlog.Logger(log)
	return accessLog(recoverPanics(withDeadline(next, h.RequestTimeout), log), log, h.ClientIP, h.NoAccessLog)
}

// withDeadline gives every request its deadline (D6).
func withDeadline(next http.Handler, timeout time.Duration) http.Handler {
	if timeout <= 0 {
		timeout = DefaultRequestTimeout
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), timeout)
		defer cancel()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

func healthz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("ok\n"))
}

func under(path, prefix string) bool {
	return path == prefix || strings.HasPrefix(path, prefix+"/")
}

// recoverPanics turns a panic into a logged internal error, so one bad
// request cannot take the process down or leak a stack trace to a client.
func recoverPanics(next http.Handler, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				log.ErrorContext(r.Context(), "panic serving request", "path", loggedPath(r.URL.Path), "panic", p)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusInternalServerError)
				body := `{"status":500,"message":"Internal error."}`
				if under(r.URL.Path, apiv2.Prefix) { // v2's envelope (D32)
					body = `{"success":false,"status":500,"message":"Internal error.","data":null,"error":{"code":"internal","v1_status":null}}`
				}
				_, _ = w.Write([]byte(body + "\n"))
			}
		}()
		next.ServeHTTP(w, r)
	})
}
