package app

import (
	"net/http"
	"strings"

	"github.com/dripfaucet/drip/internal/apiv1"
	"github.com/dripfaucet/drip/internal/apiv2"
	"github.com/dripfaucet/drip/internal/console"
	"github.com/dripfaucet/drip/internal/mcpserver"
	"github.com/dripfaucet/drip/internal/metrics"
	"github.com/dripfaucet/drip/internal/server"
	"github.com/dripfaucet/drip/internal/web"
)

// MetricsHandler serves the app's metrics (metrics.Path) on a listener of
// their own (drip serve --metrics-listen, with
// HandlerOptions.MetricsElsewhere on the main one).
func (a *App) MetricsHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET "+metrics.Path, a.Metrics.Handler())
	return mux
}

// instrument counts h's requests by interface, route and status, and
// serves GET /metrics beside h unless opts.MetricsElsewhere. The routes
// are every path the interfaces know; any other path is counted as
// "other", so a client cannot grow the series by inventing paths.
func (a *App) instrument(opts HandlerOptions, v1 *apiv1.Handler, v2 *apiv2.Handler, h http.Handler) http.Handler {
	routes := []metrics.Route{
		{Interface: "mcp", Path: mcpserver.Path},
		{Interface: "web", Path: web.DirectoryPath},
		{Interface: "web", Path: web.ListPath},
		{Interface: "web", Path: web.ListPathV1},
		{Interface: metrics.Other, Path: "/healthz"},
		{Interface: metrics.Other, Path: "/readyz"},
	}
	if opts.BenchNoop {
		routes = append(routes, metrics.Route{Interface: metrics.Other, Path: server.NoopPath})
	}
	for _, p := range v1.Paths() {
		routes = append(routes, metrics.Route{Interface: "v1", Path: p, Send: p == apiv1.Prefix+"/send"})
	}
	for _, p := range v2.Paths() {
		routes = append(routes, metrics.Route{Interface: "v2", Path: p, Send: p == apiv2.Prefix+"/send"})
	}
	if !opts.MetricsElsewhere {
		routes = append(routes, metrics.Route{Interface: metrics.Other, Path: metrics.Path})
		// Not a ServeMux: it would redirect unclean paths, and v1 answers
		// every path under its prefix itself (D20).
		serve, next := a.Metrics.Handler(), h
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == metrics.Path && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
				serve.ServeHTTP(w, r)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	prefixes := []metrics.Prefix{{Prefix: apiv1.Prefix, Interface: "v1"}, {Prefix: apiv2.Prefix, Interface: "v2"}}
	// The console's fixed pages are routes; the pages under a section
	// (/manage/7/keys) count as "other" of the console, so ids do not
	// grow the series.
	for _, p := range console.Patterns {
		switch {
		case p == "/{$}":
			routes = append(routes, metrics.Route{Interface: "console", Path: "/"})
		case strings.HasSuffix(p, "/"):
			prefixes = append(prefixes, metrics.Prefix{Prefix: strings.TrimSuffix(p, "/"), Interface: "console"})
		default:
			routes = append(routes, metrics.Route{Interface: "console", Path: p})
		}
	}
	return a.Metrics.Requests(h, routes, prefixes)
}

// instrumentMCP counts the requests of the tool server's own listener.
func (a *App) instrumentMCP(h http.Handler) http.Handler {
	return a.Metrics.Requests(h, []metrics.Route{
		{Interface: "mcp", Path: mcpserver.Path},
		{Interface: metrics.Other, Path: "/healthz"},
		{Interface: metrics.Other, Path: "/readyz"},
	}, nil)
}
