package merchant

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/dripfaucet/drip/internal/price"
)

var quoteAt = time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)

func prices() price.Source {
	return price.Static(map[string]decimal.Decimal{
		"BTC":  decimal.RequireFromString("65000"),
		"DOGE": decimal.RequireFromString("0.1"),
		"ETH":  decimal.RequireFromString("3333.33"),
	}, "static", func() time.Time { return quoteAt })
}

// Conversion rounds up to the smallest unit, so the merchant is never
// underpaid (D57), at boundary amounts: exact, just above, the smallest.
func TestPriceRoundsUp(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		amount1, currency1, coin string
		want                     int64
		rate                     string
	}{
		{"65000", "USD", "BTC", 100_000_000, "0.0000153846153846"}, // exactly one coin
		{"1", "USD", "BTC", 1539, "0.0000153846153846"},            // 1538.46… up
		{"0.00000001", "USD", "BTC", 1, "0.0000153846153846"},      // far below a unit: one unit
		{"0.1", "USD", "DOGE", 100_000_000, "10"},                  // exact
		{"0.10000001", "USD", "DOGE", 100_000_010, "10"},           // exactly 1.0000001 DOGE
		{"1", "DOGE", "BTC", 154, "0.0000015384615385"},            // 153.846… up
		{"0.00000001", "BTC", "BTC", 1, "1"},                       // the same coin: exact, no price needed
		{"12.34567891", "BTC", "BTC", 1_234_567_891, "1"},
		{"1", "ETH", "BTC", 5_128_200, "0.0512820000000000"}, // 3333.33/65000 = 0.051282 exactly
		{"3", "USD", "ETH", 90_001, "0.0003000003000003"},    // 90000.09… up
	} {
		q, err := Price(context.Background(), prices(), decimal.RequireFromString(c.amount1), c.currency1, c.coin, quoteAt)
		if err != nil {
			t.Errorf("%s %s in %s: %v", c.amount1, c.currency1, c.coin, err)
			continue
		}
		if q.Amount != c.want || !q.Rate.Equal(decimal.RequireFromString(c.rate)) {
			t.Errorf("%s %s in %s = %d at rate %s, want %d at %s", c.amount1, c.currency1, c.coin, q.Amount, q.Rate, c.want, c.rate)
		}
		if !q.Expires.Equal(quoteAt.Add(QuoteTTL)) {
			t.Errorf("expires %v, want 15 minutes on", q.Expires)
		}
	}
}

// Every unit paid covers the price: amount2 × price ≥ amount1 × price1,
// and one unit less would not (the rounding is up, and only just).
func TestPriceNeverUnderpays(t *testing.T) {
	t.Parallel()
	src := prices()
	for _, amount1 := range []string{"0.01", "0.99", "1.23456789", "7", "19.99", "1000.00000001"} {
		for _, pair := range [][2]string{{"USD", "BTC"}, {"USD", "DOGE"}, {"USD", "ETH"}, {"DOGE", "BTC"}, {"ETH", "DOGE"}, {"BTC", "ETH"}} {
			a := decimal.RequireFromString(amount1)
			q, err := Price(context.Background(), src, a, pair[0], pair[1], quoteAt)
			if err != nil {
				t.Fatal(err)
			}
			value := a // in USD
			if pair[0] != USD {
				p, _ := src.Quote(context.Background(), pair[0])
				value = a.Mul(p.USD)
			}
			to, _ := src.Quote(context.Background(), pair[1])
			paid := decimal.New(q.Amount, -8).Mul(to.USD)
			less := decimal.New(q.Amount-1, -8).Mul(to.USD)
			if paid.LessThan(value) || !less.LessThan(value) {
				t.Errorf("%s %s in %s: %d units worth %s for a price of %s (one less: %s)", amount1, pair[0], pair[1], q.Amount, paid, value, less)
			}
		}
	}
}

func TestPriceWithoutAPriceTakesNothing(t *testing.T) {
	t.Parallel()
	for _, pair := range [][2]string{{"USD", "XRP"}, {"XRP", "BTC"}} {
		if _, err := Price(context.Background(), prices(), decimal.NewFromInt(1), pair[0], pair[1], quoteAt); !errors.Is(err, ErrNoPrice) {
			t.Errorf("%s in %s without a price: %v, want ErrNoPrice", pair[0], pair[1], err)
		}
	}
	if _, err := Price(context.Background(), prices(), decimal.RequireFromString("1e20"), "USD", "DOGE", quoteAt); err == nil {
		t.Error("an amount past int64 units: no error")
	}
}
