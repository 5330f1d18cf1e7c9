// Package requestlog carries what a request's access-log line says from
// the handlers that learn it (the caller's key, v1's status in the body)
// to the server's middleware that writes it, and puts the request's id on
// every log line written while serving it. It imports nothing of drip, so
// every interface can use it and the server can mount them all.
package requestlog

import (
	"context"
	"log/slog"
	"strings"
)

// Entry is one request's part of its access-log line. The server's
// middleware makes it and writes the line after the handler returned; the
// handler fills it in its own goroutine, before that.
type Entry struct {
	ID        string // the request id, on every log line of the request
	keyPrefix string
	v1Status  int
}

type ctxKey struct{}

// NewContext returns ctx carrying e.
func NewContext(ctx context.Context, e *Entry) context.Context {
	return context.WithValue(ctx, ctxKey{}, e)
}

// FromContext is the Entry of ctx's request, or nil outside a request.
func FromContext(ctx context.Context) *Entry {
	e, _ := ctx.Value(ctxKey{}).(*Entry)
	return e
}

// SetKey records which key the caller presented, by KeyPrefix: never the
// key itself.
func SetKey(ctx context.Context, key string) {
	if e := FromContext(ctx); e != nil {
		e.keyPrefix = KeyPrefix(key)
	}
}

// SetV1Status records the status a v1 reply carries in its body (v1
// answers every request HTTP 200, D20).
func SetV1Status(ctx context.Context, status int) {
	if e := FromContext(ctx); e != nil {
		e.v1Status = status
	}
}

// KeyPrefix is the part of a key that may be logged, or "" for none. A
// v2 key, "drip_<8>_<32>", has a visible prefix "drip_<8>" that names it
// in key lists; of any other key (a v1 key is 48 hex characters) the
// first 6 characters, and only of a key long enough that they are a small
// part of it: a short string is likely all of a guess or a typo'd secret.
func KeyPrefix(key string) string {
	const v2Prefix = len("drip_") + 8
	if strings.HasPrefix(key, "drip_") && len(key) > v2Prefix+1 && key[v2Prefix] == '_' {
		return key[:v2Prefix]
	}
	if len(key) < 24 {
		return ""
	}
	return key[:6]
}

// KeyPrefix is the logged prefix of the request's key, "" when none.
func (e *Entry) KeyPrefix() string { return e.keyPrefix }

// V1Status is the status of the request's v1 reply body, 0 when not v1.
func (e *Entry) V1Status() int { return e.v1Status }

// Logger returns log with the request id added to each record logged with
// a request's context (the ...Context methods of slog.Logger). A logger
// already so wrapped is returned as it is.
func Logger(log *slog.Logger) *slog.Logger {
	if _, ok := log.Handler().(handler); ok {
		return log
	}
	return slog.New(handler{log.Handler()})
}

type handler struct{ next slog.Handler }

func (h handler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

func (h handler) Handle(ctx context.Context, r slog.Record) error {
	if e := FromContext(ctx); e != nil && e.ID != "" {
		r = r.Clone() // the caller's record stays as it was
		r.AddAttrs(slog.String("request_id", e.ID))
	}
	return h.next.Handle(ctx, r)
}

func (h handler) WithAttrs(as []slog.Attr) slog.Handler { return handler{h.next.WithAttrs(as)} }

func (h handler) WithGroup(name string) slog.Handler { return handler{h.next.WithGroup(name)} }
