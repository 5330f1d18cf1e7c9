package ratelimit

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// newLimiterFunc builds a fresh Limiter of one implementation: its keys
// share nothing with any other limiter the function returned.
type newLimiterFunc func(t *testing.T, cfg Config) Limiter

// testLimiter is what every Limiter must do (D40), checked against the real
// clock so that Memory and Redis answer the same table: Memory always, Redis
// when DRIP_TEST_REDIS_URL is set. Where refill could change an answer on a
// slow machine, the bound widens by what the measured time could refill.
func testLimiter(t *testing.T, newLimiter newLimiterFunc) {
	tests := []struct {
		name string
		run  func(t *testing.T, newLimiter newLimiterFunc)
	}{
		{"fresh key admits exactly the burst", testBurst},
		{"refused request says when to retry", testRetryAfter},
		{"keys have their own buckets", testKeys},
		{"bucket refills at the configured rate", testRefill},
		{"racing requests take no more than the burst", testRacing},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.run(t, newLimiter)
		})
	}
}

func TestMemoryConformance(t *testing.T) {
	t.Parallel()
	testLimiter(t, func(t *testing.T, cfg Config) Limiter { return NewMemory(cfg, nil) })
}

func TestRedisConformance(t *testing.T) {
	t.Parallel()
	url := testRedisURL(t)
	testLimiter(t, func(t *testing.T, cfg Config) Limiter { return newTestRedis(t, url, cfg, testPrefix()) })
}

func testBurst(t *testing.T, newLimiter newLimiterFunc) {
	l := newLimiter(t, Default) // 60 a minute, bursts to 120
	ds, took := take(t, l, "k", 240)
	admitted := countAllowed(ds)
	// One token a second: only a machine that needs more than a second for
	// 240 requests may see refill.
	if most := 120 + int(took/time.Second); admitted < 120 || admitted > most {
		t.Fatalf("%d of 240 instantaneous requests admitted in %v, want 120 (at most %d)", admitted, took, most)
	}
	for i, d := range ds[:120] {
		if !d.Allowed {
			t.Fatalf("request %d of the burst refused: %+v", i+1, d)
		}
		if want := float64(119 - i); took < time.Second && (d.Remaining < want || d.Remaining >= want+1) {
			t.Fatalf("request %d: remaining %v, want %v (the bucket's level after it)", i+1, d.Remaining, want)
		}
	}
}

func testRetryAfter(t *testing.T, newLimiter newLimiterFunc) {
	l := newLimiter(t, Config{PerMinute: 6, Burst: 3}) // one every 10s
	ds, _ := take(t, l, "k", 4)
	d := ds[3]
	if d.Allowed || d.Remaining != 0 {
		t.Fatalf("4th request with a burst of 3: %+v, want refused with nothing remaining", d)
	}
	if d.RetryAfter <= 0 || d.RetryAfter > 10*time.Second {
		t.Fatalf("4th request: retry after %v, want within (0, 10s] at 6 a minute", d.RetryAfter)
	}
}

func testKeys(t *testing.T, newLimiter newLimiterFunc) {
	l := newLimiter(t, Config{PerMinute: 1, Burst: 3})
	if ds, _ := take(t, l, "a", 4); ds[3].Allowed {
		t.Fatalf("4th request on a with a burst of 3 admitted: %+v", ds[3])
	}
	d, err := l.Allow(context.Background(), "b")
	if err != nil {
		t.Fatal(err)
	}
	if !d.Allowed || d.Remaining < 2 || d.Remaining >= 3 {
		t.Fatalf("first request on b after a spent a: %+v, want admitted with 2 remaining", d)
	}
}

func testRefill(t *testing.T, newLimiter newLimiterFunc) {
	const interval = 100 * time.Millisecond // 600 a minute
	l := newLimiter(t, Config{PerMinute: 600, Burst: 5})
	start := time.Now()
	ds, _ := take(t, l, "k", 6)
	spent := time.Now()
	burst := countAllowed(ds)
	if burst != 5 && spent.Sub(start) < interval {
		t.Fatalf("%d of 6 requests admitted with a burst of 5", burst)
	}
	time.Sleep(250 * time.Millisecond)
	waited := time.Since(spent)
	ds, _ = take(t, l, "k", 6)
	// Requests admitted until the first refusal: at least what the wait
	// refilled, at most what the whole span could refill beyond what the
	// burst took (and one more, for rounding on either side).
	n := 0
	for _, d := range ds {
		if !d.Allowed {
			break
		}
		n++
	}
	least := min(5, int(waited/interval))
	most := min(5, 5-burst+int(time.Since(start)/interval)+1)
	if n < least || n > most {
		t.Fatalf("%d admitted after waiting %v at one per %v, want %d to %d", n, waited, interval, least, most)
	}
}

func testRacing(t *testing.T, newLimiter newLimiterFunc) {
	l := newLimiter(t, Config{PerMinute: 60, Burst: 50})
	start := time.Now()
	var wg sync.WaitGroup
	var admitted atomic.Int64
	for range 200 {
		wg.Go(func() {
			d, err := l.Allow(context.Background(), "k")
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
	if n, most := int(admitted.Load()), 50+int(took/time.Second); n < 50 || n > most {
		t.Fatalf("%d of 200 racing requests admitted in %v, want the burst of 50 (at most %d)", n, took, most)
	}
}

// take sends n requests for key one after another and says how long they
// took, for bounds that allow for refill on a slow machine.
func take(t *testing.T, l Limiter, key string, n int) ([]Decision, time.Duration) {
	t.Helper()
	start := time.Now()
	ds := make([]Decision, n)
	for i := range ds {
		d, err := l.Allow(context.Background(), key)
		if err != nil {
			t.Fatalf("request %d: %v", i+1, err)
		}
		ds[i] = d
	}
	return ds, time.Since(start)
}

func countAllowed(ds []Decision) int {
	n := 0
	for _, d := range ds {
		if d.Allowed {
			n++
		}
	}
	return n
}
