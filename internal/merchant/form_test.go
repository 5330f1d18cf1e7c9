package merchant

import (
	"errors"
	"net/url"
	"strings"
	"testing"
)

func goodForm() url.Values {
	return url.Values{
		"merchant_username": {"shop"}, "item_description": {"Premium membership, 1 month"},
		"amount1": {"19.99"}, "currency1": {"usd"}, "currency2": {""}, "custom": {"order-42"},
		"callback_url": {"https://shop.example.com/ipn"}, "success_url": {"https://shop.example.com/thanks"},
		"cancel_url": {"http://shop.example.com/cart"}, "submit": {"Pay with drip"},
	}
}

func TestParseFormReadsAGoodForm(t *testing.T) {
	t.Parallel()
	f, err := ParseForm(goodForm())
	if err != nil {
		t.Fatal(err)
	}
	want := Form{Merchant: "shop", Item: "Premium membership, 1 month", Amount1: 1_999_000_000, Currency1: "USD",
		Custom: "order-42", Callback: "https://shop.example.com/ipn", Success: "https://shop.example.com/thanks",
		Cancel: "http://shop.example.com/cart"}
	if *f != want {
		t.Errorf("form %+v, want %+v", *f, want)
	}
	if f.Amount1Decimal().String() != "19.99" {
		t.Errorf("amount1 as a decimal: %s", f.Amount1Decimal())
	}
	// Only the required fields.
	v := url.Values{"merchant_username": {"shop"}, "item_description": {"x"}, "amount1": {"0.00000001"}, "currency1": {"btc"}}
	if f, err := ParseForm(v); err != nil || f.Amount1 != 1 || f.Currency1 != "BTC" || f.Currency2 != "" || f.Callback != "" {
		t.Errorf("minimal form: %+v, %v", f, err)
	}
}

// Every field missing, too long or malformed is refused with its name.
func TestParseFormRefusesEachBadField(t *testing.T) {
	t.Parallel()
	long := func(n int) string { return strings.Repeat("é", n) }
	for _, c := range []struct {
		field, value string // value "<absent>" deletes the field
		want         string
	}{
		{"merchant_username", "<absent>", "is required"},
		{"merchant_username", "", "is required"},
		{"merchant_username", strings.Repeat("a", 65), "longer than 64"},
		{"item_description", "<absent>", "is required"},
		{"item_description", long(501), "longer than 500"},
		{"item_description", "bell\x07", "control character"},
		{"item_description", "\xff\xfe", "UTF-8"},
		{"amount1", "<absent>", "is required"},
		{"amount1", "0", "above zero"},
		{"amount1", "-1", "digits"},
		{"amount1", "1e3", "digits"},
		{"amount1", "1,000", "digits"},
		{"amount1", "0.000000001", "8 decimals"},
		{"amount1", "abc", "digits"},
		{"amount1", "99999999999999999999", "digits"},
		{"currency1", "<absent>", "is required"},
		{"currency1", "U$D", "currency symbol"},
		{"currency2", "USD", "not USD"},
		{"currency2", "b-t-c", "currency symbol"},
		{"custom", long(501), "longer than 500"},
		{"callback_url", "javascript:alert(1)", "http or https"},
		{"success_url", "javascript:alert(document.cookie)", "http or https"},
		{"cancel_url", "data:text/html,<script>alert(1)</script>", "http or https"},
		{"success_url", "/thanks", "http or https"},
		{"success_url", "//evil.example.com/", "http or https"},
		{"success_url", "https:///nohost", "absolute"},
		{"cancel_url", "https://user:pw@shop.example.com/", "user name"},
		{"callback_url", "https://shop.example.com/a b", "spaces"},
		{"callback_url", "https://shop.example.com/" + strings.Repeat("a", 2048), "longer than 2048"},
	} {
		v := goodForm()
		if c.value == "<absent>" {
			v.Del(c.field)
		} else {
			v.Set(c.field, c.value)
		}
		_, err := ParseForm(v)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != c.field || !strings.Contains(fe.Message, c.want) {
			t.Errorf("%s=%q: %v; want the field refused with %q", c.field, c.value, err, c.want)
		}
	}
	v := goodForm()
	v.Add("amount1", "1")
	if _, err := ParseForm(v); err == nil || !strings.Contains(err.Error(), "once") {
		t.Errorf("amount1 given twice: %v", err)
	}
}
