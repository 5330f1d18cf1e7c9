package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
)

// The suite's part for the coin catalogue.

// builtinCoins is the coin set the first migration of every engine seeds,
// in its order (the order of the currencies operation, spec 2.6).
var builtinCoins = []drip.Coin{
	{Symbol: "BTC", Name: "Bitcoin"}, {Symbol: "ETH", Name: "Ethereum"},
	{Symbol: "DOGE", Name: "Dogecoin"}, {Symbol: "LTC", Name: "Litecoin"},
	{Symbol: "BCH", Name: "Bitcoin Cash"}, {Symbol: "DASH", Name: "Dash"},
	{Symbol: "DGB", Name: "DigiByte"}, {Symbol: "TRX", Name: "Tron"},
	{Symbol: "USDT", Name: "Tether"}, {Symbol: "BNB", Name: "Binance Coin"},
	{Symbol: "SOL", Name: "Solana"}, {Symbol: "XRP", Name: "Ripple"},
}

func testCoinsSeededWithTheBuiltinsInOrder(t *testing.T, st store.Store) {
	var want []drip.Coin
	for _, c := range builtinCoins {
		c.Active, c.MinPayout = true, 1
		want = append(want, c)
	}
	got, err := st.CoinList(context.Background())
	if err != nil {
		t.Fatalf("CoinList: %v", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CoinList of a fresh store (-want +got):\n%s", diff)
	}
}

func testCoinSetActive(t *testing.T, st store.Store) {
	ctx := context.Background()
	active := func() map[string]bool {
		coins, err := st.CoinList(ctx)
		if err != nil {
			t.Fatalf("CoinList: %v", err)
		}
		m := map[string]bool{}
		for _, c := range coins {
			m[c.Symbol] = c.Active
		}
		return m
	}
	transact(t, st, func(ctx context.Context, tx store.Tx) error { return tx.CoinSetActive(ctx, "DOGE", false) })
	if got := active(); got["DOGE"] || !got["BTC"] || len(got) != 12 {
		t.Errorf("after disabling DOGE: %v; want DOGE off, the rest on", got)
	}
	transact(t, st, func(ctx context.Context, tx store.Tx) error { return tx.CoinSetActive(ctx, "DOGE", true) })
	if got := active(); !got["DOGE"] {
		t.Errorf("after enabling DOGE again: %v; want DOGE on", got)
	}
	for _, symbol := range []string{"NOPE", "doge", ""} {
		err := try(st, func(ctx context.Context, tx store.Tx) error { return tx.CoinSetActive(ctx, symbol, false) })
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("CoinSetActive(%q): err = %v, want ErrNotFound", symbol, err)
		}
	}
}
