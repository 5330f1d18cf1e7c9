package payout

import (
	"context"

	"github.com/dripfaucet/drip/internal/drip"
)

// Balance returns the caller's balance of currency.
func (s *Service) Balance(ctx context.Context, c *Caller, currency string) (int64, error) {
	coin, err := s.coins.Active(ctx, currency)
	if err != nil {
		return 0, err
	}
	return s.faucets.Balance(ctx, c.Faucet, coin.Symbol)
}

// Payouts lists the caller's latest payouts, newest first, of one currency
// or of all when currency is "". count is clamped to 1-100 (D27).
func (s *Service) Payouts(ctx context.Context, c *Caller, currency string, count int) ([]drip.Payout, error) {
	if currency != "" {
		coin, err := s.coins.Active(ctx, currency)
		if err != nil {
			return nil, err
		}
		currency = coin.Symbol
	}
	return s.faucets.Payouts(ctx, c.Faucet, currency, count)
}

// CheckAddress resolves a destination for currency to a payable user.
func (s *Service) CheckAddress(ctx context.Context, c *Caller, address, currency string) (*drip.User, error) {
	coin, err := s.coins.Active(ctx, currency)
	if err != nil {
		return nil, err
	}
	return s.payable(ctx, address, coin.Symbol)
}

// CheckAddressAnyCoin resolves a destination given without a coin to a
// payable user (issue 14): a wallet address in whichever coin it is
// linked for, which it returns ("" for a payout_user_hash, an email or a
// username).
func (s *Service) CheckAddressAnyCoin(ctx context.Context, c *Caller, address string) (*drip.User, string, error) {
	u, coin, err := s.users.ResolveAnyCoin(ctx, address)
	if err != nil {
		return nil, "", err
	}
	u, err = payableUser(u)
	return u, coin, err
}

// DefaultCoin is the coin of a read that names none (D28): the
// deployment's --default-currency, BTC unless set. Whether it is active is
// the read's question (410 when not).
func (s *Service) DefaultCoin() string { return s.defaultCoin }

// Currencies lists the active coins.
func (s *Service) Currencies(ctx context.Context, c *Caller) ([]drip.Coin, error) {
	return s.coins.ListActive(ctx)
}
