package ratelimit

import (
	"context"
	"crypto/rand"
	"errors"
	"log/slog"
	"math"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dripfaucet/drip/internal/logtest"

	"github.com/go-redis/redis_rate/v10"
	"github.com/google/go-cmp/cmp"
)

// testRedisURL is the Redis the tests may use (D31), or skips t.
func testRedisURL(t *testing.T) string {
	t.Helper()
	u := os.Getenv("DRIP_TEST_REDIS_URL")
	if u == "" {
		t.Skip("DRIP_TEST_REDIS_URL not set: skipping the tests against Redis (set it, e.g. to redis://127.0.0.1:6379/0, to run them)")
	}
	return u
}

// testPrefix is a key prefix no other test or run shares.
func testPrefix() string {
	return redisPrefix + "test:" + rand.Text() + ":"
}

// newTestRedis is a Redis limiter whose keys live under prefix.
func newTestRedis(t *testing.T, url string, cfg Config, prefix string) *Redis {
	t.Helper()
	// A stall on a loaded machine must not turn into a fallback, which
	// would change the counts the tests check.
	r, err := newRedis(url, prefix, cfg, nil, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// TestRedisNodesShareBuckets: D31 — two processes with their own clients
// spend one bucket per key.
func TestRedisNodesShareBuckets(t *testing.T) {
	t.Parallel()
	url := testRedisURL(t)

	t.Run("spent on one node is spent on the other", func(t *testing.T) {
		t.Parallel()
		prefix := testPrefix()
		a := newTestRedis(t, url, Config{PerMinute: 1, Burst: 4}, prefix)
		b := newTestRedis(t, url, Config{PerMinute: 1, Burst: 4}, prefix)
		var got []Decision
		for _, l := range []Limiter{a, b, a, b, a, b} {
			d, err := l.Allow(context.Background(), "k")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, Decision{Allowed: d.Allowed, Remaining: d.Remaining, RetryAfter: min(d.RetryAfter, 1)})
		}
		want := []Decision{
			{Allowed: true, Remaining: 3}, {Allowed: true, Remaining: 2},
			{Allowed: true, Remaining: 1}, {Allowed: true, Remaining: 0},
			{RetryAfter: 1}, {RetryAfter: 1}, // refused, retry after > 0
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("alternating nodes (-want +got):\n%s", diff)
		}
	})

	t.Run("racing nodes admit one burst between them", func(t *testing.T) {
		t.Parallel()
		prefix := testPrefix()
		nodes := []Limiter{newTestRedis(t, url, Default, prefix), newTestRedis(t, url, Default, prefix)}
		start := time.Now()
		var wg sync.WaitGroup
		var admitted atomic.Int64
		for i := range 240 {
			wg.Go(func() {
				d, err := nodes[i%2].Allow(context.Background(), "k")
				if err != nil {
					t.Error(err)
				}
				if d.Allowed {
					admitted.Add(1)
				}
			})
		}
		wg.Wait()
		took := time.Since(start)
		if n, most := int(admitted.Load()), 120+int(took/time.Second); n < 120 || n > most {
			t.Fatalf("two nodes admitted %d of 240 in %v, want 120 between them (at most %d), not 240", n, took, most)
		}
	})
}

// TestRedisFallsBackWhileDown: when Redis stops answering, each node limits
// on its own rather than failing requests, warns once, and shares again
// when Redis is back.
func TestRedisFallsBackWhileDown(t *testing.T) {
	t.Parallel()
	target, err := url.Parse(testRedisURL(t))
	if err != nil {
		t.Fatal(err)
	}
	p := startProxy(t, target.Host)
	proxied := *target
	proxied.Host = p.addr()
	var logs logtest.Buffer
	r, err := NewRedis(proxied.String(), Config{PerMinute: 1, Burst: 5}, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.prefix = testPrefix()
	ctx := context.Background()

	ds, _ := take(t, r, "k", 2) // the shared bucket: 3 left
	if countAllowed(ds) != 2 || ds[1].Remaining != 3 {
		t.Fatalf("through Redis: %+v, want 2 admitted with 3 left", ds)
	}

	p.set(proxyDrop)
	ds, _ = take(t, r, "k", 7) // this node's own bucket, full
	for i, d := range ds {
		if allowed := i < 5; d.Allowed != allowed || allowed && d.Remaining < float64(4-i) || !allowed && d.RetryAfter <= 0 {
			t.Fatalf("request %d with Redis down: %+v, want the node's own bucket of 5", i+1, d)
		}
	}
	time.Sleep(redisRetry + 100*time.Millisecond) // Redis is tried, and fails, again
	if _, err := r.Allow(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(logs.String(), "level=WARN"); n != 1 {
		t.Fatalf("%d warnings for one outage, want 1 a minute:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), p.addr()) {
		t.Fatalf("the warning does not name the Redis address %s:\n%s", p.addr(), logs.String())
	}

	p.set(proxyUp)
	deadline := time.Now().Add(10 * time.Second)
	for {
		// The node's own bucket is spent; only Redis still has 3.
		d, err := r.Allow(ctx, "k")
		if err != nil {
			t.Fatal(err)
		}
		if d.Allowed {
			if d.Remaining != 2 {
				t.Fatalf("after Redis came back: %+v, want the shared bucket with 2 left", d)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("Redis is back but the limiter still answers on its own")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(logs.String(), "Redis answers again; rate limits are shared") {
		t.Fatalf("no word that Redis answers again:\n%s", logs.String())
	}
}

// TestRedisHangsOneProbe: while Redis hangs, one request at a time waits
// for it (up to the timeout); the others answer at once on their own.
func TestRedisHangsOneProbe(t *testing.T) {
	t.Parallel()
	target, err := url.Parse(testRedisURL(t))
	if err != nil {
		t.Fatal(err)
	}
	p := startProxy(t, target.Host)
	proxied := *target
	proxied.Host = p.addr()
	r, err := NewRedis(proxied.String(), Default, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.prefix = testPrefix()
	ctx := context.Background()
	// On a loaded machine the ping at start can miss its second, leaving
	// the limiter on its fallback for a while: wait until it uses Redis, so
	// that the first request below is the one that meets the hang (on the
	// pooled connection, which the hang holds silent).
	for deadline := time.Now().Add(10 * time.Second); r.downUntil.Load() != 0; {
		if time.Now().After(deadline) {
			t.Fatal("the limiter never reached Redis through the proxy")
		}
		time.Sleep(50 * time.Millisecond)
		r.Allow(ctx, "warm-up")
	}

	p.set(proxyHang)
	start := time.Now()
	if d, err := r.Allow(ctx, "k"); err != nil || !d.Allowed {
		t.Fatalf("first request with Redis hanging: %+v, %v; want admitted here", d, err)
	}
	if took := time.Since(start); took < redisTimeout/2 || took > 5*redisTimeout {
		t.Fatalf("first request with Redis hanging took %v, want about the timeout %v", took, redisTimeout)
	}

	// Once the wait is over, one request probes Redis and hangs...
	until := r.downUntil.Load()
	time.Sleep(time.Until(time.Unix(0, until)) + 10*time.Millisecond)
	probed := make(chan struct{})
	go func() {
		defer close(probed)
		r.Allow(ctx, "k")
	}()
	for r.downUntil.Load() == until {
		time.Sleep(time.Millisecond)
	}
	// ...while the others do not wait for it.
	ds, took := take(t, r, "k", 20)
	if n := countAllowed(ds); n != 20 || took > redisTimeout/2 {
		t.Fatalf("%d of 20 requests admitted in %v during a probe, want all at once", n, took)
	}
	select {
	case <-probed:
		t.Fatal("the probe returned before the others: the test did not hold Redis hanging")
	default:
	}
	<-probed
}

// TestRedisCallerGivesUp: a request whose context ends fails without
// counting as a Redis outage.
func TestRedisCallerGivesUp(t *testing.T) {
	t.Parallel()
	var logs logtest.Buffer
	r, err := NewRedis(testRedisURL(t), Config{PerMinute: 60, Burst: 5}, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.prefix = testPrefix()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r.Allow(ctx, "k"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Allow with a cancelled context: %v, want context.Canceled", err)
	}
	if r.downUntil.Load() != 0 || logs.String() != "" {
		t.Fatalf("a cancelled request counted as an outage; log:\n%s", logs.String())
	}
	if d, err := r.Allow(context.Background(), "k"); err != nil || !d.Allowed || d.Remaining != 4 {
		t.Fatalf("next request: %+v, %v; want admitted by Redis with 4 left", d, err)
	}
}

// TestNewRedisRefuses: a URL or a config that cannot be used is an error at
// start, and errors never show the URL's password.
func TestNewRedisRefuses(t *testing.T) {
	t.Parallel()
	closed := closedAddr(t)

	tests := []struct {
		name string
		url  string
		cfg  Config
		want string // in the error
	}{
		{"not a redis URL", "http://:s3cret@" + closed + "/0", Default, "invalid Redis URL"},
		{"bad port", "redis://:s3cret@127.0.0.1:port/0", Default, "invalid Redis URL"},
		{"no rate", "redis://" + closed, Config{PerMinute: 0, Burst: 5}, "must be positive"},
		{"no burst", "redis://" + closed, Config{PerMinute: 60, Burst: 0}, "must be positive"},
		{"NaN rate", "redis://" + closed, Config{PerMinute: math.NaN(), Burst: 5}, "must be positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, err := NewRedis(tt.url, tt.cfg, nil)
			if err == nil {
				r.Close()
				t.Fatal("NewRedis succeeded")
			}
			if !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "s3cret") {
				t.Fatalf("error %q: want it to say %q and not the password", err, tt.want)
			}
		})
	}
}

// TestGCRALimit: Config means the same on Redis as in memory: Burst is the
// capacity and requests are spaced exactly 60s/PerMinute apart.
func TestGCRALimit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cfg  Config
		want redis_rate.Limit
	}{
		{Default, redis_rate.Limit{Rate: 60, Period: time.Minute, Burst: 120}},
		{Config{PerMinute: 600, Burst: 5}, redis_rate.Limit{Rate: 600, Period: time.Minute, Burst: 5}},
		{Config{PerMinute: 0.5, Burst: 1}, redis_rate.Limit{Rate: 30, Period: time.Hour, Burst: 1}},
		{Config{PerMinute: 7.0 / 3, Burst: 2}, redis_rate.Limit{Rate: 140, Period: time.Hour, Burst: 2}},
		{Config{PerMinute: 1.0 / 1440, Burst: 1}, redis_rate.Limit{Rate: 1, Period: 24 * time.Hour, Burst: 1}},
		{Config{PerMinute: 0.0001, Burst: 1}, redis_rate.Limit{Rate: 1, Period: 10000 * time.Minute, Burst: 1}},
		{Config{PerMinute: 1e12, Burst: 1 << 40}, redis_rate.Limit{Rate: 1e12, Period: time.Minute, Burst: 1 << 40}},
	}
	for _, tt := range tests {
		got, err := gcraLimit(tt.cfg)
		if err != nil {
			t.Fatalf("%+v: %v", tt.cfg, err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%+v (-want +got):\n%s", tt.cfg, diff)
		}
	}
}

// proxy stands between a limiter and Redis, to take Redis away: it
// forwards connections, drops them, or accepts them and never answers.
type proxy struct {
	ln     net.Listener
	target string
	wg     sync.WaitGroup
	mu     sync.Mutex
	mode   proxyMode
	conns  map[net.Conn]bool
}

type proxyMode int

const (
	proxyUp   proxyMode = iota // forwards to Redis
	proxyDrop                  // closes every connection: Redis went away
	proxyHang                  // holds every connection silent: Redis hangs
)

func startProxy(t *testing.T, target string) *proxy {
	t.Helper()
	return startProxyAt(t, "127.0.0.1:0", target)
}

// startProxyAt is a proxy listening at addr.
func startProxyAt(t *testing.T, addr, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	p.wg.Go(p.accept)
	t.Cleanup(func() {
		ln.Close()
		p.set(proxyDrop)
		p.wg.Wait()
	})
	return p
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

// set switches the mode. A hang holds the open connections silent (what
// goes in is never forwarded, as when Redis stalls), so a client's pooled
// connection meets the hang too; a drop, or the end of a hang, closes what
// is open.
func (p *proxy) set(mode proxyMode) {
	p.mu.Lock()
	defer p.mu.Unlock()
	ending := p.mode == proxyHang && mode != proxyHang
	p.mode = mode
	if mode == proxyDrop || ending {
		for c := range p.conns {
			c.Close()
		}
		clear(p.conns)
	}
}

func (p *proxy) hung() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mode == proxyHang
}

// pipe copies src to dst, but swallows what arrives while the proxy hangs.
func (p *proxy) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && !p.hung() {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.wg.Go(func() { p.forward(c) })
	}
}

func (p *proxy) forward(c net.Conn) {
	switch p.track(c) {
	case proxyDrop:
		c.Close()
		return
	case proxyHang:
		return // closed when the mode changes
	}
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	if p.track(s) != proxyUp {
		c.Close()
		s.Close()
		return
	}
	done := make(chan struct{}, 2)
	go func() { p.pipe(s, c); done <- struct{}{} }()
	go func() { p.pipe(c, s); done <- struct{}{} }()
	<-done
	c.Close()
	s.Close()
	<-done
}

// track keeps c to close when the mode leaves proxyUp, unless the proxy
// drops connections, and says the mode.
func (p *proxy) track(c net.Conn) proxyMode {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mode != proxyDrop {
		p.conns[c] = true
	}
	return p.mode
}

// closedAddr is a local address where nothing listens.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestNewRedisErrorsNeverQuoteTheURL: a malformed URL is refused without
// any piece of it in the error, since the pieces can be the password.
func TestNewRedisErrorsNeverQuoteTheURL(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"redis://:S3cr/et@h:6379/0", "redis://:1234/S3cret@h:6379", "redis://u:S3cret@h:port/0", "S3cret"} {
		_, err := NewRedis(u, Default, nil)
		if err == nil {
			t.Errorf("NewRedis(%q): no error", u)
			continue
		}
		if strings.Contains(err.Error(), "S3cr") || strings.Contains(err.Error(), "1234") {
			t.Errorf("NewRedis(%q) error quotes the URL: %v", u, err)
		}
	}
}
