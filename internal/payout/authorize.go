package payout

import (
	"context"
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
	c, err := s.Authorize(ctx, f, callerIP, "key:"+strconv.FormatInt(k.ID, 10))
	if err != nil {
		return nil, err
	}
	c.Key = k
	return c, nil
}
