package price

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"time"

	"github.com/shopspring/decimal"
)

type static struct {
	table  map[string]decimal.Decimal
	source string
	now    func() time.Time
}

// Static serves prices from a fixed table. The operator vouches for the
// table, so its prices never go stale: each quote is stamped now(). source
// names where the table came from ("static" for Builtin, "file" for LoadFile).
func Static(table map[string]decimal.Decimal, source string, now func() time.Time) Source {
	if now == nil {
		now = time.Now
	}
	// A copy, so a caller changing its map later cannot race with Quote.
	return &static{table: maps.Clone(table), source: source, now: now}
}

func (s *static) Quote(_ context.Context, coin string) (Quote, error) {
	usd, ok := s.table[coin]
	if !ok {
		return Quote{}, fmt.Errorf("%w: the %s price table has no %s", ErrUnavailable, s.source, coin)
	}
	return Quote{Coin: coin, USD: usd, At: s.now(), Source: s.source}, nil
}

// Builtin returns the default table used when the operator gives neither
// --prices nor --price-feed-url. The values are rough early-2026 placeholders
// so that a fresh install works; an operator who relies on a USD cap should
// replace them with a --prices file or a feed. Each call returns a new map.
func Builtin() map[string]decimal.Decimal {
	return map[string]decimal.Decimal{
		"BTC":  decimal.RequireFromString("90000"),
		"ETH":  decimal.RequireFromString("3000"),
		"DOGE": decimal.RequireFromString("0.15"),
		"LTC":  decimal.RequireFromString("85"),
		"BCH":  decimal.RequireFromString("500"),
		"DASH": decimal.RequireFromString("40"),
		"DGB":  decimal.RequireFromString("0.008"),
		"TRX":  decimal.RequireFromString("0.28"),
		"USDT": decimal.RequireFromString("1"),
		"BNB":  decimal.RequireFromString("850"),
		"SOL":  decimal.RequireFromString("140"),
		"XRP":  decimal.RequireFromString("2"),
	}
}

// LoadFile reads a --prices file: one JSON object from upper-case coin
// symbol to USD per whole coin, each price a JSON number or a string holding
// one, e.g. {"BTC": "65000.12", "DOGE": 0.12}. Numbers are read from their
// text, never through float64. Any mistake fails the whole file, since a
// price silently dropped or misread would let a USD cap be wrong.
func LoadFile(path string) (map[string]decimal.Decimal, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("price file: %w", err)
	}
	table, err := parseTable(data)
	if err != nil {
		return nil, fmt.Errorf("price file %s: %w", path, err)
	}
	return table, nil
}

// parseTable walks the tokens rather than decoding into a map, so that a
// repeated symbol and trailing data are reported instead of ignored.
func parseTable(data []byte) (map[string]decimal.Decimal, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New(`not a JSON object like {"BTC": "65000.12"}`)
	}
	table := make(map[string]decimal.Decimal)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("bad JSON: %w", err)
		}
		sym, ok := tok.(string)
		if !ok {
			return nil, errors.New("bad JSON: expected a coin symbol")
		}
		if err := checkSymbol(sym); err != nil {
			return nil, err
		}
		if _, dup := table[sym]; dup {
			return nil, fmt.Errorf("%s appears twice", sym)
		}
		tok, err = dec.Token()
		if err != nil {
			return nil, fmt.Errorf("bad JSON: %w", err)
		}
		usd, err := parsePrice(tok)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", sym, err)
		}
		table[sym] = usd
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("bad JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("unexpected data after the JSON object")
	}
	if len(table) == 0 {
		return nil, errors.New("no prices")
	}
	return table, nil
}

// checkSymbol holds a file to the form coins have everywhere in drip, so a
// "btc" typo is an error at start and not a coin that silently has no price.
func checkSymbol(sym string) error {
	if sym == "" {
		return errors.New("empty coin symbol")
	}
	for _, r := range sym {
		if !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return fmt.Errorf("coin symbol %q must be upper-case letters and digits", sym)
		}
	}
	return nil
}
