// Package drip holds the domain types shared by every part of the service:
// amounts, coins, users, faucets, payouts and the application error type.
// It imports nothing internal, so every other package can depend on it.
package drip

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Decimals is the number of decimal places of every coin's smallest unit (D1):
// one coin is 100,000,000 units, as FaucetPay does for every coin.
const Decimals = 8

const unitsPerCoin = 100_000_000

// ParseAmount reads a send amount: a base-10 positive integer that fits int64
// (D22). Signs, fractions, exponents, spaces and the empty string are refused,
// so "1.5", "-3", "0", "", "1e3" and "+5" are all invalid.
func ParseAmount(s string) (int64, bool) {
	if s == "" || len(s) > 19 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, false
	}
	return n, true
}

// FormatCoins writes an amount of smallest units as an exact decimal number
// of whole coins ("0.00004321"), without going through float64 (D1). Trailing
// zeros are trimmed; whole amounts keep no decimal point ("2").
func FormatCoins(units int64) string {
	var b [24]byte // "-92233720368.54775808"
	return string(AppendCoins(b[:0], units))
}

// AppendCoins appends FormatCoins(units) to b.
func AppendCoins(b []byte, units int64) []byte {
	u := uint64(units)
	if units < 0 {
		b = append(b, '-')
		u = uint64(-units)
	}
	b = strconv.AppendUint(b, u/unitsPerCoin, 10)
	if frac := u % unitsPerCoin; frac != 0 {
		b = append(b, '.')
		start := len(b)
		b = strconv.AppendUint(b, frac+unitsPerCoin, 10) // zero-padded to 8 digits after its leading 1
		b = append(b[:start], b[start+1:]...)
		for b[len(b)-1] == '0' {
			b = b[:len(b)-1]
		}
	}
	return b
}

// Clip shortens s to at most n bytes without splitting a character, so a
// clipped value stays valid UTF-8 (PostgreSQL refuses anything else).
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// FormatCoinsFixed writes an amount of smallest units in whole coins with
// all 8 decimals ("0.50000000"), as pages show amounts so that a column of
// them lines up and no digit is implied (D1).
func FormatCoinsFixed(units int64) string {
	s := FormatCoins(units)
	whole, frac, _ := strings.Cut(s, ".")
	return whole + "." + frac + strings.Repeat("0", Decimals-len(frac))
}

// ParseCoins reads an amount a person typed in whole coins ("0.5", "12",
// ".00000001") as smallest units, exactly and without float64 (D1): digits
// with at most one point and at most 8 decimals, up to the largest int64.
// Zero is an amount; signs, exponents, spaces and digit grouping are not.
// Refusals are CodeInvalidAmount with a message to show beside the field.
func ParseCoins(s string) (int64, error) {
	whole, frac, _ := strings.Cut(s, ".")
	if whole+frac == "" || !allDigits(whole) || !allDigits(frac) {
		return 0, Errorf(CodeInvalidAmount, "Invalid amount: write it in coins with digits and one point, like 0.5 or 0.00001.")
	}
	if len(frac) > Decimals {
		return 0, Errorf(CodeInvalidAmount, "Invalid amount: at most 8 decimals (0.00000001 is the smallest unit).")
	}
	const maxUnits = 1<<63 - 1
	w := uint64(0)
	if whole != "" {
		var err error
		if w, err = strconv.ParseUint(whole, 10, 64); err != nil || w > maxUnits/unitsPerCoin {
			return 0, Errorf(CodeInvalidAmount, "Invalid amount: too large.")
		}
	}
	f := uint64(0)
	if frac != "" {
		f, _ = strconv.ParseUint(frac+strings.Repeat("0", Decimals-len(frac)), 10, 64) // 8 digits: cannot fail
	}
	units := w*unitsPerCoin + f
	if units > maxUnits {
		return 0, Errorf(CodeInvalidAmount, "Invalid amount: too large.")
	}
	return int64(units), nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
