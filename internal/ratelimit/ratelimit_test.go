package ratelimit

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/dripfaucet/drip/internal/clocktest"
)

// TestMemoryBucket: D40 — bursts to 120, then 60 a minute, per key.
func TestMemoryBucket(t *testing.T) {
	t.Parallel()
	c := clocktest.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	m := NewMemory(Default, c.Now)
	ctx := context.Background()
	for i := 1; i <= 120; i++ {
		d, _ := m.Allow(ctx, "k")
		if !d.Allowed {
			t.Fatalf("request %d of the burst refused", i)
		}
		if want := float64(120 - i); d.Remaining != want {
			t.Fatalf("request %d: remaining %v, want %v", i, d.Remaining, want)
		}
	}
	d, _ := m.Allow(ctx, "k")
	if d.Allowed || d.RetryAfter <= 0 || d.RetryAfter > time.Second {
		t.Fatalf("121st request: %+v, want refused with a retry within 1s", d)
	}
	if other, _ := m.Allow(ctx, "other"); !other.Allowed {
		t.Fatal("another key shares the bucket")
	}
	c.Advance(time.Second)
	if d, _ := m.Allow(ctx, "k"); !d.Allowed {
		t.Fatal("one token did not refill after a second (60/minute)")
	}
	if d, _ := m.Allow(ctx, "k"); d.Allowed {
		t.Fatal("refilled more than one token in a second")
	}
	c.Advance(2 * time.Minute)
	if d, _ := m.Allow(ctx, "k"); !d.Allowed || d.Remaining != 119 {
		t.Fatalf("after two idle minutes: %+v, want a full bucket", d)
	}
}

// TestMemoryConcurrent: racing requests never take more than the burst.
func TestMemoryConcurrent(t *testing.T) {
	t.Parallel()
	c := clocktest.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	m := NewMemory(Config{PerMinute: 60, Burst: 50}, c.Now)
	var wg sync.WaitGroup
	var mu sync.Mutex
	allowed := 0
	for i := 0; i < 200; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if d, _ := m.Allow(context.Background(), "k"); d.Allowed {
				mu.Lock()
				allowed++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if allowed != 50 {
		t.Fatalf("%d allowed, want exactly the burst of 50", allowed)
	}
}
