package payout

import (
	"context"
	"errors"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/ledger"
	"github.com/dripfaucet/drip/internal/price"
)

// The daily USD cap of a send key (D36), priced at send time (D60).

// spend prices a send of amount of coin for a key with a daily USD cap
// (D36). Without a fresh price the send is refused: the cap fails closed.
func (s *Service) spend(ctx context.Context, k *drip.Key, coin string, amount int64) (*ledger.Spend, error) {
	if s.prices == nil {
		return nil, drip.Errorf(drip.CodePriceUnavailable, "No USD price source is configured, so a capped key cannot send.")
	}
	q, err := s.prices.Quote(ctx, coin)
	if errors.Is(err, price.ErrUnavailable) {
		return nil, drip.Errorf(drip.CodePriceUnavailable, "No fresh USD price for %s: capped sends are paused until one arrives.", coin)
	}
	if err != nil {
		return nil, err
	}
	micros := price.MicrosUp(price.USDValue(amount, q))
	if micros > k.DailyUSDCapMicros {
		return nil, ledger.DailyCapReached()
	}
	return &ledger.Spend{KeyID: k.ID, Micros: micros, CapMicros: k.DailyUSDCapMicros}, nil
}
