// Package price gives the USD price of one whole coin (D60): from a static
// table (the built-in defaults or an operator's --prices file) or from a
// polled CoinGecko "simple price" feed that goes stale after a maximum age.
// Prices feed the daily USD cap (D36), merchant conversion and listing cost.
//
// Prices are exact decimals, never float64: a cap compared against a value
// computed through binary floating point could be exceeded by a rounding
// error, and an operator who writes 0.1 means exactly 0.1.
package price

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/shopspring/decimal"

	"github.com/dripfaucet/drip/internal/drip"
)

// ErrUnavailable is wrapped by every error that means "no fresh price for this
// coin". Callers that need a price fail closed on it (D36); the HTTP layer
// answers 503 (D34).
var ErrUnavailable = errors.New("price: no fresh price")

// Quote is the USD price of one whole coin as a source last observed it.
type Quote struct {
	Coin   string
	USD    decimal.Decimal // per whole coin, not per smallest unit
	At     time.Time       // when the source observed the price
	Source string          // "static", "file" or "feed"
}

// Source gives the current price of a coin. A missing or stale price is an
// error wrapping ErrUnavailable. Implementations are safe for concurrent use.
type Source interface {
	Quote(ctx context.Context, coin string) (Quote, error)
}

// coinExp makes a smallest unit 10^-8 of a coin, for every coin (D1).
const coinExp = -drip.Decimals

// USDValue is the exact USD value of amount smallest units at q's price.
func USDValue(amount int64, q Quote) decimal.Decimal {
	return decimal.New(amount, coinExp).Mul(q.USD)
}

var (
	maxInt64 = decimal.NewFromInt(math.MaxInt64)
	minInt64 = decimal.NewFromInt(math.MinInt64)
)

// MicrosUp is d in millionths of a dollar, rounded up so that a sum checked
// against a USD cap can never slip under it by rounding. It saturates at the
// int64 limits rather than wrapping.
func MicrosUp(d decimal.Decimal) int64 {
	m := d.Shift(6).Ceil()
	switch {
	case m.GreaterThan(maxInt64):
		return math.MaxInt64
	case m.LessThan(minInt64):
		return math.MinInt64
	}
	return m.IntPart()
}

// maxPriceText bounds the text of one price: no real price needs more, and a
// megabyte of digits from a broken feed should not become a huge big.Int.
const maxPriceText = 64

// parsePrice reads a price decoded with UseNumber: a JSON number, or a
// string holding one, read exactly from its text. Files and the feed share
// it so both accept and refuse the same things.
func parsePrice(v any) (decimal.Decimal, error) {
	var text string
	switch v := v.(type) {
	case json.Number:
		text = string(v)
	case string:
		text = v
	default:
		return decimal.Decimal{}, errors.New("price must be a number or a string holding one")
	}
	// decimal's parser alone is looser than JSON ("+5", ".5", "1.e3", a
	// Unicode minus); requiring valid JSON too leaves exactly JSON numbers.
	if len(text) > maxPriceText || !json.Valid([]byte(text)) {
		return decimal.Decimal{}, fmt.Errorf("%q is not a number", text)
	}
	d, err := decimal.NewFromString(text)
	if err != nil {
		return decimal.Decimal{}, fmt.Errorf("%q is not a number", text)
	}
	if d.Sign() <= 0 {
		return decimal.Decimal{}, fmt.Errorf("%s is not a positive price", text)
	}
	return d, nil
}
