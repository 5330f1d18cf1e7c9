package price

import (
	"context"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"
)

func TestStatic(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	table := map[string]decimal.Decimal{"BTC": dec("65000.12"), "DOGE": dec("0.1234")}
	src := Static(table, "file", func() time.Time { return now })
	// The source keeps its own copy: later changes to the map are not seen.
	table["BTC"] = dec("1")
	delete(table, "DOGE")

	tests := []struct {
		coin string
		want Quote
	}{
		{"BTC", Quote{Coin: "BTC", USD: dec("65000.12"), At: now, Source: "file"}},
		{"DOGE", Quote{Coin: "DOGE", USD: dec("0.1234"), At: now, Source: "file"}},
	}
	for _, tt := range tests {
		got, err := src.Quote(context.Background(), tt.coin)
		if err != nil {
			t.Fatalf("Quote(%s): %v", tt.coin, err)
		}
		if diff := cmp.Diff(tt.want, got, decimalEqual); diff != "" {
			t.Errorf("Quote(%s) (-want +got):\n%s", tt.coin, diff)
		}
	}

	t.Run("a coin not in the table is unavailable", func(t *testing.T) {
		t.Parallel()
		_, err := src.Quote(context.Background(), "ETH")
		if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "ETH") {
			t.Errorf("Quote(ETH) error = %v, want ErrUnavailable naming ETH", err)
		}
	})

	t.Run("the clock is read at every quote, so a static price is never stale", func(t *testing.T) {
		t.Parallel()
		calls := 0
		src := Static(Builtin(), "static", func() time.Time {
			calls++
			return now.Add(time.Duration(calls) * time.Hour)
		})
		q1, _ := src.Quote(context.Background(), "BTC")
		q2, _ := src.Quote(context.Background(), "BTC")
		if !q2.At.After(q1.At) || q2.Source != "static" {
			t.Errorf("second quote = %+v after %+v, want a later At and source static", q2, q1)
		}
	})
}

func TestBuiltin(t *testing.T) {
	t.Parallel()
	want := []string{"BCH", "BNB", "BTC", "DASH", "DGB", "DOGE", "ETH", "LTC", "SOL", "TRX", "USDT", "XRP"}
	table := Builtin()
	for sym, usd := range table {
		if usd.Sign() <= 0 {
			t.Errorf("Builtin()[%s] = %s, want a positive price", sym, usd)
		}
		// Every built-in coin must also be priced by the feed.
		if _, ok := coingeckoIDs[sym]; !ok {
			t.Errorf("%s has no CoinGecko id", sym)
		}
	}
	if diff := cmp.Diff(want, slices.Sorted(maps.Keys(table))); diff != "" {
		t.Errorf("Builtin() coins (-want +got):\n%s", diff)
	}
	if len(coingeckoIDs) != len(table) {
		t.Errorf("%d CoinGecko ids for %d built-in coins", len(coingeckoIDs), len(table))
	}
	// Each call gives a fresh map, so a caller cannot change the defaults.
	table["BTC"] = dec("1")
	if Builtin()["BTC"].Equal(dec("1")) {
		t.Error("changing one Builtin() map changed the next")
	}
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "prices.json")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadFile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		content string
		want    map[string]decimal.Decimal
	}{
		{
			name:    "strings and numbers",
			content: `{"BTC": "65000.12", "DOGE": 0.12}`,
			want:    map[string]decimal.Decimal{"BTC": dec("65000.12"), "DOGE": dec("0.12")},
		},
		{
			name:    "more digits than float64 holds are kept",
			content: `{"BTC": 65000.123456789012345678, "ETH": "3000.000000000000000001"}`,
			want: map[string]decimal.Decimal{
				"BTC": dec("65000.123456789012345678"),
				"ETH": dec("3000.000000000000000001"),
			},
		},
		{
			name:    "exponents and layout",
			content: "{\n  \"DGB\": 8e-3,\n  \"USDT\": \"1E0\",\n  \"1INCH\": 0.25\n}\n",
			want:    map[string]decimal.Decimal{"DGB": dec("0.008"), "USDT": dec("1"), "1INCH": dec("0.25")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := LoadFile(writeFile(t, tt.content))
			if err != nil {
				t.Fatalf("LoadFile: %v", err)
			}
			if diff := cmp.Diff(tt.want, got, decimalEqual); diff != "" {
				t.Errorf("LoadFile (-want +got):\n%s", diff)
			}
			// Exactness is about the digits, not just numeric equality.
			for sym, usd := range tt.want {
				if got[sym].String() != usd.String() {
					t.Errorf("%s = %s, want %s", sym, got[sym], usd)
				}
			}
		})
	}
}

func TestLoadFileRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		content string
		wantErr string
	}{
		{"empty file", ``, "not a JSON object"},
		{"an array", `[{"BTC": 1}]`, "not a JSON object"},
		{"a string", `"BTC"`, "not a JSON object"},
		{"a number", `65000`, "not a JSON object"},
		{"no prices", `{}`, "no prices"},
		{"negative price", `{"BTC": -65000}`, "BTC: -65000 is not a positive price"},
		{"zero price", `{"BTC": 0}`, "BTC: 0 is not a positive price"},
		{"zero price as a string", `{"DOGE": "0.000"}`, "DOGE: 0.000 is not a positive price"},
		{"non-numeric string", `{"BTC": "lots"}`, `BTC: "lots" is not a number`},
		{"number with a unit", `{"BTC": "65000 USD"}`, "is not a number"},
		{"signed string", `{"BTC": "+65000"}`, "is not a number"},
		{"boolean", `{"BTC": true}`, "BTC: price must be a number"},
		{"null", `{"BTC": null}`, "BTC: price must be a number"},
		{"nested object", `{"BTC": {"usd": 1}}`, "BTC: price must be a number"},
		{"lower-case symbol", `{"btc": 65000}`, `"btc" must be upper-case`},
		{"mixed-case symbol", `{"Doge": 0.1}`, `"Doge" must be upper-case`},
		{"symbol with punctuation", `{"BTC-USD": 1}`, `"BTC-USD" must be upper-case`},
		{"empty symbol", `{"": 1}`, "empty coin symbol"},
		{"repeated symbol", `{"BTC": 1, "ETH": 2, "BTC": 3}`, "BTC appears twice"},
		{"truncated", `{"BTC": 1`, "bad JSON"},
		{"trailing comma", `{"BTC": 1,}`, "bad JSON"},
		{"trailing data", `{"BTC": 1} {"ETH": 2}`, "after the JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := writeFile(t, tt.content)
			got, err := LoadFile(path)
			if err == nil {
				t.Fatalf("LoadFile(%s) = %v, want an error containing %q", tt.content, got, tt.wantErr)
			}
			// The path leads the message so an operator knows which file to fix.
			if msg := err.Error(); !strings.Contains(msg, tt.wantErr) || !strings.Contains(msg, path) {
				t.Errorf("LoadFile(%s) error = %q, want it to name %s and contain %q", tt.content, msg, path, tt.wantErr)
			}
		})
	}

	t.Run("missing file", func(t *testing.T) {
		t.Parallel()
		_, err := LoadFile(filepath.Join(t.TempDir(), "nope.json"))
		if !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("error = %v, want fs.ErrNotExist", err)
		}
	})
}
