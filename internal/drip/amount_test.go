package drip

import "testing"

func TestParseAmount(t *testing.T) {
	t.Parallel()
	valid := map[string]int64{"1": 1, "007": 7, "9223372036854775807": 9223372036854775807}
	for in, want := range valid {
		got, ok := ParseAmount(in)
		if !ok || got != want {
			t.Errorf("ParseAmount(%q) = %d, %v; want %d, true", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "0", "00", "-1", "+5", "1.5", "1e3", " 1", "1 ", "0x10", "9223372036854775808", "99999999999999999999", "１"} {
		if got, ok := ParseAmount(in); ok {
			t.Errorf("ParseAmount(%q) = %d, true; want invalid", in, got)
		}
	}
}

func TestFormatCoins(t *testing.T) {
	t.Parallel()
	cases := map[int64]string{
		0: "0", 1: "0.00000001", 4321: "0.00004321", 100_000_000: "1",
		150_000_000: "1.5", 123_456_789_012: "1234.56789012", -5: "-0.00000005",
		9223372036854775807: "92233720368.54775807",
	}
	for in, want := range cases {
		if got := FormatCoins(in); got != want {
			t.Errorf("FormatCoins(%d) = %q; want %q", in, got, want)
		}
	}
}
