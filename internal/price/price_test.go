package price

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"
)

// decimalEqual compares decimals by value: decimal.Decimal has unexported
// fields, and 1.50 and 1.5 are the same price.
var decimalEqual = cmp.Comparer(func(a, b decimal.Decimal) bool { return a.Equal(b) })

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func TestUSDValue(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		amount int64
		usd    string
		want   string
	}{
		{"one satoshi of BTC", 1, "65000.12", "0.0006500012"},
		{"one whole coin is the price", 100_000_000, "65000.12", "65000.12"},
		{"fractions of a cent stay exact", 123_456_789, "0.1234", "0.152345677626"},
		{"2.5 ETH", 250_000_000, "3000.5", "7501.25"},
		{"zero amount", 0, "65000.12", "0"},
		{"the largest amount does not overflow", math.MaxInt64, "65000.12", "5995202892002048.5002809684"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := USDValue(tt.amount, Quote{Coin: "BTC", USD: dec(tt.usd)})
			if got.String() != tt.want {
				t.Errorf("USDValue(%d, %s) = %s, want %s", tt.amount, tt.usd, got, tt.want)
			}
		})
	}
}

func TestMicrosUp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		usd  string
		want int64
	}{
		{"one satoshi of BTC at 65000.12 rounds up", "0.0006500012", 651},
		{"zero", "0", 0},
		{"exactly one micro", "0.000001", 1},
		{"a hair over one micro is two", "0.0000010000001", 2},
		{"whole dollars", "1.5", 1_500_000},
		{"negative rounds toward zero, which is up", "-0.0000015", -1},
		{"just under the int64 limit", "9223372036854.775806", math.MaxInt64 - 1},
		{"exactly the int64 limit", "9223372036854.775807", math.MaxInt64},
		{"rounding up past the limit saturates", "9223372036854.7758071", math.MaxInt64},
		{"the largest amount at a BTC price saturates", "5995202892002048.5002809684", math.MaxInt64},
		{"huge negative saturates", "-1e30", math.MinInt64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := MicrosUp(dec(tt.usd)); got != tt.want {
				t.Errorf("MicrosUp(%s) = %d, want %d", tt.usd, got, tt.want)
			}
		})
	}
}

func TestParsePrice(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      any    // as decoded with UseNumber
		want    string // empty when an error is expected
		wantErr string
	}{
		{in: "65000.12", want: "65000.12"},
		{in: json.Number("65000.12"), want: "65000.12"},
		{in: json.Number("-1"), wantErr: "not a positive price"},
		{in: true, wantErr: "must be a number"},
		{in: nil, wantErr: "must be a number"},
		{in: map[string]any{"usd": json.Number("1")}, wantErr: "must be a number"},
		{in: "1.2e-5", want: "0.000012"},
		{in: "1E3", want: "1000"},
		// More digits than a float64 holds: proof the text is read exactly.
		{in: "65000.123456789012345678", want: "65000.123456789012345678"},
		{in: "0", wantErr: "not a positive price"},
		{in: "-0.5", wantErr: "not a positive price"},
		{in: "", wantErr: "not a number"},
		{in: "abc", wantErr: "not a number"},
		{in: "+5", wantErr: "not a number"},
		{in: " 5", wantErr: "not a number"},
		{in: "5 ", wantErr: "not a number"},
		{in: "1,000", wantErr: "not a number"},
		{in: "0x10", wantErr: "not a number"},
		{in: "NaN", wantErr: "not a number"},
		{in: ".5", wantErr: "not a number"},
		{in: "1.e3", wantErr: "not a number"},
		{in: "\u22125", wantErr: "not a number"}, // Unicode minus sign
		{in: "true", wantErr: "not a number"},
		{in: `"5"`, wantErr: "not a number"},
		{in: strings.Repeat("1", maxPriceText+1), wantErr: "not a number"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%T %v", tt.in, tt.in), func(t *testing.T) {
			t.Parallel()
			got, err := parsePrice(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("parsePrice(%#v) = %s, %v; want error containing %q", tt.in, got, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parsePrice(%#v): %v", tt.in, err)
			}
			if got.String() != tt.want {
				t.Errorf("parsePrice(%#v) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}
