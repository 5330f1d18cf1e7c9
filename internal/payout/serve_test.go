package payout

import (
	"context"
	"testing"
	"time"

	"github.com/dripfaucet/drip/internal/gencache"
	"github.com/dripfaucet/drip/internal/ratelimit"
)

// A send served again because its cache generation moved (Serve) is
// counted once against each rate: the second service gets the first's
// decisions, and only a new request takes from the bucket again.
func TestServeCountsARequestOnce(t *testing.T) {
	lim := ratelimit.NewMemory(ratelimit.Config{PerMinute: 1, Burst: 1}, time.Now)
	services := 0
	_, err := Serve(context.Background(), true, func(ctx context.Context) (any, error) {
		services++
		for range 2 { // the caller IP's bucket and a refused key's charge alike
			if d, err := allowOnce(ctx, lim, "faucet:1", 1); err != nil || !d.Allowed {
				t.Fatalf("service %d: allowed %v, %v; want the request's one allowance", services, d.Allowed, err)
			}
		}
		if services == 1 {
			return nil, gencache.ErrStale // as the ledger answers a stale payment
		}
		return "paid", nil
	})
	if err != nil || services != 2 {
		t.Fatalf("Serve: %v after %d services, want served twice and answered", err, services)
	}
	if d, _ := allowOnce(context.Background(), lim, "faucet:1", 1); d.Allowed {
		t.Error("a new request was allowed from a bucket of one already taken")
	}
}
