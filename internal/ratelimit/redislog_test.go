package ratelimit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/dripfaucet/drip/internal/logtest"

	"github.com/google/go-cmp/cmp"
)

// TestRedisLogPrintf: each go-redis line becomes one structured warning
// whose message is the formatted line, without any URL's credentials.
func TestRedisLogPrintf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		format string
		args   []any
		want   string
	}{
		{
			"formatted line",
			"redis: connection pool: failed to dial after %d attempts: %v",
			[]any{1, errors.New("dial tcp 127.0.0.1:6379: connect: connection refused")},
			"redis: connection pool: failed to dial after 1 attempts: dial tcp 127.0.0.1:6379: connect: connection refused",
		},
		{"trailing newline", "redis: discarding bad connection: %v\n", []any{"EOF"}, "redis: discarding bad connection: EOF"},
		{"URL with a password", "dial %s failed", []any{"redis://u:S3cr/et@h:6379/0"}, "dial redis://REDACTED@h:6379/0 failed"},
		{"quoted URL with a password", "sentinel: new master=%q", []any{"rediss://:p@ss:w0rd@h:6380"}, `sentinel: new master="rediss://REDACTED@h:6380"`},
		{"address", "sentinel: selected addr=%s masterAddr=%s", []any{"10.0.0.1:26379", "10.0.0.2:6379"}, "sentinel: selected addr=10.0.0.1:26379 masterAddr=10.0.0.2:6379"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			redisLog{slog.New(slog.NewJSONHandler(&buf, nil))}.Printf(context.Background(), tt.format, tt.args...)
			got := decodeRecords(t, buf.Bytes())
			want := []map[string]any{{"level": "WARN", "msg": tt.want, "component": "go-redis"}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("records (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRouteRedisLogs: once routed, what go-redis itself logs (here, a
// failed dial at start) arrives as a structured warning, and the URL's
// password appears nowhere. Not parallel: go-redis's logger is the
// process's.
func TestRouteRedisLogs(t *testing.T) {
	var buf logtest.Buffer
	RouteRedisLogs(slog.New(slog.NewJSONHandler(&buf, nil)))
	t.Cleanup(func() { RouteRedisLogs(slog.Default()) })
	addr := closedAddr(t)

	r, err := NewRedis("redis://drip:s3cret@"+addr+"/0", Default, slog.New(slog.NewJSONHandler(&buf, nil)))
	if err != nil {
		t.Fatal(err)
	}
	r.Close()

	var fromRedis []map[string]any
	for _, rec := range decodeRecords(t, []byte(buf.String())) {
		if rec["component"] == "go-redis" {
			fromRedis = append(fromRedis, rec)
		}
	}
	if len(fromRedis) == 0 {
		t.Fatalf("nothing from go-redis in the log:\n%s", buf.String())
	}
	for _, rec := range fromRedis {
		if msg, _ := rec["msg"].(string); rec["level"] != "WARN" || !strings.Contains(msg, "failed to dial") || !strings.Contains(msg, addr) {
			t.Errorf("go-redis record %v: want a warning that the dial to %s failed", rec, addr)
		}
	}
	if strings.Contains(buf.String(), "s3cret") {
		t.Fatalf("the log shows the password:\n%s", buf.String())
	}
}

// decodeRecords reads slog JSON lines, without their times.
func decodeRecords(t *testing.T, b []byte) []map[string]any {
	t.Helper()
	var recs []map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	for dec.More() {
		var rec map[string]any
		if err := dec.Decode(&rec); err != nil {
			t.Fatalf("%v in log:\n%s", err, b)
		}
		delete(rec, "time")
		recs = append(recs, rec)
	}
	return recs
}
