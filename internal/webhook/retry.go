package webhook

import (
	"math/rand/v2"
	"time"
)

// Timeout bounds one attempt, from dialling to the end of the reply's
// status line: an answer later than this is a failure (D52).
const Timeout = 15 * time.Second

// gaps are the waits after the 1st, 2nd, ... failed attempt (D52).
var gaps = [...]time.Duration{
	5 * time.Second, 5 * time.Minute, 30 * time.Minute,
	2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour,
}

// MaxAttempts is how many times a delivery is tried: once, then once
// after each gap of D52. After the last, the delivery is failed.
const MaxAttempts = len(gaps) + 1

// Jitter is how far a wait may stray from its gap, as a fraction: each
// wait is uniform in [gap×(1-Jitter), gap×(1+Jitter)], so deliveries
// failed together (a receiver down for a while) do not all come back in
// the same second, and none comes back sooner than 90% of its gap.
const Jitter = 0.10

// NextAttempt is when to try a delivery again after its attempt number
// attempt (1 for the first) failed at now, and true; or false when that
// was the last attempt and the delivery has failed. rnd gives the jitter,
// a value in [0, 1) (math/rand/v2's Float64 when nil; tests pass a fixed
// one). An attempt number below 1 (none made yet) is due at now.
func NextAttempt(attempt int, now time.Time, rnd func() float64) (time.Time, bool) {
	if attempt < 1 {
		return now, true
	}
	if attempt > len(gaps) {
		return time.Time{}, false
	}
	if rnd == nil {
		rnd = rand.Float64
	}
	r := min(max(rnd(), 0), 1)
	gap := gaps[attempt-1]
	return now.Add(time.Duration(float64(gap) * (1 - Jitter + 2*Jitter*r))), true
}

// Success reports whether a reply's HTTP status acknowledges a delivery:
// any 2xx (D52). Redirects are failures: they are not followed (D53).
func Success(status int) bool { return status >= 200 && status <= 299 }
