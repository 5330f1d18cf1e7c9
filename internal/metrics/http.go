package metrics

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Route is a known path of the HTTP interface: its label values.
type Route struct {
	Interface string // v1, v2, mcp, web, console, other
	Path      string
	// Send marks a route whose latency drip_send_duration_seconds records.
	Send bool
}

// Prefix counts an unknown path under it as (Interface, Other).
type Prefix struct {
	Prefix    string
	Interface string
}

// route is a Route with its label children resolved.
type route struct {
	iface, path string
	byStatus    sync.Map // int -> prometheus.Counter
	send        prometheus.Observer
	reg         *Registry
}

func (rt *route) count(status int) {
	counter(&rt.byStatus, status, func() prometheus.Counter {
		return rt.reg.requests.WithLabelValues(rt.iface, rt.path, strconv.Itoa(status))
	}).Inc()
}

type requests struct {
	next     http.Handler
	exact    map[string]*route
	prefixes []prefixRoute
	other    *route
}

type prefixRoute struct {
	prefix string
	other  *route
}

// Requests counts every request next answers by interface, route and HTTP
// status, and times the send routes. A path is its route when it is one of
// routes (with or without one trailing slash); otherwise it is counted as
// Other under the interface of the first of prefixes it is under, or as
// (other, other).
func (r *Registry) Requests(next http.Handler, routes []Route, prefixes []Prefix) http.Handler {
	q := &requests{next: next, exact: map[string]*route{}, other: r.route(Route{Interface: Other, Path: Other})}
	for _, rt := range routes {
		q.exact[rt.Path] = r.route(rt)
	}
	for _, p := range prefixes {
		q.prefixes = append(q.prefixes, prefixRoute{prefix: p.Prefix, other: r.route(Route{Interface: p.Interface, Path: Other})})
	}
	return q
}

func (r *Registry) route(rt Route) *route {
	out := &route{iface: rt.Interface, path: rt.Path, reg: r}
	if rt.Send {
		out.send = r.sendSeconds.WithLabelValues(rt.Interface)
	}
	return out
}

func (q *requests) route(path string) *route {
	if rt, ok := q.exact[path]; ok {
		return rt
	}
	if rt, ok := q.exact[strings.TrimSuffix(path, "/")]; ok {
		return rt
	}
	for _, p := range q.prefixes {
		if path == p.prefix || strings.HasPrefix(path, p.prefix+"/") {
			return p.other
		}
	}
	return q.other
}

func (q *requests) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rt := q.route(r.URL.Path)
	start := time.Now()
	rec := &recorder{ResponseWriter: w}
	q.next.ServeHTTP(rec, r)
	if rec.status == 0 {
		rec.status = http.StatusOK // a handler that wrote nothing answered 200
	}
	rt.count(rec.status)
	if rt.send != nil {
		rt.send.Observe(time.Since(start).Seconds())
	}
}

// recorder remembers the status a handler answered with.
type recorder struct {
	http.ResponseWriter
	status int
}

func (rec *recorder) WriteHeader(code int) {
	if rec.status == 0 && code >= 200 { // 1xx are interim
		rec.status = code
	}
	rec.ResponseWriter.WriteHeader(code)
}

func (rec *recorder) Write(b []byte) (int, error) {
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	return rec.ResponseWriter.Write(b)
}

// Flush lets streaming replies (the tool server's) through.
func (rec *recorder) Flush() {
	if f, ok := rec.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (rec *recorder) Unwrap() http.ResponseWriter { return rec.ResponseWriter }
