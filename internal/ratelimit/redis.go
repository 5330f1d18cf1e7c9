package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
)

const (
	// redisPrefix keeps drip's buckets apart from anything else in the
	// database (redis_rate puts its own "rate:" in front of it).
	redisPrefix = "drip:rate:"

	// redisTimeout bounds one decision. Redis answers a healthy request in
	// well under a millisecond; a request that waits longer is better served
	// by the fallback than held up, since a payout waits on it.
	redisTimeout = time.Second

	// redisRetry is how long requests skip Redis after it failed, so that an
	// outage costs one request the timeout once a second rather than every
	// request on every call.
	redisRetry = time.Second

	// pingTimeout bounds the check at start.
	pingTimeout = 5 * time.Second
)

// Redis is a Limiter shared by every drip process that uses the same Redis
// (D31, D40): GCRA, which keeps one timestamp per key and admits a fresh
// key's burst at once like Memory's token bucket.
//
// When Redis fails mid-run, Redis answers from a Memory limiter of this
// process instead of failing the request: availability over strict sharing.
// The limit only weakens to per node while Redis is down (each node gives a
// key its own bucket); refusing every payout because the rate limiter's
// store is unreachable would be worse. The outage is logged as a warning at
// most once a minute.
type Redis struct {
	rdb      *redis.Client
	gcra     *redis_rate.Limiter
	limit    redis_rate.Limit
	prefix   string
	timeout  time.Duration
	fallback *Memory
	log      *slog.Logger
	addr     string // host:port for logs; never the URL, which may hold a password

	// downUntil is when to try Redis again (Unix nanoseconds), 0 while it
	// answers; it stays set past that time until Redis answers again.
	downUntil atomic.Int64
	mu        sync.Mutex // guards lastWarn and warned
	lastWarn  time.Time
	warned    bool // a warning went out during the current outage
}

var _ Limiter = (*Redis)(nil)

// NewRedis connects to the Redis at url (redis://[user:password@]host:port/db,
// or rediss:// for TLS) and checks once that it answers. A nil log discards.
// Keys live under "drip:rate:"; NewRedisPrefixed picks another namespace.
func NewRedis(url string, cfg Config, log *slog.Logger) (*Redis, error) {
	return NewRedisPrefixed(url, redisPrefix, cfg, log)
}

// NewRedisPrefixed is NewRedis with keys under prefix, so that several
// deployments (each with its own database, whose key ids overlap) can
// share one Redis without sharing buckets.
func NewRedisPrefixed(url, prefix string, cfg Config, log *slog.Logger) (*Redis, error) {
	limit, err := gcraLimit(cfg)
	if err != nil {
		return nil, err
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("ratelimit: invalid Redis URL: %w", urlError(err))
	}
	// Deadlines of the context reach the socket, so redisTimeout holds
	// whatever the URL sets for retries and read timeouts.
	opt.ContextTimeoutEnabled = true
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &Redis{
		rdb:      redis.NewClient(opt),
		limit:    limit,
		prefix:   prefix,
		timeout:  redisTimeout,
		fallback: NewMemory(cfg, nil),
		log:      log,
		addr:     opt.Addr,
	}
	r.gcra = redis_rate.NewLimiter(r.rdb)
	ctx, cancel := context.WithTimeout(context.Background(), pingTimeout)
	defer cancel()
	if err := r.rdb.Ping(ctx).Err(); err != nil {
		r.rdb.Close()
		return nil, fmt.Errorf("ratelimit: Redis at %s (db %d) does not answer: %w", opt.Addr, opt.DB, err)
	}
	return r, nil
}

// Close closes the connections to Redis.
func (r *Redis) Close() error {
	return r.rdb.Close()
}

// Allow takes one request from key's shared bucket, or from this process's
// bucket while Redis is unreachable. It fails only when ctx is done.
func (r *Redis) Allow(ctx context.Context, key string) (Decision, error) {
	if until := r.downUntil.Load(); until != 0 {
		// Redis failed lately: one request probes it once the wait is over
		// (and moves the wait on, so that the others do not queue behind
		// the probe's timeout); the rest answer here.
		now := time.Now().UnixNano()
		if now < until || !r.downUntil.CompareAndSwap(until, now+int64(redisRetry)) {
			return r.fallback.Allow(ctx, key)
		}
	}
	rctx, cancel := context.WithTimeout(ctx, r.timeout)
	res, err := r.gcra.Allow(rctx, r.prefix+key, r.limit)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			// The caller gave up; that says nothing about Redis.
			return Decision{}, ctx.Err()
		}
		r.failed(err)
		return r.fallback.Allow(ctx, key)
	}
	if r.downUntil.Load() != 0 {
		r.recovered()
	}
	if res.Allowed == 0 {
		// GCRA refuses only while the next request is in the future, but the
		// float seconds it reports may round to zero.
		return Decision{RetryAfter: max(res.RetryAfter, time.Millisecond)}, nil
	}
	return Decision{Allowed: true, Remaining: float64(res.Remaining)}, nil
}

func (r *Redis) failed(err error) {
	now := time.Now()
	r.downUntil.Store(now.Add(redisRetry).UnixNano())
	r.mu.Lock()
	defer r.mu.Unlock()
	if now.Sub(r.lastWarn) < time.Minute {
		return
	}
	r.lastWarn, r.warned = now, true
	r.log.Warn("rate limits are per node: Redis does not answer", "addr", r.addr, "err", err)
}

func (r *Redis) recovered() {
	r.downUntil.Store(0)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.warned {
		r.warned = false
		r.log.Info("rate limits are shared again: Redis answers", "addr", r.addr)
	}
}

// gcraLimit expresses cfg in redis_rate's terms. GCRA spaces requests
// Period/Rate apart and lets a fresh key take Burst at once, so Burst is the
// capacity as in Memory. Rate is whole, so a fractional PerMinute takes the
// first of a minute, an hour or a day over which it is whole (0.5 a minute
// is 30 an hour), and otherwise one request per exact interval.
func gcraLimit(cfg Config) (redis_rate.Limit, error) {
	if !(cfg.PerMinute > 0) || math.IsInf(cfg.PerMinute, 0) || cfg.Burst < 1 {
		return redis_rate.Limit{}, fmt.Errorf("ratelimit: rate %v a minute with burst %d: both must be positive", cfg.PerMinute, cfg.Burst)
	}
	for _, period := range []time.Duration{time.Minute, time.Hour, 24 * time.Hour} {
		n := cfg.PerMinute * period.Minutes()
		if whole := math.Round(n); whole >= 1 && whole <= maxRate && math.Abs(n-whole) <= 1e-9*whole {
			return redis_rate.Limit{Rate: int(whole), Period: period, Burst: cfg.Burst}, nil
		}
	}
	interval := time.Duration(math.Round(float64(time.Minute) / cfg.PerMinute))
	if interval <= 0 {
		return redis_rate.Limit{}, fmt.Errorf("ratelimit: rate %v a minute is too high for Redis", cfg.PerMinute)
	}
	return redis_rate.Limit{Rate: 1, Period: interval, Burst: cfg.Burst}, nil
}

// maxRate is the largest whole rate that int and float64 both hold exactly.
const maxRate = float64(min(math.MaxInt, 1<<53))

// urlError says what is wrong with a Redis URL without quoting any of it:
// the parsers' messages quote pieces of the URL ("invalid port \":S3cr\""),
// and a password with a '/' or ':' in it shows up in those pieces.
func urlError(error) error {
	return errors.New("write it as redis://[user:password@]host:port/db (or rediss://), with special characters of the password percent-encoded")
}
