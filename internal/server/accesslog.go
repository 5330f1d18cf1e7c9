package server

import (
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/dripfaucet/drip/internal/console"
	"github.com/dripfaucet/drip/internal/requestlog"
)

// RequestIDHeader carries a request's id: taken from the request when it
// is a usable one (a proxy's or the client's), else made here, and always
// echoed in the reply, so a client's report and the log line meet.
const RequestIDHeader = "X-Request-Id"

// maxRequestID bounds an incoming request id: longer ones are replaced.
const maxRequestID = 128

// accessLog gives every request its id (on every log line of the request,
// through requestlog) and, unless off, writes one line per request once
// it is answered: method, path, HTTP status, the v1 status of the body
// where it differs, duration in milliseconds, client IP, the key's prefix
// (never the key), and the request id. The probes /healthz and /readyz
// are logged at debug level, the rest at info. Bodies and headers are
// never logged: they carry keys.
func accessLog(next http.Handler, log *slog.Logger, clientIP func(*http.Request) netip.Addr, off bool) http.Handler {
	if clientIP == nil {
		clientIP = RemoteIP
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		e := &requestlog.Entry{ID: requestID(r.Header.Get(RequestIDHeader))}
		w.Header().Set(RequestIDHeader, e.ID)
		w.Header().Set("X-Content-Type-Options", "nosniff")
		r = r.WithContext(requestlog.NewContext(r.Context(), e))
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		if off {
			return
		}
		level := slog.LevelInfo
		if r.URL.Path == "/healthz" || r.URL.Path == "/readyz" {
			level = slog.LevelDebug // a probe every few seconds would drown the rest
		}
		if !log.Enabled(r.Context(), level) {
			return
		}
		attrs := make([]slog.Attr, 0, 7)
		attrs = append(attrs, slog.String("method", r.Method), slog.String("path", loggedPath(r.URL.Path)), slog.Int("status", rec.status))
		if s := e.V1Status(); s != 0 && s != rec.status {
			attrs = append(attrs, slog.Int("v1_status", s))
		}
		attrs = append(attrs, slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000),
			slog.String("client_ip", clientIP(r).String()))
		if p := e.KeyPrefix(); p != "" {
			attrs = append(attrs, slog.String("key_prefix", p))
		}
		log.LogAttrs(r.Context(), level, "request", attrs...) // request_id: added by requestlog.Logger
	})
}

// requestID is the incoming id if it is 1 to 128 printable ASCII
// characters (nothing that could forge a log line or a header), else a
// new random one.
func requestID(in string) string {
	ok := in != "" && len(in) <= maxRequestID
	for i := 0; ok && i < len(in); i++ {
		ok = in[i] >= 0x20 && in[i] < 0x7f
	}
	if ok {
		return in
	}
	// Not a secret, only unique enough to find one request's lines.
	id := strconv.FormatUint(rand.Uint64(), 16)
	return "0000000000000000"[len(id):] + id
}

// statusRecorder remembers the status a handler wrote, for the access log.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// loggedPath is a request's path as logs hold it: a merchant payment's
// token, the last segment of console.GetPaymentPath, is a secret until
// the merchant verifies it (D56), so a log never holds it.
func loggedPath(path string) string {
	if strings.HasPrefix(path, console.GetPaymentPath) {
		return console.GetPaymentPath + "{token}"
	}
	return path
}
