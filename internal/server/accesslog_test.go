package server

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dripfaucet/drip/internal/requestlog"
)

// logLines decodes every JSON line logged into buf.
func logLines(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

// accessHandler is the middleware of Handlers over next, logging JSON at
// level into buf.
func accessHandler(next http.HandlerFunc, level slog.Level, h Handlers) (http.Handler, *bytes.Buffer) {
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: level}))
	return h.middleware(next, log), &buf
}

// TestAccessLogLine: one info line per request with what the handler
// learnt (the key's prefix, v1's status), the caller's IP through the
// trusted proxy, the duration in milliseconds, and the request id, which
// is also on the handler's own lines and in the reply.
func TestAccessLogLine(t *testing.T) {
	t.Parallel()
	const key = "0123456789abcdef0123456789abcdef0123456789abcdef"
	var handlerLog *slog.Logger
	h, buf := accessHandler(func(w http.ResponseWriter, r *http.Request) {
		requestlog.SetKey(r.Context(), key)
		requestlog.SetV1Status(r.Context(), 402)
		handlerLog.ErrorContext(r.Context(), "while serving")
		_, _ = w.Write([]byte("{}"))
	}, slog.LevelInfo, Handlers{ClientIP: ClientIP([]netip.Prefix{netip.MustParsePrefix("192.0.2.1/32")})})
	handlerLog = requestlog.Logger(slog.New(slog.NewJSONHandler(buf, nil)))

	req := httptest.NewRequest(http.MethodPost, "/api/v1/send?api_key="+key, strings.NewReader("api_key="+key))
	req.RemoteAddr = "192.0.2.1:4000"
	req.Header.Set("X-Forwarded-For", "203.0.113.9")
	req.Header.Set("Authorization", "Bearer "+key)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)

	id := rec.Header().Get(RequestIDHeader)
	if !regexp.MustCompile(`^[0-9a-f]{16}$`).MatchString(id) {
		t.Fatalf("X-Request-Id %q, want 16 hex characters", id)
	}
	lines := logLines(t, buf)
	if len(lines) != 2 {
		t.Fatalf("%d lines, want the handler's and the access line: %s", len(lines), buf)
	}
	if lines[0]["msg"] != "while serving" || lines[0]["request_id"] != id {
		t.Errorf("handler's line %v: want request_id %s", lines[0], id)
	}
	got := lines[1]
	ms, _ := got["duration_ms"].(float64)
	if ms <= 0 || ms != float64(int64(ms*1000))/1000 {
		t.Errorf("duration_ms %v, want a positive number of milliseconds with at most 3 decimals", got["duration_ms"])
	}
	delete(got, "time")
	delete(got, "duration_ms")
	want := map[string]any{"level": "INFO", "msg": "request", "method": "POST", "path": "/api/v1/send", "status": 200.0,
		"v1_status": 402.0, "client_ip": "203.0.113.9", "key_prefix": "012345", "request_id": id}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("access line (-want +got)\n%s", diff)
	}
	if strings.Contains(buf.String(), key) {
		t.Errorf("the key is in the log:\n%s", buf)
	}
}

// TestAccessLogV1StatusOnlyWhereItDiffers: a v1 success (body status
// 200, HTTP 200) logs no v1_status; a v2 key is logged by its visible
// prefix.
func TestAccessLogV1StatusOnlyWhereItDiffers(t *testing.T) {
	t.Parallel()
	h, buf := accessHandler(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/v1/send" {
			requestlog.SetV1Status(r.Context(), 200)
			return
		}
		requestlog.SetKey(r.Context(), "drip_abcdefgh_"+strings.Repeat("s", 32))
		w.WriteHeader(http.StatusConflict)
	}, slog.LevelInfo, Handlers{})
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/api/v1/send", nil))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/api/v2/balances", nil))
	lines := logLines(t, buf)
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2: %s", len(lines), buf)
	}
	if _, ok := lines[0]["v1_status"]; ok || lines[0]["status"] != 200.0 {
		t.Errorf("v1 line %v: want status 200 and no v1_status", lines[0])
	}
	if _, ok := lines[1]["v1_status"]; ok || lines[1]["status"] != 409.0 || lines[1]["key_prefix"] != "drip_abcdefgh" {
		t.Errorf("v2 line %v: want status 409, key_prefix drip_abcdefgh and no v1_status", lines[1])
	}
}

// TestRequestIDHonouredWhenSafe: an incoming id of 1-128 printable ASCII
// characters is kept and echoed; any other is replaced by a new one.
func TestRequestIDHonouredWhenSafe(t *testing.T) {
	t.Parallel()
	h, _ := accessHandler(func(http.ResponseWriter, *http.Request) {}, slog.LevelInfo, Handlers{})
	for _, tt := range []struct {
		name, in string
		kept     bool
	}{
		{"a proxy's id", "req-7f3a 9 /x=y", true},
		{"128 characters", strings.Repeat("a", 128), true},
		{"129 characters", strings.Repeat("a", 129), false},
		{"none", "", false},
		{"a control character", "abc\x1bdef", false},
		{"a line break", "abc\ndef", false},
		{"not ASCII", "abcé", false},
	} {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		if tt.in != "" {
			req.Header[RequestIDHeader] = []string{tt.in}
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		got := rec.Header().Get(RequestIDHeader)
		if tt.kept && got != tt.in || !tt.kept && (got == tt.in || !regexp.MustCompile(`^[0-9a-f]{16}$`).MatchString(got)) {
			t.Errorf("%s: incoming %q, echoed %q; want it kept: %v", tt.name, tt.in, got, tt.kept)
		}
	}
}

// TestAccessLogLevels: the probes are logged at debug level only, and
// with the access log off nothing is logged but the id is still given.
func TestAccessLogLevels(t *testing.T) {
	t.Parallel()
	ok := func(http.ResponseWriter, *http.Request) {}
	count := func(h http.Handler, buf *bytes.Buffer, path string) int {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Header().Get(RequestIDHeader) == "" {
			t.Errorf("%s: no X-Request-Id in the reply", path)
		}
		n := len(logLines(t, buf))
		buf.Reset()
		return n
	}
	info, infoBuf := accessHandler(ok, slog.LevelInfo, Handlers{})
	debug, debugBuf := accessHandler(ok, slog.LevelDebug, Handlers{})
	off, offBuf := accessHandler(ok, slog.LevelDebug, Handlers{NoAccessLog: true})
	for path, want := range map[string][3]int{"/healthz": {0, 1, 0}, "/readyz": {0, 1, 0}, "/api/v1/send": {1, 1, 0}} {
		got := [3]int{count(info, infoBuf, path), count(debug, debugBuf, path), count(off, offBuf, path)}
		if got != want {
			t.Errorf("%s: lines at info, debug and off %v, want %v", path, got, want)
		}
	}
}

// TestAccessLogLeavesOutPaymentTokens: a merchant payment's token is in
// its verification's path (spec 4.4) and is a secret until verified
// (D56): the access line names the route, never the token.
func TestAccessLogLeavesOutPaymentTokens(t *testing.T) {
	t.Parallel()
	const token = "Zq3xv0Wm8bB1cY2dE4fG6hJ8kL0mN2pQ4rS6tU8vW0x"
	h, buf := accessHandler(func(http.ResponseWriter, *http.Request) {}, slog.LevelInfo, Handlers{})
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/merchant/get-payment/"+token, nil))
	if strings.Contains(buf.String(), token) {
		t.Fatalf("the access log holds the token:\n%s", buf.String())
	}
	lines := logLines(t, buf)
	if len(lines) != 1 || lines[0]["path"] != "/merchant/get-payment/{token}" {
		t.Errorf("access lines %v; want one with path /merchant/get-payment/{token}", lines)
	}
}
