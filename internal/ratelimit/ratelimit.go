// Package ratelimit enforces the request rate of keys (D40): a token bucket
// refilling 60 a minute with room for bursts of 120. Memory holds it for one
// node; a shared implementation can stand behind the same interface.
package ratelimit

import (
	"context"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Decision is the outcome of one request against a key's bucket.
type Decision struct {
	Allowed bool
	// Remaining is how many requests the key may still make at once: the
	// bucket's level after this request (D24).
	Remaining float64
	// RetryAfter is how long until one request is allowed again, when refused.
	RetryAfter time.Duration
}

// Limiter takes requests from a key's bucket.
type Limiter interface {
	// Allow takes one request.
	Allow(ctx context.Context, key string) (Decision, error)
	// AllowN takes n requests at once: what a request costs that weighs
	// more than one (a refused key costs its caller's IP more, D29).
	AllowN(ctx context.Context, key string, n int) (Decision, error)
}

// Config is a bucket's shape.
type Config struct {
	PerMinute float64 // refill rate
	Burst     int     // capacity
}

// Default is D40: 60 per minute, bursts to 120.
var Default = Config{PerMinute: 60, Burst: 120}

// DefaultCaller is the request rate of one caller IP (D29): far above what
// one faucet's key may make (D40), so a server paying for several faucets
// is not slowed, and low enough that guessing keys, each refused key
// costing 11 requests, stops after about 55 tries and then runs at about
// 5 a second.
var DefaultCaller = Config{PerMinute: 3000, Burst: 600}

// Memory is a Limiter for one process.
type Memory struct {
	cfg   Config
	now   func() time.Time
	mu    sync.Mutex
	keys  map[string]*rate.Limiter
	sweep time.Time
}

func NewMemory(cfg Config, now func() time.Time) *Memory {
	if now == nil {
		now = time.Now
	}
	return &Memory{cfg: cfg, now: now, keys: map[string]*rate.Limiter{}}
}

func (m *Memory) Allow(ctx context.Context, key string) (Decision, error) {
	return m.AllowN(ctx, key, 1)
}

func (m *Memory) AllowN(_ context.Context, key string, n int) (Decision, error) {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.forgetFull(now)
	l, ok := m.keys[key]
	if !ok {
		l = rate.NewLimiter(rate.Limit(m.cfg.PerMinute/60), m.cfg.Burst)
		m.keys[key] = l
	}
	// A cost above the capacity could never be paid: it takes the whole
	// bucket instead.
	r := l.ReserveN(now, min(n, m.cfg.Burst))
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return Decision{Allowed: false, Remaining: 0, RetryAfter: d}, nil
	}
	return Decision{Allowed: true, Remaining: max(0, l.TokensAt(now))}, nil
}

// forgetFull drops, once a minute, buckets that have refilled completely:
// a new bucket is the same as a full one, so memory stays bounded by the
// keys active in the last few minutes.
func (m *Memory) forgetFull(now time.Time) {
	if now.Sub(m.sweep) < time.Minute {
		return
	}
	m.sweep = now
	for k, l := range m.keys {
		if l.TokensAt(now) >= float64(m.cfg.Burst) {
			delete(m.keys, k)
		}
	}
}
