package merchant

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/shopspring/decimal"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/price"
)

// USD is the one pricing currency that is not a coin (spec 4.4).
const USD = "USD"

// QuoteTTL is how long a quote shown to the buyer holds (D57).
const QuoteTTL = 15 * time.Minute

// Quote is what the buyer pays for a checkout, in one coin (D57).
type Quote struct {
	Coin   string // what the buyer pays in (currency2)
	Amount int64  // smallest units of Coin, rounded up
	// Rate is how many Coin one unit of the pricing currency costs, as
	// recorded and sent as exchange_rate: exact where the conversion is
	// (1 when the coins are the same), else to 16 significant digits.
	Rate    decimal.Decimal
	Source  string    // the price source: "static", "file", "feed"; "" when no price was needed
	PriceAt time.Time // when the source observed the price(s); zero when none was needed
	Expires time.Time
}

// ErrNoPrice is wrapped when a conversion needs a price that is missing
// or stale: the checkout takes nothing and says so (D57, D60).
var ErrNoPrice = errors.New("merchant: no fresh price")

// Price quotes amount1 (an exact decimal in currency1, USD or a coin) in
// coin at prices' current rates, at now. The amount is rounded up to the
// smallest unit so that the merchant is never underpaid (D57).
func Price(ctx context.Context, prices price.Source, amount1 decimal.Decimal, currency1, coin string, now time.Time) (*Quote, error) {
	q := &Quote{Coin: coin, Expires: now.Add(QuoteTTL)}
	var num, den decimal.Decimal // amount in coin = amount1 * num / den
	switch {
	case currency1 == coin:
		num, den = decimal.NewFromInt(1), decimal.NewFromInt(1)
	default:
		to, err := prices.Quote(ctx, coin)
		if err != nil {
			return nil, fmt.Errorf("%w for %s: %w", ErrNoPrice, coin, err)
		}
		q.Source, q.PriceAt = to.Source, to.At
		den = to.USD
		num = decimal.NewFromInt(1)
		if currency1 != USD {
			from, err := prices.Quote(ctx, currency1)
			if err != nil {
				return nil, fmt.Errorf("%w for %s: %w", ErrNoPrice, currency1, err)
			}
			num = from.USD
			if from.At.Before(q.PriceAt) {
				q.PriceAt = from.At // the older of the two
			}
		}
		if !den.IsPositive() || !num.IsPositive() {
			return nil, fmt.Errorf("%w: a price of zero", ErrNoPrice)
		}
	}
	units, ok := ceilDiv(amount1.Mul(num).Shift(drip.Decimals), den)
	if !ok || units <= 0 {
		return nil, drip.Errorf(drip.CodeInvalidAmount, "The price converts to an amount of %s that cannot be paid.", coin)
	}
	q.Amount = units
	q.Rate = num.DivRound(den, 16)
	if currency1 == coin {
		q.Rate = decimal.NewFromInt(1)
	}
	return q, nil
}

// ceilDiv is the smallest integer at or above a/b, for positive exact
// decimals, and whether it fits an int64. It is exact: both are scaled to
// integers and divided as big integers, so no digit is lost to a
// division's precision and the rounding is always up.
func ceilDiv(a, b decimal.Decimal) (int64, bool) {
	exp := min(a.Exponent(), b.Exponent())
	num := scaled(a, exp)
	den := scaled(b, exp)
	if den.Sign() <= 0 || num.Sign() < 0 {
		return 0, false
	}
	q, r := new(big.Int).QuoRem(num, den, new(big.Int))
	if r.Sign() > 0 {
		q.Add(q, big.NewInt(1))
	}
	if !q.IsInt64() {
		return 0, false
	}
	return q.Int64(), true
}

// scaled is d's coefficient times 10^(d's exponent - exp), exp at most d's.
func scaled(d decimal.Decimal, exp int32) *big.Int {
	c := new(big.Int).Set(d.Coefficient())
	if shift := d.Exponent() - exp; shift > 0 {
		c.Mul(c, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(shift)), nil))
	}
	return c
}
