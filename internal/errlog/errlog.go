// Package errlog keeps an outage from flooding the log (issue 9, D58):
// error records of one cause are written once per interval, with a count
// of the ones held back, instead of one line per failed request.
package errlog

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// maxCauses bounds the causes tracked at once; past it, records pass
// through unsummarized rather than grow the table without end.
const maxCauses = 1024

// Summarize returns a handler that passes records to next, except that an
// error record (slog.LevelError and above) whose cause was written less
// than every ago is held back and counted. The cause is the message and
// the record's "err" or "error" attribute with its digits blanked, so that
// one fault seen through different connections or ids counts as one.
// When an interval ends with records held back, the last of them is
// written with "repeated" (how many were held back, itself included) and
// "within" (the interval), and a new interval begins: during an outage,
// one line per cause per interval.
func Summarize(next slog.Handler, every time.Duration) slog.Handler {
	return &handler{next: next, s: &summary{every: every, causes: map[string]*window{}}}
}

type handler struct {
	next slog.Handler
	s    *summary
}

// summary is shared by a handler and every handler derived from it
// (WithAttrs, WithGroup), so a cause is counted wherever it is logged.
type summary struct {
	every  time.Duration
	mu     sync.Mutex
	causes map[string]*window
}

// window is the current interval of one cause.
type window struct {
	start    time.Time
	held     int
	last     slog.Record  // the latest record held back
	lastNext slog.Handler // the handler it would have gone to
	ctx      context.Context
	timer    *time.Timer
}

func (h *handler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

func (h *handler) WithAttrs(as []slog.Attr) slog.Handler {
	return &handler{next: h.next.WithAttrs(as), s: h.s}
}

func (h *handler) WithGroup(name string) slog.Handler {
	return &handler{next: h.next.WithGroup(name), s: h.s}
}

func (h *handler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level < slog.LevelError {
		return h.next.Handle(ctx, r)
	}
	key := r.Message + "\x00" + cause(r)
	s := h.s
	now := time.Now()
	s.mu.Lock()
	w, ok := s.causes[key]
	var done *window // an interval over whose records are still to write
	if ok && now.Sub(w.start) >= s.every {
		if w.held == 0 {
			ok = false
		} else {
			// Its timer has not written it yet (timers run late under
			// load); it is written here instead, and this record counts in
			// the next interval, so that each interval is one line.
			w.timer.Stop()
			done, w = w, &window{start: now}
			s.causes[key] = w
		}
	}
	if !ok {
		if len(s.causes) >= maxCauses {
			s.mu.Unlock()
			return h.next.Handle(ctx, r)
		}
		s.causes[key] = &window{start: now}
		s.mu.Unlock()
		return h.next.Handle(ctx, r)
	}
	w.held++
	w.last, w.lastNext, w.ctx = r.Clone(), h.next, context.WithoutCancel(ctx)
	if w.timer == nil {
		w.timer = time.AfterFunc(w.start.Add(s.every).Sub(now), func() { s.flush(key, w) })
	}
	s.mu.Unlock()
	if done != nil {
		done.write(s.every)
	}
	return nil
}

// flush writes what window w of key held back, when its interval ends,
// and opens the next interval: what arrives in it is held back in turn.
func (s *summary) flush(key string, w *window) {
	s.mu.Lock()
	if s.causes[key] != w || w.held == 0 {
		s.mu.Unlock()
		return
	}
	s.causes[key] = &window{start: time.Now()}
	s.mu.Unlock()
	w.write(s.every)
}

// write writes the last record w held back, standing for all it held.
func (w *window) write(every time.Duration) {
	r := w.last
	r.AddAttrs(slog.Int("repeated", w.held), slog.Duration("within", every))
	_ = w.lastNext.Handle(w.ctx, r)
}

// cause is the record's error attribute with its digits blanked: ports,
// ids and counts vary between records of one fault.
func cause(r slog.Record) string {
	var text string
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "err" || a.Key == "error" {
			text = a.Value.String()
			return false
		}
		return true
	})
	if len(text) > 300 {
		text = text[:300]
	}
	return strings.Map(func(c rune) rune {
		if c >= '0' && c <= '9' {
			return '#'
		}
		return c
	}, text)
}
