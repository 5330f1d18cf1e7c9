// Package coin is the catalogue of coins: which exist, which are active, and
// the validation of a currency given by a caller.
package coin

import (
	"context"
	"errors"
	"strings"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
)

// Catalog reads and changes the coin set.
type Catalog struct{ store store.Store }

func NewCatalog(st store.Store) *Catalog { return &Catalog{store: st} }

// List returns every coin, active or not, in display order.
func (c *Catalog) List(ctx context.Context) ([]drip.Coin, error) { return c.store.CoinList(ctx) }

// ListActive returns the coins that can be used now.
func (c *Catalog) ListActive(ctx context.Context) ([]drip.Coin, error) {
	all, err := c.store.CoinList(ctx)
	active := all[:0]
	for _, coin := range all {
		if coin.Active {
			active = append(active, coin)
		}
	}
	return active, err
}

// Active returns the active coin with exactly this symbol. Symbols are
// upper-case (spec 1): "btc" is not a coin, and neither is a disabled one.
func (c *Catalog) Active(ctx context.Context, symbol string) (*drip.Coin, error) {
	all, err := c.store.CoinList(ctx)
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
	return err
}
