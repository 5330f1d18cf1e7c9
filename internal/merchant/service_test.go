package merchant_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/dripfaucet/drip/internal/apptest"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/merchant"
	"github.com/dripfaucet/drip/internal/price"
	"github.com/dripfaucet/drip/internal/safehttp"
	"github.com/dripfaucet/drip/internal/store"
	"github.com/dripfaucet/drip/internal/store/storetest"
)

// names resolves the test's host names without a network.
type names map[string]string

func (n names) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := n[host]; ok {
		return []netip.Addr{netip.MustParseAddr(a)}, nil
	}
	return nil, fmt.Errorf("no such host %s", host)
}

// shop is a merchant, a funded buyer and the checkout service over a
// fresh store of one engine, with BTC at 65,000 USD and DOGE at 0.1.
type shop struct {
	env      *apptest.Env
	svc      *merchant.Service
	merchant *drip.User
	buyer    *drip.User
}

func newShop(t *testing.T, eng storetest.Engine) *shop {
	t.Helper()
	st := eng.Open(t)
	env := apptest.New(t, st, apptest.Options{})
	prices := price.Static(map[string]decimal.Decimal{
		"BTC": decimal.RequireFromString("65000"), "DOGE": decimal.RequireFromString("0.1"),
	}, "static", env.Clock.Now)
	svc, err := merchant.New(t.Context(), merchant.Deps{Store: st, Users: env.App.Users, Coins: env.App.Coins, Prices: prices,
		HTTP: safehttp.Options{Resolver: names{"shop.example.com": "93.184.216.34", "intra.example.com": "10.0.0.8"}},
		Now:  env.Clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	s := &shop{env: env, svc: svc, merchant: env.User(t, "shop"), buyer: env.User(t, "buyer")}
	if _, err := env.App.Ledger.DepositTo(t.Context(), s.buyer.AccountID, "BTC", 1_000_000, nil); err != nil {
		t.Fatal(err)
	}
	return s
}

func form(kv ...string) url.Values {
	v := url.Values{"merchant_username": {"shop"}, "item_description": {"Premium <b>membership</b>"}, "amount1": {"19.99"},
		"currency1": {"usd"}, "custom": {"order-42"}, "callback_url": {"https://shop.example.com/ipn"},
		"success_url": {"https://shop.example.com/thanks"}, "cancel_url": {"https://shop.example.com/cart"}, "submit": {"Pay"}}
	for i := 0; i < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return v
}

func engines(t *testing.T, fn func(t *testing.T, s *shop)) {
	t.Parallel()
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			t.Parallel()
			fn(t, newShop(t, eng))
		})
	}
}

// A form is checked against the users, coins and callback rules; a bad
// one names its field.
func TestCreateChecksTheForm(t *testing.T) {
	engines(t, func(t *testing.T, s *shop) {
		c, err := s.svc.Create(t.Context(), form())
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(c.PublicID, "chk_") || c.MerchantID != s.merchant.ID || c.State != store.CheckoutOpen || c.Amount1 != 1_999_000_000 {
			t.Errorf("checkout %+v", c)
		}
		suspended := s.env.User(t, "gone")
		if err := s.env.App.Users.SetStatus(t.Context(), suspended, drip.UserSuspended); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			form  url.Values
			field string
		}{
			{form("merchant_username", "nobody"), "merchant_username"},
			{form("merchant_username", "gone"), "merchant_username"},
			{form("currency1", "XYZ"), "currency1"},
			{form("currency2", "XYZ"), "currency2"},
			{form("callback_url", "https://intra.example.com/ipn"), "callback_url"},
			{form("callback_url", "http://127.0.0.1/ipn"), "callback_url"},
			{form("callback_url", "https://unknown.example.com/ipn"), "callback_url"},
			{form("success_url", "javascript:alert(1)"), "success_url"},
		} {
			_, err := s.svc.Create(t.Context(), c.form)
			var fe *merchant.FieldError
			if !errors.As(err, &fe) || fe.Field != c.field {
				t.Errorf("%v: %v; want %s refused", c.form, err, c.field)
			}
		}
		// http on a public address is a callback URL sites use.
		if _, err := s.svc.Create(t.Context(), form("callback_url", "http://shop.example.com/ipn")); err != nil {
			t.Errorf("an http callback URL: %v", err)
		}
	})
}

// The buyer reviews a quote and pays it: one transfer, the quote's
// amount, the checkout paid with a token that verifies once, the
// callback's fields; a second click pays nothing more.
func TestPayOnceAndVerifyOnce(t *testing.T) {
	engines(t, func(t *testing.T, s *shop) {
		ctx := t.Context()
		c, err := s.svc.Create(ctx, form())
		if err != nil {
			t.Fatal(err)
		}
		q, err := s.svc.Quote(ctx, c.PublicID, "btc")
		if err != nil {
			t.Fatal(err)
		}
		if q.Quote.Coin != "BTC" || q.Quote.Amount != 30_754 || !q.Quote.Expires.Equal(s.env.Clock.Now().Add(15*time.Minute)) {
			t.Fatalf("quote %+v; want 19.99 USD as 30754 BTC units (30753.8… up) for 15 minutes", q.Quote)
		}
		// Two clicks at once, and one after: one payment.
		var wg sync.WaitGroup
		results := make([]*merchant.Checkout, 3)
		errs := make([]error, 3)
		for i := range 2 {
			wg.Go(func() { results[i], errs[i] = s.svc.Pay(ctx, c.PublicID, s.buyer, "BTC", 30_754) })
		}
		wg.Wait()
		results[2], errs[2] = s.svc.Pay(ctx, c.PublicID, s.buyer, "BTC", 30_754)
		for i := range 3 {
			if errs[i] != nil || results[i].State != store.CheckoutPaid || results[i].TransferID == 0 {
				t.Fatalf("pay %d: %+v, %v", i, results[i], errs[i])
			}
		}
		if got := s.env.Balance(t, s.buyer.AccountID, "BTC"); got != 1_000_000-30_754 {
			t.Errorf("buyer's balance %d, want %d: one payment", got, 1_000_000-30_754)
		}
		if got := s.env.Balance(t, s.merchant.AccountID, "BTC"); got != 30_754 {
			t.Errorf("merchant's balance %d, want 30754", got)
		}
		s.env.Reconcile(t)

		paid, err := s.svc.Get(ctx, c.PublicID)
		if err != nil {
			t.Fatal(err)
		}
		body, err := s.svc.CallbackForm(ctx, paid)
		if err != nil {
			t.Fatal(err)
		}
		want := url.Values{"transaction_id": {fmt.Sprint(paid.TransferID)}, "merchant_username": {"shop"}, "payer_username": {"buyer"},
			"amount1": {"19.99000000"}, "currency1": {"USD"}, "amount2": {"0.00030754"}, "currency2": {"BTC"}, "custom": {"order-42"},
			"exchange_rate": {"0.0000153846153846"}}
		for k, v := range want {
			if body.Get(k) != v[0] {
				t.Errorf("callback %s = %q, want %q", k, body.Get(k), v[0])
			}
		}
		token := body.Get("token")
		if len(token) != 43 || strings.Contains(paid.TokenHash, token) || strings.Contains(paid.TokenSealed, token) {
			t.Errorf("token %q: want 256 bits, stored only hashed and sealed", token)
		}
		v, err := s.svc.Verify(ctx, token)
		if err != nil || !v.Valid || v.TransactionID != body.Get("transaction_id") || v.Amount2 != "0.00030754" || v.PayerUsername != "buyer" {
			t.Errorf("first verification %+v, %v", v, err)
		}
		for _, tok := range []string{token, "not-a-token", strings.Repeat("A", 43), ""} {
			if v, err := s.svc.Verify(ctx, tok); err != nil || v.Valid || *v != (merchant.Payment{}) {
				t.Errorf("verification of %q: %+v, %v; want valid false and nothing else", tok, v, err)
			}
		}
	})
}

// A quote expires after 15 minutes; a balance too low, a cancelled
// checkout, and paying yourself are refused; none moves anything.
func TestPayRefusalsMoveNothing(t *testing.T) {
	engines(t, func(t *testing.T, s *shop) {
		ctx := t.Context()
		c, _ := s.svc.Create(ctx, form())
		if _, err := s.svc.Quote(ctx, c.PublicID, "BTC"); err != nil {
			t.Fatal(err)
		}
		s.env.Clock.Advance(15 * time.Minute)
		if _, err := s.svc.Pay(ctx, c.PublicID, s.buyer, "BTC", 30_754); !errors.Is(err, merchant.ErrQuoteExpired) {
			t.Errorf("an expired quote: %v", err)
		}
		if _, err := s.svc.Quote(ctx, c.PublicID, "BTC"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.svc.Pay(ctx, c.PublicID, s.buyer, "BTC", 30_753); !errors.Is(err, merchant.ErrQuoteExpired) {
			t.Errorf("an amount other than the quote's: %v", err)
		}
		if _, err := s.svc.Pay(ctx, c.PublicID, s.merchant, "BTC", 30_754); drip.ErrorCode(err) != drip.CodeInvalid {
			t.Errorf("paying yourself: %v", err)
		}
		// DOGE: the buyer has none.
		d, _ := s.svc.Create(ctx, form("currency2", "DOGE"))
		if _, err := s.svc.Quote(ctx, d.PublicID, "BTC"); drip.ErrorCode(err) != drip.CodeInvalidCurrency {
			t.Errorf("quoting a DOGE checkout in BTC: %v", err)
		}
		if q, err := s.svc.Quote(ctx, d.PublicID, "DOGE"); err != nil || q.Quote.Amount != 19_990_000_000 {
			t.Fatalf("DOGE quote %+v, %v", q, err)
		}
		if _, err := s.svc.Pay(ctx, d.PublicID, s.buyer, "DOGE", 19_990_000_000); drip.ErrorCode(err) != drip.CodeInsufficientFunds {
			t.Errorf("a balance too low: %v", err)
		}
		if got, _ := s.svc.Get(ctx, d.PublicID); got.State != store.CheckoutOpen {
			t.Errorf("after a refused payment the checkout is %s", got.State)
		}
		if _, err := s.svc.Cancel(ctx, d.PublicID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.svc.Quote(ctx, d.PublicID, "DOGE"); drip.ErrorCode(err) != drip.CodeConflict {
			t.Errorf("quoting a cancelled checkout: %v", err)
		}
		// No price for a coin: the checkout says so, takes nothing.
		if err := s.env.App.Coins.SetActive(ctx, "LTC", true); err != nil {
			t.Fatal(err)
		}
		if _, err := s.svc.Quote(ctx, c.PublicID, "LTC"); drip.ErrorCode(err) != drip.CodeUnavailable {
			t.Errorf("quoting without a price: %v", err)
		}
		if got := s.env.Balance(t, s.buyer.AccountID, "BTC"); got != 1_000_000 {
			t.Errorf("buyer's balance %d after refusals, want 1000000", got)
		}
		// Paid, it cannot be cancelled.
		if _, err := s.svc.Pay(ctx, c.PublicID, s.buyer, "BTC", 30_754); err != nil {
			t.Fatal(err)
		}
		if _, err := s.svc.Cancel(ctx, c.PublicID); drip.ErrorCode(err) != drip.CodeConflict {
			t.Errorf("cancelling a paid checkout: %v", err)
		}
		s.env.Reconcile(t)
	})
}
