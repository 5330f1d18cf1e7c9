package client

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"time"
)

// RetryPolicy says when a v2 Send or read is tried again. Whatever it
// says, a Send's retries carry the first attempt's idempotency key, so
// they never pay twice (D35).
type RetryPolicy struct {
	// MaxAttempts counts every attempt, the first included; 1 never
	// retries.
	MaxAttempts int
	// MaxElapsed bounds the whole call: no wait is started that would
	// end later than this after the first attempt began.
	MaxElapsed time.Duration
	// BaseDelay is the first wait when the reply gives no Retry-After;
	// it doubles at each attempt, up to MaxDelay, with jitter.
	BaseDelay, MaxDelay time.Duration
	// RetryRateLimited also retries 429 rate_limited (the key's or the
	// caller IP's request rate) after its Retry-After. Off by default: a
	// caller that is over its rate usually has other work to shed.
	RetryRateLimited bool
}

// DefaultRetryPolicy is what a Client uses unless WithRetryPolicy says
// otherwise: 5 attempts within 30 seconds, waits from 200 ms to 5 s.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{MaxAttempts: 5, MaxElapsed: 30 * time.Second, BaseDelay: 200 * time.Millisecond, MaxDelay: 5 * time.Second}
}

// do runs attempt until it succeeds, fails in a way not worth retrying,
// or the policy or ctx ends it. It returns the last attempt's headers and
// error and the number of attempts made.
func (p RetryPolicy) do(ctx context.Context, attempt func() (http.Header, error)) (http.Header, int, error) {
	start := time.Now()
	for n := 1; ; n++ {
		h, err := attempt()
		if err == nil || n >= p.MaxAttempts || ctx.Err() != nil {
			return h, n, err
		}
		wait, retry := p.wait(err, n)
		if !retry || time.Since(start)+wait > p.MaxElapsed {
			return h, n, err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return h, n, fmt.Errorf("%w (waiting to retry after: %w)", ctx.Err(), err)
		case <-t.C:
		}
	}
}

// wait tells whether err is worth another attempt, and after how long.
func (p RetryPolicy) wait(err error, attempt int) (time.Duration, bool) {
	var e *Error
	if errors.As(err, &e) {
		retry := false
		switch e.HTTPStatus {
		case http.StatusServiceUnavailable:
			// price_unavailable waits on a price feed, not on a retry.
			retry = e.Code == CodeUnavailable || e.Code == CodeOutcomeUnknown || e.Code == ""
		case http.StatusBadGateway, http.StatusGatewayTimeout:
			retry = e.Code == "" // a proxy in front of drip
		case http.StatusTooManyRequests:
			retry = p.RetryRateLimited && e.Code == CodeRateLimited
		}
		if !retry {
			return 0, false
		}
		if e.RetryAfter > 0 {
			return e.RetryAfter, true
		}
		return p.backoff(attempt), true
	}
	// The request may or may not have reached drip: the connection failed,
	// timed out, or dropped before the whole reply was read.
	var ue *url.Error
	if errors.As(err, &ue) {
		return p.backoff(attempt), true
	}
	return 0, false
}

// backoff is the wait before attempt+1 without a Retry-After: BaseDelay
// doubled per attempt, capped, and between half and all of that.
func (p RetryPolicy) backoff(attempt int) time.Duration {
	d := p.BaseDelay
	for range attempt - 1 {
		if d >= p.MaxDelay {
			break
		}
		d *= 2
	}
	d = min(d, p.MaxDelay)
	if d <= 0 {
		return 0
	}
	return d/2 + rand.N(d/2+1)
}
