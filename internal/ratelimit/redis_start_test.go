package ratelimit

import (
	"context"
	"log/slog"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/dripfaucet/drip/internal/logtest"

	"github.com/google/go-cmp/cmp"
)

// TestNewRedisStartsWithoutRedis: a Redis that does not answer at start is
// no error and holds the start up by at most the timeout; the limiter
// answers on its own and warns once, naming the address, never the
// password.
func TestNewRedisStartsWithoutRedis(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		addr    func(t *testing.T) string
		atMost  time.Duration // NewRedis's wait
		atLeast time.Duration
	}{
		{"nothing listens", closedAddr, redisTimeout / 2, 0},
		{"Redis hangs", func(t *testing.T) string {
			p := startProxy(t, closedAddr(t))
			p.set(proxyHang)
			return p.addr()
		}, 3 * redisTimeout, redisTimeout / 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			addr := tt.addr(t)
			var logs logtest.Buffer
			start := time.Now()
			r, err := NewRedis("redis://:s3cret@"+addr+"/0", Config{PerMinute: 1, Burst: 2}, slog.New(slog.NewTextHandler(&logs, nil)))
			took := time.Since(start)
			if err != nil {
				t.Fatalf("NewRedis: %v, want a limiter that answers on its own", err)
			}
			defer r.Close()
			if took > tt.atMost || took < tt.atLeast {
				t.Fatalf("NewRedis took %v, want between %v and %v", took, tt.atLeast, tt.atMost)
			}

			ds, _ := take(t, r, "k", 3)
			// The node's own bucket refills in between: Remaining is a fraction above whole.
			if !ds[0].Allowed || int(ds[0].Remaining) != 1 || !ds[1].Allowed || int(ds[1].Remaining) != 0 || ds[2].Allowed || ds[2].RetryAfter <= 0 {
				t.Fatalf("requests without Redis: %+v, want the node's own bucket of 2", ds)
			}
			out := logs.String()
			if n := strings.Count(out, "level=WARN"); n != 1 || strings.Count(out, "\n") != 1 {
				t.Fatalf("want exactly one warning, got:\n%s", out)
			}
			if !strings.Contains(out, `msg="Redis does not answer; rate limits are per node until it does"`) || !strings.Contains(out, "addr="+addr) {
				t.Fatalf("the warning does not say Redis at %s does not answer:\n%s", addr, out)
			}
			if strings.Contains(out, "s3cret") {
				t.Fatalf("the warning shows the password:\n%s", out)
			}
		})
	}
}

// TestRedisJoinsWhenRedisAnswers: nodes that started while Redis did not
// answer share their buckets once it does, and each says so once.
func TestRedisJoinsWhenRedisAnswers(t *testing.T) {
	t.Parallel()
	target, err := url.Parse(testRedisURL(t))
	if err != nil {
		t.Fatal(err)
	}
	addr := closedAddr(t)
	at := *target
	at.Host = addr
	prefix := testPrefix()
	var logs [2]logtest.Buffer
	var a, b *Redis
	for i, node := range []**Redis{&a, &b} {
		r, err := newRedis(at.String(), prefix, Config{PerMinute: 1, Burst: 5}, slog.New(slog.NewTextHandler(&logs[i], nil)), 10*time.Second)
		if err != nil {
			t.Fatalf("node %d: %v", i, err)
		}
		defer r.Close()
		*node = r
	}

	// Each node on its own bucket: b does not see what a spent.
	take(t, a, "k", 2)
	if ds, _ := take(t, b, "k", 1); !ds[0].Allowed || ds[0].Remaining != 4 {
		t.Fatalf("b before Redis answers: %+v, want its own full bucket (4 left)", ds[0])
	}

	startProxyAt(t, addr, target.Host) // Redis answers at addr from now on

	// rejoin takes requests from r until r logs that Redis answers again,
	// and returns the decision that found it answering.
	rejoin := func(name string, r *Redis, log *logtest.Buffer) Decision {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			d, err := r.Allow(context.Background(), "k")
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(log.String(), `msg="Redis answers again; rate limits are shared"`) {
				return d
			}
			if time.Now().After(deadline) {
				t.Fatalf("Redis answers, but %s still answers on its own:\n%s", name, log.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if d := rejoin("a", a, &logs[0]); !d.Allowed || d.Remaining != 4 {
		t.Fatalf("a's first request through Redis: %+v, want the fresh shared bucket (4 left)", d)
	}
	take(t, a, "k", 2) // shared bucket: 2 left
	if d := rejoin("b", b, &logs[1]); !d.Allowed || d.Remaining != 1 {
		t.Fatalf("b's first request through Redis: %+v, want the shared bucket a spent 3 of (1 left)", d)
	}
	if ds, _ := take(t, b, "k", 1); !ds[0].Allowed || ds[0].Remaining != 0 {
		t.Fatalf("b's last request: %+v, want admitted with 0 left", ds[0])
	}
	if ds, _ := take(t, a, "k", 1); ds[0].Allowed || ds[0].RetryAfter <= 0 {
		t.Fatalf("a after b emptied the shared bucket: %+v, want refused", ds[0])
	}

	for i := range logs {
		out := logs[i].String()
		if strings.Count(out, "level=WARN") != 1 || strings.Count(out, "level=INFO") != 1 || strings.Count(out, "\n") != 2 {
			t.Errorf("node %d: want one warning and one line that Redis answers again, got:\n%s", i, out)
		}
		if strings.Count(out, "addr="+addr) != 2 {
			t.Errorf("node %d: lines do not name the Redis address %s:\n%s", i, addr, out)
		}
	}
}

// TestNewRedisRefusesWhatRedisRejects: credentials or a database that Redis
// rejects are an error at start, since waiting will not cure them.
func TestNewRedisRefusesWhatRedisRejects(t *testing.T) {
	t.Parallel()
	target, err := url.Parse(testRedisURL(t))
	if err != nil {
		t.Fatal(err)
	}
	wrongUser := *target
	wrongUser.User = url.UserPassword("drip-test-nobody", "s3cret")
	noSuchDB := *target
	noSuchDB.Path = "/99999"

	for name, u := range map[string]string{"wrong credentials": wrongUser.String(), "no such database": noSuchDB.String()} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r, err := NewRedis(u, Default, nil)
			if err == nil {
				r.Close()
				t.Fatal("NewRedis succeeded")
			}
			if !strings.Contains(err.Error(), "refuses the connection") || strings.Contains(err.Error(), "s3cret") {
				t.Fatalf("error %q: want it to say Redis refuses, and not the password", err)
			}
		})
	}
}

// TestRedisPing: Ping says whether Redis answers now, within the timeout or
// the caller's deadline, and changes nothing else: no fallback, no log.
func TestRedisPing(t *testing.T) {
	t.Parallel()
	target, err := url.Parse(testRedisURL(t))
	if err != nil {
		t.Fatal(err)
	}
	p := startProxy(t, target.Host)
	proxied := *target
	proxied.Host = p.addr()
	var logs logtest.Buffer
	r, err := NewRedis(proxied.String(), Default, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	if err := r.Ping(context.Background()); err != nil {
		t.Fatalf("Ping with Redis up: %v", err)
	}

	p.set(proxyHang)
	start := time.Now()
	err = r.Ping(context.Background())
	if took := time.Since(start); err == nil || took > 3*redisTimeout {
		t.Fatalf("Ping with Redis hanging: %v after %v, want an error within about %v", err, took, redisTimeout)
	}
	if !strings.Contains(err.Error(), p.addr()) {
		t.Fatalf("Ping error %q does not name the address", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start = time.Now()
	if err := r.Ping(ctx); err == nil || time.Since(start) > redisTimeout/2 {
		t.Fatalf("Ping with a 50ms deadline: %v after %v, want an error at the deadline", err, time.Since(start))
	}

	if r.downUntil.Load() != 0 || logs.String() != "" {
		t.Fatalf("failed pings changed the limiter: downUntil %d, log:\n%s", r.downUntil.Load(), logs.String())
	}
}

// TestNewRedisBoundsEveryWait: whatever the URL's query asks, no wait on
// Redis outlasts the timeout and nothing is tried twice within a request.
func TestNewRedisBoundsEveryWait(t *testing.T) {
	t.Parallel()
	r, err := NewRedis("redis://"+closedAddr(t)+"/0?dial_timeout=30s&read_timeout=30s&write_timeout=30s&pool_timeout=30s&max_retries=5", Default, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	o := r.rdb.Options()
	type bounds struct {
		ContextTimeoutEnabled                               bool
		DialTimeout, ReadTimeout, WriteTimeout, PoolTimeout time.Duration
		DialerRetries, MaxRetries                           int
	}
	got := bounds{o.ContextTimeoutEnabled, o.DialTimeout, o.ReadTimeout, o.WriteTimeout, o.PoolTimeout, o.DialerRetries, o.MaxRetries}
	want := bounds{true, redisTimeout, redisTimeout, redisTimeout, redisTimeout, 1, 0}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("client options (-want +got):\n%s", diff)
	}
}
