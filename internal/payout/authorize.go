package payout

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/dripfaucet/drip/internal/drip"
)

// v2 keys (D14): what the v2 interface and the tool server authorize.

// AuthorizeV2 authorizes a v2 request made with a Bearer secret from
// callerIP for an operation that needs one of scopes: the key must be live
// and allow the IP (D14), carry one of the scopes, and then its faucet
// passes Authorize with the key's own request-rate bucket (D40). The scope
// is judged before the bucket is touched, so a refused key costs nothing.
func (s *Service) AuthorizeV2(ctx context.Context, secret string, callerIP netip.Addr, scopes ...drip.Scope) (*Caller, error) {
	if err := s.limitCaller(ctx, callerIP); err != nil {
		return nil, err
	}
	k, err := s.keys.Authenticate(ctx, secret, callerIP)
	if err != nil {
		s.refusedKey(ctx, callerIP, err)
		return nil, err
	}
	if !slices.ContainsFunc(scopes, k.Has) {
		names := make([]string, len(scopes))
		for i, sc := range scopes {
			names[i] = string(sc)
		}
		return nil, drip.Errorf(drip.CodeInsufficientScope, "This key lacks the %s scope this operation needs.", strings.Join(names, " or "))
	}
	f, err := s.faucets.Get(ctx, k.FaucetID)
	if err != nil {
		return nil, err
	}
	c, err := s.Authorize(ctx, f, callerIP, keyBucket(k))
	if err != nil {
		return nil, err
	}
	c.Key = k
	return c, nil
}

// keyBucket names a v2 key's request-rate bucket (D40).
func keyBucket(k *drip.Key) string { return "key:" + strconv.FormatInt(k.ID, 10) }

// BatchCost is what a batch of n items costs in its key's request rate
// beside the request itself, which authorization took (D61): one request
// for every 10 items or part of 10, so a batch of 500 costs 51.
func BatchCost(n int) int { return (n + 9) / 10 }

// ChargeBatch takes BatchCost(n) more requests from the bucket of c's v2
// key, all or none: a key that has not that many left is refused the whole
// batch with rate_limited (D61), before any item is judged.
func (s *Service) ChargeBatch(ctx context.Context, c *Caller, n int) error {
	if c.Key == nil {
		return errors.New("payout: a batch needs a v2 key")
	}
	d, err := s.limiter.AllowN(ctx, keyBucket(c.Key), BatchCost(n))
	if err != nil {
		return err
	}
	if !d.Allowed {
		s.obs.RateLimited(false)
		e := drip.Errorf(drip.CodeRateLimited, "Rate limited: a batch of %d items counts as %d requests, more than this key has left; retry in %d seconds.",
			n, 1+BatchCost(n), int(d.RetryAfter.Seconds())+1)
		e.RetryAfter = d.RetryAfter
		return e
	}
	c.RateRemaining = d.Remaining
	return nil
}
