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
		9223372036854775807: "92233720368.54775807", -9223372036854775808: "-92233720368.54775808",
		-100_000_000: "-1", 10: "0.0000001",
	}
	for in, want := range cases {
		if got := FormatCoins(in); got != want {
			t.Errorf("FormatCoins(%d) = %q; want %q", in, got, want)
		}
		if got := string(AppendCoins([]byte(`"x":`), in)); got != `"x":`+want {
			t.Errorf("AppendCoins(%d) = %q; want %q", in, got, `"x":`+want)
		}
	}
}

func TestFormatCoinsFixed(t *testing.T) {
	t.Parallel()
	cases := map[int64]string{
		0: "0.00000000", 1: "0.00000001", 50_000_000: "0.50000000", 100_000_000: "1.00000000",
		123_456_789_012: "1234.56789012", -5: "-0.00000005", 9223372036854775807: "92233720368.54775807",
	}
	for in, want := range cases {
		if got := FormatCoinsFixed(in); got != want {
			t.Errorf("FormatCoinsFixed(%d) = %q; want %q", in, got, want)
		}
	}
}

func TestParseCoins(t *testing.T) {
	t.Parallel()
	valid := map[string]int64{
		"0": 0, "0.5": 50_000_000, ".5": 50_000_000, "5.": 500_000_000, "1": 100_000_000, "007.10": 710_000_000,
		"0.00000001": 1, "0.1": 10_000_000, "1234.56789012": 123_456_789_012,
		"92233720368.54775807": 9223372036854775807,
	}
	for in, want := range valid {
		if got, err := ParseCoins(in); err != nil || got != want {
			t.Errorf("ParseCoins(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", ".", "-1", "+5", "1e3", " 1", "1 ", "1,5", "1.2.3", "0x10", "0.000000001",
		"92233720368.54775808", "92233720369", "99999999999999999999999", "１", "NaN", "Inf"} {
		if got, err := ParseCoins(in); err == nil {
			t.Errorf("ParseCoins(%q) = %d; want refused", in, got)
		} else if ErrorCode(err) != CodeInvalidAmount {
			t.Errorf("ParseCoins(%q): code %s; want %s", in, ErrorCode(err), CodeInvalidAmount)
		}
	}
}
