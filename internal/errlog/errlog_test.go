package errlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for the flush timers' goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// lines decodes every JSON line written so far.
func (s *syncBuffer) lines(t *testing.T) []map[string]any {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(s.b.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

func newLog(every time.Duration) (*slog.Logger, *syncBuffer) {
	buf := &syncBuffer{}
	return slog.New(Summarize(slog.NewJSONHandler(buf, nil), every)), buf
}

// waitLines waits (up to 5 s) for at least n lines.
func waitLines(t *testing.T, buf *syncBuffer, n int) []map[string]any {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		lines := buf.lines(t)
		if len(lines) >= n || time.Now().After(deadline) {
			return lines
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestOneCauseIsOneLinePerInterval(t *testing.T) {
	t.Parallel()
	log, buf := newLog(100 * time.Millisecond)
	for i := range 500 {
		// The port differs on every record, as it does across connections.
		err := fmt.Errorf("read tcp 127.0.0.1:%d->127.0.0.1:5432: connection reset by peer", 40000+i)
		log.Error("v1 request failed", "path", "/api/v1/send", "err", err)
	}
	waitLines(t, buf, 2)
	time.Sleep(250 * time.Millisecond) // nothing more may come
	lines := buf.lines(t)
	if len(lines) != 2 {
		t.Fatalf("got %d lines, want 2 (the first, then one with the count): %v", len(lines), lines)
	}
	if _, ok := lines[0]["repeated"]; ok {
		t.Errorf("first line carries a count: %v", lines[0])
	}
	if got := lines[1]["repeated"]; got != float64(499) {
		t.Errorf("second line repeated = %v, want 499", got)
	}
	if !strings.Contains(lines[1]["err"].(string), "40499") {
		t.Errorf("second line should be the latest record, got err %v", lines[1]["err"])
	}
}

func TestCausesAreCountedApart(t *testing.T) {
	t.Parallel()
	log, buf := newLog(time.Hour)
	for range 10 {
		log.Error("v1 request failed", "err", errors.New("connection refused"))
		log.Error("v1 request failed", "err", errors.New("statement timeout"))
		log.Error("v2 request failed", "err", errors.New("connection refused"))
	}
	if lines := buf.lines(t); len(lines) != 3 {
		t.Fatalf("got %d lines, want one per cause (3): %v", len(lines), lines)
	}
}

func TestBelowErrorPassesThrough(t *testing.T) {
	t.Parallel()
	log, buf := newLog(time.Hour)
	for range 5 {
		log.Warn("rate limits are per node", "err", errors.New("redis down"))
		log.Info("request", "path", "/x")
	}
	if lines := buf.lines(t); len(lines) != 10 {
		t.Fatalf("got %d lines, want all 10", len(lines))
	}
}

func TestLongOutageIsOneLinePerInterval(t *testing.T) {
	t.Parallel()
	log, buf := newLog(100 * time.Millisecond)
	stop := time.Now().Add(550 * time.Millisecond)
	n := 0
	for time.Now().Before(stop) {
		log.Error("v2 request failed", "err", errors.New("dial tcp: connection refused"))
		n++
		time.Sleep(time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	lines := buf.lines(t)
	// 550 ms of errors at a 100 ms interval: about 6 lines, never one per error.
	if len(lines) < 3 || len(lines) > 9 {
		t.Fatalf("got %d lines for %d errors over 550 ms at a 100 ms interval", len(lines), n)
	}
	total := 0
	for _, l := range lines {
		if r, ok := l["repeated"].(float64); ok {
			total += int(r) // the line stands for the records held back
		} else {
			total++
		}
	}
	if total != n {
		t.Errorf("lines account for %d errors, want %d", total, n)
	}
}

func TestDerivedLoggersShareCounts(t *testing.T) {
	t.Parallel()
	log, buf := newLog(time.Hour)
	a, b := log.With("component", "v1"), log.WithGroup("g")
	for range 5 {
		a.Error("failed", "err", errors.New("x"))
		b.Error("failed", "err", errors.New("x"))
	}
	if lines := buf.lines(t); len(lines) != 1 {
		t.Fatalf("got %d lines, want 1", len(lines))
	}
}
