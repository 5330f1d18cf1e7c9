package merchant

import (
	"fmt"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/dripfaucet/drip/internal/drip"
)

// Limits of the payment form's fields (issue 13).
const (
	MaxItemLen   = 500  // item_description, in characters
	MaxCustomLen = 500  // custom, in characters
	MaxURLLen    = 2048 // each URL, in bytes
	maxNameLen   = 64   // merchant_username, in bytes: longer is no user
)

// Form is a payment form as posted to /merchant/webscr (spec 4.4), its
// fields checked for shape; whether the merchant and the currencies exist
// is the checkout service's to check.
type Form struct {
	Merchant  string
	Item      string
	Amount1   int64  // in 10^-8 of Currency1, a coin's smallest unit or a hundred-millionth of a dollar
	Currency1 string // upper case: USD or a coin's symbol
	Currency2 string // upper case; "" lets the buyer choose
	Custom    string
	Callback  string // "" for none
	Success   string
	Cancel    string
}

// Amount1Decimal is Amount1 as the exact decimal it was written as.
func (f *Form) Amount1Decimal() decimal.Decimal { return decimal.New(f.Amount1, -drip.Decimals) }

// FieldError is a refused form: the field at fault, named as the form
// names it, and what is wrong, for the page that says so.
type FieldError struct {
	Field   string
	Message string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

func fieldErr(field, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// ParseForm reads and checks the fields of a payment form. The first
// field at fault is refused; nothing is created from a refused form.
func ParseForm(v url.Values) (*Form, error) {
	f := &Form{}
	var err error
	if f.Merchant, err = text(v, "merchant_username", true, maxNameLen); err != nil {
		return nil, err
	}
	if f.Item, err = text(v, "item_description", true, MaxItemLen); err != nil {
		return nil, err
	}
	amount, err := text(v, "amount1", true, 40)
	if err != nil {
		return nil, err
	}
	units, perr := drip.ParseCoins(amount)
	switch {
	case perr != nil:
		return nil, fieldErr("amount1", "must be a number with digits and at most one point and 8 decimals, like 19.99")
	case units <= 0:
		return nil, fieldErr("amount1", "must be above zero")
	}
	f.Amount1 = units
	if f.Currency1, err = currency(v, "currency1", true); err != nil {
		return nil, err
	}
	if f.Currency2, err = currency(v, "currency2", false); err != nil {
		return nil, err
	}
	if f.Currency2 == USD {
		return nil, fieldErr("currency2", "must be a coin the buyer pays with, not USD")
	}
	if f.Custom, err = text(v, "custom", false, MaxCustomLen); err != nil {
		return nil, err
	}
	for _, u := range []struct {
		name string
		to   *string
	}{{"callback_url", &f.Callback}, {"success_url", &f.Success}, {"cancel_url", &f.Cancel}} {
		if *u.to, err = webURL(v, u.name); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// text is the field's one value: valid UTF-8, no control characters but
// line breaks and tabs, at most max characters; required or not.
func text(v url.Values, name string, required bool, max int) (string, error) {
	vals := v[name]
	if len(vals) > 1 {
		return "", fieldErr(name, "is given %d times; give it once", len(vals))
	}
	s := ""
	if len(vals) == 1 {
		s = vals[0]
	}
	switch {
	case s == "" && required:
		return "", fieldErr(name, "is required")
	case !utf8.ValidString(s):
		return "", fieldErr(name, "is not valid text (UTF-8)")
	case utf8.RuneCountInString(s) > max:
		return "", fieldErr(name, "is longer than %d characters", max)
	}
	for _, r := range s {
		if unicode.IsControl(r) && r != '\n' && r != '\r' && r != '\t' {
			return "", fieldErr(name, "contains a control character")
		}
	}
	return s, nil
}

// currency is the field's currency symbol in upper case: letters and
// digits, as symbols are; "" when absent and not required.
func currency(v url.Values, name string, required bool) (string, error) {
	s, err := text(v, name, required, 10)
	if err != nil {
		return "", err
	}
	s = strings.ToUpper(strings.TrimSpace(s))
	for _, r := range s {
		if !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return "", fieldErr(name, "is not a currency symbol like USD or BTC")
		}
	}
	if s == "" && required {
		return "", fieldErr(name, "is required")
	}
	return s, nil
}

// webURL is the field's URL, "" when absent: an absolute http or https
// URL with a host, no user information; anything else (javascript:,
// data:, a relative path) is refused, since the buyer's browser is sent
// there.
func webURL(v url.Values, name string) (string, error) {
	s, err := text(v, name, false, MaxURLLen)
	if err != nil || s == "" {
		return "", err
	}
	u, perr := url.Parse(s)
	switch {
	case perr != nil:
		return "", fieldErr(name, "is not a valid URL")
	case u.Scheme != "http" && u.Scheme != "https":
		return "", fieldErr(name, "must be an http or https URL")
	case u.Opaque != "" || u.Host == "":
		return "", fieldErr(name, "must be an absolute URL, like https://shop.example.com/thanks")
	case u.User != nil:
		return "", fieldErr(name, "must not contain a user name or password")
	case strings.ContainsAny(s, " \t\r\n"):
		return "", fieldErr(name, "must not contain spaces")
	}
	return s, nil
}
