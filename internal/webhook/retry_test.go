package webhook_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/dripfaucet/drip/internal/webhook"
)

// schedule is D52's, written out here rather than read from the package.
var schedule = []time.Duration{
	5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour,
}

func fixed(r float64) func() float64 { return func() float64 { return r } }

// TestNextAttemptSchedule: after attempt n fails, the next comes D52's
// n-th gap later, moved by at most ±10% (exactly the gap at the middle
// of the jitter, 90% of it at its bottom, just under 110% at its top);
// after the 8th attempt, the delivery has failed.
func TestNextAttemptSchedule(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
	if webhook.MaxAttempts != 8 {
		t.Errorf("MaxAttempts = %d, want 8: the first and 7 retries", webhook.MaxAttempts)
	}
	for i, gap := range schedule {
		attempt := i + 1
		for _, tc := range []struct {
			r    float64
			want time.Duration
		}{
			{0.5, gap},
			{0, gap - gap/10},
			{0.999999999, gap + gap/10},
			{-3, gap - gap/10}, // a source out of range is held to it
			{7, gap + gap/10},
		} {
			next, ok := webhook.NextAttempt(attempt, now, fixed(tc.r))
			if !ok {
				t.Fatalf("attempt %d: no next attempt", attempt)
			}
			if d := next.Sub(now) - tc.want; d < -time.Millisecond || d > time.Millisecond {
				t.Errorf("attempt %d, jitter %v: next after %v, want %v", attempt, tc.r, next.Sub(now), tc.want)
			}
		}
	}
	for _, attempt := range []int{8, 9, 100} {
		if next, ok := webhook.NextAttempt(attempt, now, fixed(0.5)); ok || !next.IsZero() {
			t.Errorf("attempt %d: next at %v, %v; want none (failed)", attempt, next, ok)
		}
	}
	if next, ok := webhook.NextAttempt(0, now, fixed(0.9)); !ok || !next.Equal(now) {
		t.Errorf("no attempt yet: next at %v, %v; want now", next, ok)
	}
}

// TestNextAttemptJitterRange: with a real random source, every wait is
// within ±10% of its gap, never below 90%, and the waits spread (they are
// not all one value).
func TestNextAttemptJitterRange(t *testing.T) {
	t.Parallel()
	now := time.Unix(1773500966, 0)
	rnd := rand.New(rand.NewPCG(1, 2))
	for i, gap := range schedule {
		lo, hi := gap-gap/10, gap+gap/10
		seen := map[time.Duration]bool{}
		minSeen, maxSeen := hi, lo
		for range 2000 {
			next, ok := webhook.NextAttempt(i+1, now, rnd.Float64)
			d := next.Sub(now)
			if !ok || d < lo || d > hi {
				t.Fatalf("attempt %d: wait %v, %v; want within [%v, %v]", i+1, d, ok, lo, hi)
			}
			seen[d] = true
			minSeen, maxSeen = min(minSeen, d), max(maxSeen, d)
		}
		// 2000 uniform draws reach within 1% of the range's ends.
		if len(seen) < 1000 || minSeen > lo+gap/500 || maxSeen < hi-gap/500 {
			t.Errorf("attempt %d: %d distinct waits from %v to %v; want them spread over [%v, %v]", i+1, len(seen), minSeen, maxSeen, lo, hi)
		}
	}
	// nil uses math/rand/v2, within the same bounds.
	if next, ok := webhook.NextAttempt(2, now, nil); !ok || next.Sub(now) < 270*time.Second || next.Sub(now) > 330*time.Second {
		t.Errorf("nil source: next after %v, %v; want 5 min ±10%%", next.Sub(now), ok)
	}
}

// TestSuccess: any 2xx acknowledges a delivery; a redirect, a client or
// server error, or no status does not.
func TestSuccess(t *testing.T) {
	t.Parallel()
	for status, want := range map[int]bool{
		200: true, 201: true, 202: true, 204: true, 299: true,
		0: false, 100: false, 199: false, 300: false, 301: false, 302: false, 304: false, 307: false,
		400: false, 401: false, 404: false, 410: false, 429: false, 500: false, 502: false, 503: false,
	} {
		if got := webhook.Success(status); got != want {
			t.Errorf("Success(%d) = %v, want %v", status, got, want)
		}
	}
	if webhook.Timeout != 15*time.Second {
		t.Errorf("Timeout = %v, want 15 s (D52)", webhook.Timeout)
	}
}
