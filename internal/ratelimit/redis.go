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

	// redisTimeout bounds one decision, and the ping at start and Ping. Redis
	// answers a healthy request in well under a millisecond; a request that
	// waits longer is better served by the fallback than held up, since a
	// payout waits on it.
	redisTimeout = time.Second

	// redisRetry is how long requests skip Redis after it failed, so that an
	// outage costs one request the timeout once a second rather than every
	// request on every call.
	redisRetry = time.Second
)

// Redis is a Limiter shared by every drip process that uses the same Redis
// (D31, D40): GCRA, which keeps one timestamp per key and admits a fresh
// key's burst at once like Memory's token bucket.
//
// When Redis does not answer, at start or mid-run, Redis answers from a
// Memory limiter of this process instead of failing the request:
// availability over strict sharing. The limit only weakens to per node while
// Redis is down (each node gives a key its own bucket); refusing every
// payout, or refusing to start, because the rate limiter's store is
// unreachable would be worse. Once a second one request tries Redis again,
// and the first answer makes the limits shared again. The outage is logged
// as a warning at most once a minute, and its end once after that warning.
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

// NewRedis returns a limiter sharing its buckets through the Redis at url
// (redis://[user:password@]host:port/db, or rediss:// for TLS). A nil log
// discards. Keys live under "drip:rate:"; NewRedisPrefixed picks another
// namespace.
//
// It fails for a malformed URL, an invalid cfg, or a Redis that answers but
// refuses the URL's credentials or database. A Redis that does not answer
// within a second is no error: the limiter starts with per-node limits,
// logs a warning, and shares once Redis answers. The URL's timeout and
// retry settings are overridden, so that no request waits on Redis for
// more than a second.
func NewRedis(url string, cfg Config, log *slog.Logger) (*Redis, error) {
	return NewRedisPrefixed(url, redisPrefix, cfg, log)
}

// NewRedisPrefixed is NewRedis with keys under prefix, so that several
// deployments (each with its own database, whose key ids overlap) can
// share one Redis without sharing buckets.
func NewRedisPrefixed(url, prefix string, cfg Config, log *slog.Logger) (*Redis, error) {
	return newRedis(url, prefix, cfg, log, redisTimeout)
}

// newRedis is NewRedisPrefixed with every wait on Redis bounded by timeout.
func newRedis(url, prefix string, cfg Config, log *slog.Logger, timeout time.Duration) (*Redis, error) {
	limit, err := gcraLimit(cfg)
	if err != nil {
		return nil, err
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("ratelimit: invalid Redis URL: %w", urlError(err))
	}
	// A Redis that stalls or drops packets must cost a request at most
	// timeout before the fallback answers, whatever the URL's query says
	// (go-redis's defaults wait 5 s to dial, 5 s to read, 6 s for a pool
	// slot, and retry 3 times):
	//   - the request's deadline reaches the socket (ContextTimeoutEnabled);
	//     read and write timeouts bound the calls made without one;
	//   - go-redis finishes a dial in the background after the request gave
	//     up, holding a pool slot, so a dial gets the same bound and one
	//     attempt: the probe once every redisRetry is the retry;
	//   - no command is retried: the GCRA script spends a token, so a retry
	//     after a lost reply could count one request twice, and a failed
	//     decision has its answer in the fallback.
	opt.ContextTimeoutEnabled = true
	opt.DialTimeout = timeout
	opt.DialerRetries = 1
	opt.ReadTimeout = timeout
	opt.WriteTimeout = timeout
	opt.PoolTimeout = timeout
	opt.MaxRetries = -1 // go-redis's "none"; 0 means its default of 3
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &Redis{
		rdb:      redis.NewClient(opt),
		limit:    limit,
		prefix:   prefix,
		timeout:  timeout,
		fallback: NewMemory(cfg, nil),
		log:      log,
		addr:     opt.Addr,
	}
	r.gcra = redis_rate.NewLimiter(r.rdb)
	// The limiter would work without the ping at start, but the ping tells
	// the operator at once when Redis does not answer, spares the first requests a failing
	// dial each, and catches credentials or a database Redis will never
	// accept, which no wait cures. It holds serve up by at most timeout.
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := r.rdb.Ping(ctx).Err(); err != nil {
		if refused(err) {
			r.rdb.Close()
			return nil, fmt.Errorf("ratelimit: Redis at %s (db %d) refuses the connection: %w", opt.Addr, opt.DB, err)
		}
		r.failed(err)
	}
	return r, nil
}

// refused says whether Redis answered with a refusal that only a change of
// the URL cures: wrong credentials, no permission, no such database. Other
// answers (loading, too many clients) pass, as the network errors do.
func refused(err error) bool {
	return redis.IsAuthError(err) || redis.IsPermissionError(err) ||
		redis.HasErrorPrefix(err, "AUTH") || redis.HasErrorPrefix(err, "DB index")
}

// Ping checks that Redis answers now, for a readiness check: it fails when
// ctx ends or after the limiter's timeout (a second) without an answer. It
// leaves the limiter's fallback state and the log alone.
func (r *Redis) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	if err := r.rdb.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("ratelimit: Redis at %s does not answer: %w", r.addr, err)
	}
	return nil
}

// Close closes the connections to Redis.
func (r *Redis) Close() error {
	return r.rdb.Close()
}

// Allow takes one request from key's shared bucket, or from this process's
// bucket while Redis is unreachable. It fails only when ctx is done.
func (r *Redis) Allow(ctx context.Context, key string) (Decision, error) {
	return r.AllowN(ctx, key, 1)
}

// AllowN is Allow taking n requests at once.
func (r *Redis) AllowN(ctx context.Context, key string, n int) (Decision, error) {
	if until := r.downUntil.Load(); until != 0 {
		// Redis failed lately: one request probes it once the wait is over
		// (and moves the wait on, so that the others do not queue behind
		// the probe's timeout); the rest answer here.
		now := time.Now().UnixNano()
		if now < until || !r.downUntil.CompareAndSwap(until, now+int64(redisRetry)) {
			return r.fallback.AllowN(ctx, key, n)
		}
	}
	rctx, cancel := context.WithTimeout(ctx, r.timeout)
	res, err := r.gcra.AllowN(rctx, r.prefix+key, r.limit, n)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			// The caller gave up; that says nothing about Redis.
			return Decision{}, ctx.Err()
		}
		r.failed(err)
		return r.fallback.AllowN(ctx, key, n)
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
	r.log.Warn("Redis does not answer; rate limits are per node until it does", "addr", r.addr, "err", err)
}

func (r *Redis) recovered() {
	r.downUntil.Store(0)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.warned {
		r.warned = false
		r.log.Info("Redis answers again; rate limits are shared", "addr", r.addr)
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
