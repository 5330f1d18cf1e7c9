// Package coin is the catalogue of coins: which exist, which are active, and
// the validation of a currency given by a caller.
package coin

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
)

// cacheFor is how long the coin set is reused before it is read again.
// Every send checks its coin, and the set changes only when an operator
// enables or disables a coin: a change made here applies at once, one made
// by another process (drip admin, another node) within this time.
const cacheFor = time.Second

// Catalog reads and changes the coin set.
type Catalog struct {
	store store.Store
	now   func() time.Time
	cache atomic.Pointer[cached]
}

type cached struct {
	coins []drip.Coin
	at    time.Time
}

func NewCatalog(st store.Store, now func() time.Time) *Catalog {
	if now == nil {
		now = time.Now
	}
	return &Catalog{store: st, now: now}
}

// List returns every coin, active or not, in display order. The slice is
// shared: callers must not change it.
func (c *Catalog) List(ctx context.Context) ([]drip.Coin, error) {
	if hit := c.cache.Load(); hit != nil {
		if age := c.now().Sub(hit.at); age >= 0 && age < cacheFor {
			return hit.coins, nil
		}
	}
	coins, err := c.store.CoinList(ctx)
	if err != nil {
		return nil, err
	}
	c.cache.Store(&cached{coins: coins, at: c.now()})
	return coins, nil
}

// ListActive returns the coins that can be used now.
func (c *Catalog) ListActive(ctx context.Context) ([]drip.Coin, error) {
	all, err := c.List(ctx)
	active := make([]drip.Coin, 0, len(all))
	for _, coin := range all {
		if coin.Active {
			active = append(active, coin)
		}
	}
	return active, err
}

// Active returns the active coin of this symbol, in any case (D28): "btc"
// is BTC. A disabled coin is not active.
func (c *Catalog) Active(ctx context.Context, symbol string) (*drip.Coin, error) {
	symbol = drip.Symbol(symbol)
	all, err := c.List(ctx)
	if err != nil {
		return nil, err
	}
	for _, coin := range all {
		if coin.Symbol == symbol && coin.Active {
			return &coin, nil
		}
	}
	if symbol == "" {
		return nil, drip.Errorf(drip.CodeInvalidCurrency, "Invalid currency: currency is required.")
	}
	return nil, drip.Errorf(drip.CodeInvalidCurrency, "Invalid currency: not a supported coin.")
}

// SetActive enables or disables a coin.
func (c *Catalog) SetActive(ctx context.Context, symbol string, active bool) error {
	err := c.store.Transact(ctx, func(tx store.Tx) error {
		return tx.CoinSetActive(ctx, strings.ToUpper(symbol), active)
	})
	if errors.Is(err, store.ErrNotFound) {
		return drip.Errorf(drip.CodeNotFound, "No coin %q.", symbol)
	}
	c.cache.Store(nil) // this process sees its own change at once
	return err
}

// SetMinPayout sets the smallest amount, in smallest units, a send of the
// coin may pay (a positive whole number).
func (c *Catalog) SetMinPayout(ctx context.Context, symbol string, units int64) error {
	if units <= 0 {
		return drip.Errorf(drip.CodeInvalidAmount, "Invalid minimum payout: at least 1 smallest unit (0.00000001).")
	}
	err := c.store.Transact(ctx, func(tx store.Tx) error {
		return tx.CoinSetMinPayout(ctx, drip.Symbol(symbol), units)
	})
	if errors.Is(err, store.ErrNotFound) {
		return drip.Errorf(drip.CodeNotFound, "No coin %q.", symbol)
	}
	c.cache.Store(nil) // this process sees its own change at once
	return err
}
