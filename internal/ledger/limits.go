package ledger

import (
	"context"
	"strconv"
	"time"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
)

// checkLimits evaluates the faucet owner's send limits (D41) for p, counting
// the payouts already committed in each limit's window. It runs inside the
// payout's transaction after FaucetLock, so the count cannot go stale before
// the payout commits. A per-IP limit refuses with the claimer-IP code (v1
// 459, D26); every other limit with the send-limit code (v1 450).
func checkLimits(ctx context.Context, r store.Reader, p *Payment, now time.Time) (*drip.Error, error) {
	for _, lim := range p.Faucet.Limits {
		if lim.Coin != "" && lim.Coin != p.Coin {
			continue
		}
		params := &store.PayoutWindowParams{
			FaucetID: p.Faucet.ID,
			Since:    now.Add(-time.Duration(lim.WindowSeconds) * time.Second),
			Coin:     lim.Coin,
		}
		switch lim.Per {
		case drip.PerRecipient:
			params.RecipientID = p.Recipient.ID
		case drip.PerIP:
			if p.IPAddress == "" {
				continue // no claimer IP given: nothing to count it against
			}
			params.IPAddress = p.IPAddress
		}
		count, sum, err := r.PayoutWindow(ctx, params)
		if err != nil {
			return nil, err
		}
		overCount := lim.MaxCount > 0 && count+1 > lim.MaxCount
		overAmount := lim.MaxAmount > 0 && sum+p.Amount > lim.MaxAmount
		if !overCount && !overAmount {
			continue
		}
		window := strconv.FormatInt(lim.WindowSeconds, 10) + " seconds"
		if lim.Per == drip.PerIP {
			return drip.Errorf(drip.CodeClaimerRateLimit, "Rate limited: this claimer IP has reached the faucet's limit for %s; retry later.", window), nil
		}
		return drip.Errorf(drip.CodeSendLimit, "Send limit reached: the faucet's %s limit for %s is used up; retry later.", lim.Per, window), nil
	}
	return nil, nil
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
