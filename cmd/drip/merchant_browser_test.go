package main

import (
	"bytes"
	"context"
	"encoding/json"
	"html/template"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/dripfaucet/drip/internal/apptest"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/logtest"
	"github.com/dripfaucet/drip/internal/safehttp"
	"github.com/dripfaucet/drip/internal/store"
	"github.com/dripfaucet/drip/internal/store/storetest"
)

// shopSite is a merchant's site on another origin than drip's: product
// pages with drip's payment form as sites in the wild write it (a plain
// HTML form, hidden inputs, a submit control named submit), the pages
// the buyer returns to, and the callback handler (spec 6.2), which
// verifies each payment's token with drip twice, as a careless merchant
// might, before answering 200.
type shopSite struct {
	*httptest.Server
	t    *testing.T
	drip string // drip's address
	// origin is the site as the browser opens it: localhost, while drip
	// is 127.0.0.1, so the two are different sites to the browser, not
	// only different origins.
	origin string
	mu     sync.Mutex
	got    []shopCallback
}

// shopCallback is a callback the site received and what verifying its
// token answered, the first time and the second.
type shopCallback struct {
	form          url.Values
	first, second map[string]any
	err           error
}

// shopProduct is a product page's form.
type shopProduct struct {
	Item, Amount, Currency1, Currency2, Custom string
	Success, Cancel                            bool // give success_url, cancel_url
}

var shopProducts = map[string]shopProduct{
	"script": {Item: "Faucet script <b>Pro</b> & a year of updates", Amount: "19.99", Currency1: "USD", Custom: "order-1001", Success: true, Cancel: true},
	"btc":    {Item: "Ad slot, one week", Amount: "12.50", Currency1: "USD", Currency2: "BTC", Custom: "order-1002", Success: true, Cancel: true},
	"doge":   {Item: "Premium membership", Amount: "3", Currency1: "USD", Custom: "order-1003"},
	"big":    {Item: "Lifetime licence", Amount: "5000", Currency1: "USD", Currency2: "DOGE", Custom: "order-1004", Success: true, Cancel: true},
	// A shop's mistake: a price written with a decimal comma.
	"broken": {Item: "Banner slot", Amount: "19,99", Currency1: "USD", Custom: "order-1005", Success: true, Cancel: true},
}

var shopPage = template.Must(template.New("shop").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Faucet scripts shop</title>
<style>body{font-family:Georgia,serif;max-width:36rem;margin:2rem auto;padding:0 1rem;background:#fffdf6;color:#222}
.product{border:1px solid #d8cfae;padding:1rem 1.25rem;border-radius:6px;background:#fff}
input[type=submit]{font:inherit;padding:.5rem 1rem;background:#e8a317;border:1px solid #b97d00;border-radius:4px;cursor:pointer}</style>
</head><body><main>
<h1>{{if .Heading}}{{.Heading}}{{else}}Faucet scripts shop{{end}}</h1>
{{- with .Product}}
<div class="product">
<p>{{.Item}}</p>
<p><strong>{{.Amount}} {{.Currency1}}</strong></p>
<form method="post" action="{{$.Drip}}/merchant/webscr">
<input type="hidden" name="merchant_username" value="shop">
<input type="hidden" name="item_description" value="{{.Item}}">
<input type="hidden" name="amount1" value="{{.Amount}}">
<input type="hidden" name="currency1" value="{{.Currency1}}">
<input type="hidden" name="currency2" value="{{.Currency2}}">
<input type="hidden" name="custom" value="{{.Custom}}">
<input type="hidden" name="callback_url" value="{{$.Callback}}">
{{- if .Success}}
<input type="hidden" name="success_url" value="{{$.Origin}}/thanks">
{{- end}}
{{- if .Cancel}}
<input type="hidden" name="cancel_url" value="{{$.Origin}}/cart">
{{- end}}
<input type="submit" name="submit" value="Pay with drip">
</form>
</div>
{{- end}}
</main></body></html>
`))

func newShopSite(t *testing.T, dripURL string) *shopSite {
	s := &shopSite{t: t, drip: dripURL}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	_, port, _ := net.SplitHostPort(s.Listener.Addr().String())
	s.origin = "http://localhost:" + port
	return s
}

func (s *shopSite) serve(w http.ResponseWriter, r *http.Request) {
	data := struct {
		Heading                string
		Product                *shopProduct
		Drip, Origin, Callback string
	}{Drip: s.drip, Origin: s.origin, Callback: s.URL + "/ipn"}
	switch r.URL.Path {
	case "/ipn":
		s.callback(w, r)
		return
	case "/thanks":
		data.Heading = "Thank you for your order"
	case "/cart":
		data.Heading = "Your cart"
	default:
		p, ok := shopProducts[strings.TrimPrefix(r.URL.Path, "/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		data.Product = &p
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = shopPage.Execute(w, data)
}

// callback takes drip's POST, verifies its token twice and answers 200.
func (s *shopSite) callback(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.ParseForm() != nil {
		http.Error(w, "bad callback", http.StatusBadRequest)
		return
	}
	got := shopCallback{form: r.PostForm}
	token := r.PostForm.Get("token")
	noteSecret("a merchant payment token", token)
	got.first, got.err = s.verify(token)
	if got.err == nil {
		got.second, got.err = s.verify(token)
	}
	s.mu.Lock()
	s.got = append(s.got, got)
	s.mu.Unlock()
	_, _ = w.Write([]byte("OK"))
}

// verify is the merchant's server asking drip whether a token is valid.
func (s *shopSite) verify(token string) (map[string]any, error) {
	resp, err := http.Get(s.drip + "/merchant/get-payment/" + url.PathEscape(token))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// wait returns the callbacks once n arrived, failing the test after 20 s.
func (s *shopSite) wait(n int) []shopCallback {
	s.t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		s.mu.Lock()
		got := append([]shopCallback(nil), s.got...)
		s.mu.Unlock()
		if len(got) >= n {
			return got
		}
	}
	s.t.Errorf("the shop received no %d callbacks in 20 s (issue 13's callback delivery, D55)", n)
	return nil
}

// merchantEnv is drip with the console and its workers running (App.Run,
// as drip serve runs it), development's URL rules admitting the shop's
// loopback callback URL (D53), a merchant "shop" and the app's log.
func merchantEnv(t *testing.T) (*apptest.Env, *logtest.Buffer) {
	t.Helper()
	logs := &logtest.Buffer{}
	t.Cleanup(func() { noteLog(bytes.NewBufferString(logs.String())) }) // runs last: the app has stopped
	env := apptest.New(t, storetest.OpenSQLite(t), apptest.Options{Console: true, Webhooks: safehttp.Options{AllowInsecure: true},
		Log: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { env.App.Run(ctx); close(stopped) }()
	t.Cleanup(func() { cancel(); <-stopped })
	env.Member(t, "shop", false)
	return env, logs
}

// fund deposits into a user's wallet.
func fund(t *testing.T, env *apptest.Env, u *drip.User, amounts map[string]int64) {
	t.Helper()
	for coin, n := range amounts {
		if _, err := env.App.Ledger.DepositTo(context.Background(), u.AccountID, coin, n, nil); err != nil {
			t.Fatal(err)
		}
	}
}

// checkoutChrome is a Chromium for a checkout test, with the checks the
// steps share.
type checkoutChrome struct {
	*chrome
	env  *apptest.Env
	shop *shopSite
}

// buy opens a product page of the shop and sends its form: the browser
// lands on drip's checkout page, whose path it returns.
func (c *checkoutChrome) buy(product, h1 string) string {
	c.t.Helper()
	c.run("the shop's page "+product, chromedp.Navigate(c.shop.origin+"/"+product), chromedp.WaitVisible(chromedp.CSS(`input[name="submit"]`)))
	c.send("send the shop's form", `input[name="submit"]`)
	c.run("the checkout", title(h1))
	u := c.location()
	if !strings.HasPrefix(u.String(), c.env.Server.URL+"/merchant/checkout/chk_") {
		c.t.Fatalf("the shop's form landed on %s", u)
	}
	return u.Path
}

func (c *checkoutChrome) location() *url.URL {
	c.t.Helper()
	s, err := chromedp.Run(c.ctx, chromedp.Location())
	if err != nil {
		c.t.Fatal(err)
	}
	u, err := url.Parse(s)
	if err != nil {
		c.t.Fatal(err)
	}
	return u
}

// has checks that the text of sel holds each of want.
func (c *checkoutChrome) has(what, sel string, want ...string) {
	c.t.Helper()
	got := c.text(sel)
	for _, w := range want {
		if !strings.Contains(got, w) {
			c.t.Errorf("%s: %q lacks %q", what, got, w)
		}
	}
}

func (c *checkoutChrome) count(js string) int {
	c.t.Helper()
	n, err := chromedp.Run(c.ctx, chromedp.Evaluate[int](js))
	if err != nil {
		c.t.Fatalf("%s: %v", js, err)
	}
	return n
}

func (c *checkoutChrome) balance(u *drip.User, coin string) int64 {
	return c.env.Balance(c.t, u.AccountID, coin)
}

// checkout is the checkout of a page's path, as stored.
func (c *checkoutChrome) checkout(path string) *store.Checkout {
	c.t.Helper()
	k, err := c.env.App.Merchant.Get(context.Background(), strings.TrimPrefix(path, "/merchant/checkout/"))
	if err != nil {
		c.t.Fatal(err)
	}
	return k
}

// TestBrowserMerchantCheckout is issue 13's end to end in a real
// Chromium: a shop on another site serves drip's payment form as sites
// do; a buyer with two-factor authentication sends it, is asked to log
// in (password, then code) and comes back to the same checkout, picks
// the coin (the form left currency2 blank), reviews the price held for
// 15 minutes and pays: the browser goes back to the shop's success_url,
// and the shop's callback handler receives the payment's fields and
// verifies the token, valid the first time and not the second. The
// buyer's receipt and payments, and the merchant's payments received
// with the callback's attempt, are shown. Every page is saved at desktop
// and phone width.
func TestBrowserMerchantCheckout(t *testing.T) {
	t.Parallel()
	chromiumPath(t) // skips without one, before anything starts
	env, _ := merchantEnv(t)
	shop := newShopSite(t, env.Server.URL)
	bob := env.Member(t, "bob", false)
	fund(t, env, bob, map[string]int64{"BTC": 1_000_000, "DOGE": 5_000_000_000})
	c := &checkoutChrome{chrome: newChrome(t, env.Server.URL), env: env, shop: shop}
	c.dir = shotsDir(t, "DRIP_MERCHANT_SHOTS", "merchant-shots")

	// Bob turns two-factor authentication on and logs out.
	c.login("bob", apptest.Password)
	c.run("account", chromedp.Navigate(env.Server.URL+"/account"), title("Account security"))
	code := c.enableTOTP(env.Clock)
	c.logout()

	// The shop's page, on another site; its form lands on the checkout,
	// which asks the visitor to log in.
	c.run("the shop", chromedp.Navigate(shop.origin+"/script"), chromedp.WaitVisible(chromedp.CSS(`input[name="submit"]`)))
	c.shot("00-shop-form")
	path := c.buy("script", "Checkout")
	c.has("the checkout logged out", "main", "Pay shop", "Faucet script <b>Pro</b> & a year of updates", "19.99 USD", "Log in to pay", "Sign up")
	if n := c.count(`document.querySelectorAll('#item b, script').length`); n != 0 {
		t.Errorf("the item's markup made %d elements: it was not escaped", n)
	}
	c.shot("01-checkout-log-in")

	// Log in: the password, then the code; back on the same checkout.
	c.run("log in to pay", chromedp.Click(chromedp.CSS("#login-to-pay")), title("Log in"))
	c.has("the login page", "main", "you come back to your checkout")
	c.shot("02-log-in-to-pay")
	c.run("password", fill("#identifier", "bob"), fill("#password", apptest.Password))
	c.send("log in", "form.card button")
	c.run("second factor", title("Two-factor authentication"), fill("#code", code()))
	c.send("the code", "form.card button")
	c.run("back on the checkout", title("Checkout"))
	if got := c.location(); got.Path != path || got.Host != strings.TrimPrefix(env.Server.URL, "http://") {
		t.Fatalf("after logging in the browser is at %s; want the checkout %s", got, path)
	}
	c.noteCookies()
	c.has("the coin picker", "#coins", "Choose the coin you pay with", "BTC", "about 0.00022212 BTC", "you hold 0.01000000", "DOGE", "about 133.26666667 DOGE")
	c.shot("03-choose-coin")

	// The buyer chooses BTC (the first coin their balance pays for).
	c.run("choose BTC", chromedp.Click(chromedp.CSS(`input[name="coin"][value="BTC"]`)))
	c.send("get the price", "#choose")
	c.has("the review", "#quote", "0.00022212 BTC", "1 USD = 0.0000111111111111 BTC", "drip's built-in price table",
		"This price holds until 15:25 UTC.", "0.01000000 BTC", "Pay 0.00022212 BTC")
	c.shot("04-review")

	// Pay: back to the shop's success_url.
	c.send("pay", "#pay")
	c.run("the shop's thanks", title("Thank you for your order"))
	if got := c.location().String(); got != shop.origin+"/thanks" {
		t.Errorf("after paying the browser is at %s; want the shop's success_url", got)
	}
	if b := c.balance(bob, "BTC"); b != 1_000_000-22_212 {
		t.Errorf("bob holds %d BTC units after paying; want %d", b, 1_000_000-22_212)
	}
	k := c.checkout(path)

	// The shop's callback: the fields of spec 2.9, the token valid once.
	if got := shop.wait(1); len(got) == 1 {
		cb := got[0]
		if cb.err != nil {
			t.Errorf("verifying the callback's token: %v", cb.err)
		}
		want := map[string]string{"merchant_username": "shop", "payer_username": "bob", "amount1": "19.99000000", "currency1": "USD",
			"amount2": "0.00022212", "currency2": "BTC", "custom": "order-1001", "exchange_rate": "0.0000111111111111",
			"transaction_id": strconv.FormatInt(k.TransferID, 10)}
		for f, v := range want {
			if cb.form.Get(f) != v {
				t.Errorf("the callback's %s is %q; want %q", f, cb.form.Get(f), v)
			}
		}
		if len(cb.form.Get("token")) != 43 {
			t.Errorf("the callback's token %q is not 256 bits", cb.form.Get("token"))
		}
		if cb.first["valid"] != true || cb.first["payer_username"] != "bob" || cb.first["amount2"] != "0.00022212" || cb.first["custom"] != "order-1001" {
			t.Errorf("the first verification: %v; want valid true with the payment", cb.first)
		}
		if cb.second["valid"] != false || cb.second["payer_username"] != "" {
			t.Errorf("the second verification: %v; want valid false and nothing else", cb.second)
		}
	} else if got != nil {
		t.Errorf("the shop received %d callbacks; want 1", len(got))
	}

	// The receipt, and the buyer's payments.
	c.run("the receipt", chromedp.Navigate(env.Server.URL+path), title("Receipt"))
	c.has("the receipt", "#receipt", "0.00022212 BTC", "shop", "Faucet script <b>Pro</b> & a year of updates (19.99 USD)", strconv.FormatInt(k.TransferID, 10),
		"Return to "+strings.TrimPrefix(shop.origin, "http://"))
	c.shot("05-receipt")
	c.run("bob's payments", chromedp.Navigate(env.Server.URL+"/wallet/payments"), title("Payments made"))
	c.has("bob's payments", "#payments", "shop", "Faucet script <b>Pro</b>", "19.99 USD", "0.00022212 BTC", strconv.FormatInt(k.TransferID, 10))
	c.shot("06-buyer-payments")
	c.logout()

	// Anyone else sees that it is paid, and nothing of who paid it.
	c.run("the paid checkout logged out", chromedp.Navigate(env.Server.URL+path), title("Checkout closed"))
	c.has("the paid checkout logged out", "main", "it can no longer be paid", "If you paid it, log in")
	if txt := c.text("main"); strings.Contains(txt, "bob") || strings.Contains(txt, "0.00022212") {
		t.Errorf("the paid checkout shows its buyer's payment to a visitor: %q", txt)
	}
	c.shot("07-closed-to-others")

	// The merchant's payments received, and the payment's callback.
	c.login("shop", apptest.Password)
	c.run("payments received", chromedp.Navigate(env.Server.URL+"/wallet/received"), title("Payments received"))
	c.has("the shop's payments", "#payments", "bob", "Faucet script <b>Pro</b>", "19.99 USD", "0.00022212 BTC", "order-1001")
	c.shot("08-merchant-payments")
	c.run("the payment", chromedp.Click(chromedp.CSS(`#payments a[href^="/wallet/received/"]`)), title("Payment received"))
	c.has("the payment's page", "#payment", "0.00022212 BTC from bob", "1 USD = 0.0000111111111111 BTC", "order-1001", "verified")
	c.has("the payment's callback", "#callback", shop.URL+"/ipn", "delivered", "Attempt 1", "HTTP 200")
	c.shot("09-merchant-payment")
	c.logout()
	env.Reconcile(t)
}

// TestBrowserMerchantCheckoutCases are the checkout's other ways in a
// real Chromium, for a buyer logged in before visiting the shop (the
// session's cookie goes with the redirect from the shop's form): a
// double click pays once, and the form sent again shows the receipt;
// Cancel goes back to the shop; an expired quote is refused and a new
// one paid; a balance too low says so and moves nothing; a checkout
// without success_url ends on the receipt. Each page is saved.
func TestBrowserMerchantCheckoutCases(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	env, logs := merchantEnv(t)
	shop := newShopSite(t, env.Server.URL)
	carol := env.Member(t, "carol", false)
	fund(t, env, carol, map[string]int64{"BTC": 1_000_000, "DOGE": 5_000_000_000})
	c := &checkoutChrome{chrome: newChrome(t, env.Server.URL), env: env, shop: shop}
	c.dir = shotsDir(t, "DRIP_MERCHANT_SHOTS", "merchant-shots")
	c.login("carol", apptest.Password)

	// A shop's broken form: a page naming the field, nothing created.
	c.run("the broken shop page", chromedp.Navigate(shop.origin+"/broken"), chromedp.WaitVisible(chromedp.CSS(`input[name="submit"]`)))
	c.send("send the broken form", `input[name="submit"]`)
	c.run("the form's error", title("This payment form has an error"))
	c.has("the form's error", "main", "amount1", "must be a number", "Nothing was created", "Return to "+strings.TrimPrefix(shop.origin, "http://"))
	c.shot("10-form-error")

	// The merchant named BTC: the checkout is priced on its first view.
	path := c.buy("btc", "Checkout")
	c.has("the review in BTC", "#quote", "0.00013889 BTC", "This price holds until")
	if n := c.count(`document.querySelectorAll('#coins').length`); n != 0 {
		t.Errorf("a checkout in BTC offers %d coin pickers", n)
	}
	c.shot("11-review-in-btc")
	form, err := chromedp.Run(c.ctx, chromedp.Evaluate[string](`document.querySelector('#pay-form').outerHTML`))
	if err != nil {
		t.Fatal(err)
	}
	// A double click on Pay pays once. (Chromium sends the form once: the
	// second submission replaces the first before it leaves; two requests
	// at once are TestCheckoutPayTwiceAtOnce's, and the form sent again
	// after paying is below.)
	c.run("double click", chromedp.DoubleClick(chromedp.CSS("#pay")))
	c.run("the shop's thanks", title("Thank you for your order"))
	if b := c.balance(carol, "BTC"); b != 1_000_000-13_889 {
		t.Errorf("carol holds %d BTC units after a double click; want one payment, %d", b, 1_000_000-13_889)
	}
	t.Logf("the double click sent %d payment requests", strings.Count(logs.String(), "path="+path+"/pay "))
	// The same form sent again, from drip's page, as a browser resending
	// it does: the receipt, nothing more paid.
	c.run("back on drip", chromedp.Navigate(env.Server.URL+path), title("Receipt"))
	c.run("the form again", chromedp.Evaluate[chromedp.Void](`document.querySelector('main').insertAdjacentHTML('beforeend', `+jsString(form)+`)`))
	c.send("send the form again", "#pay-form button")
	c.run("the receipt", title("Receipt"))
	if b := c.balance(carol, "BTC"); b != 1_000_000-13_889 {
		t.Errorf("carol holds %d BTC units after the form was sent again; want one payment", b)
	}
	c.has("the receipt", "#receipt", "0.00013889 BTC", "Ad slot, one week (12.5 USD)")

	// Cancel: back to the shop's cancel_url; the checkout says so after.
	path = c.buy("script", "Checkout")
	c.run("choose DOGE", chromedp.Click(chromedp.CSS(`input[name="coin"][value="DOGE"]`)))
	c.send("get the price in DOGE", "#choose")
	c.has("the review in DOGE", "#quote", "133.26666667 DOGE", "1 USD = 6.6666666666666667 DOGE")
	c.send("cancel", "#cancel")
	c.run("the shop's cart", title("Your cart"))
	if got := c.location().String(); got != shop.origin+"/cart" {
		t.Errorf("after cancelling the browser is at %s; want the shop's cancel_url", got)
	}
	c.run("the cancelled checkout", chromedp.Navigate(env.Server.URL+path), title("The payment was cancelled"))
	c.has("the cancelled checkout", "#cancelled", "Nothing was paid", "Return to")
	c.shot("12-cancelled")

	// An expired quote: Pay is refused, the page offers a new price.
	path = c.buy("script", "Checkout")
	c.send("get the price", "#choose")
	env.Clock.Advance(16 * time.Minute)
	c.send("pay the expired quote", "#pay")
	c.run("refused", title("Checkout"))
	c.has("the expired quote", "main", "The price you reviewed has expired or changed", "The price has expired", "Get a new price in BTC")
	c.shot("13-expired-quote")
	if b := c.balance(carol, "BTC"); b != 1_000_000-13_889 {
		t.Errorf("carol holds %d BTC units after an expired quote; want nothing moved", b)
	}
	c.send("a new price", "#requote")
	c.has("the new review", "#quote", "0.00022212 BTC", "This price holds until")
	c.send("pay the new price", "#pay")
	c.run("the shop's thanks", title("Thank you for your order"))
	if k := c.checkout(path); k.State != store.CheckoutPaid {
		t.Errorf("the checkout paid at its new price is %s", k.State)
	}

	// A balance too low: the review warns, Pay says so, nothing moves.
	path = c.buy("big", "Checkout")
	c.has("the review above the balance", "#quote", "33333.33333334 DOGE", "paying would be refused")
	c.shot("14-balance-low-review")
	c.send("pay more than held", "#pay")
	c.run("refused", title("Checkout"))
	c.has("the refusal", ".form-error", "Your DOGE balance is too low for this payment of 33333.33333334 DOGE")
	c.shot("15-balance-too-low")
	if b := c.balance(carol, "DOGE"); b != 5_000_000_000 {
		t.Errorf("carol holds %d DOGE units after a refused payment; want nothing moved", b)
	}
	if k := c.checkout(path); k.State != store.CheckoutOpen {
		t.Errorf("the checkout refused for its balance is %s", k.State)
	}

	// No success_url: the payment ends on the receipt.
	c.buy("doge", "Checkout")
	c.run("choose DOGE", chromedp.Click(chromedp.CSS(`input[name="coin"][value="DOGE"]`)))
	c.send("get the price in DOGE", "#choose")
	c.send("pay", "#pay")
	c.run("the receipt", title("Receipt"))
	c.has("the receipt", "#receipt", "20.00000000 DOGE", "Premium membership (3 USD)")
	if n := c.count(`document.querySelectorAll('#return').length`); n != 0 {
		t.Errorf("a receipt without success_url links back to the shop")
	}
	shop.wait(3) // the BTC, the repriced and the DOGE payments
	c.logout()
	env.Reconcile(t)
}

// jsString is s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
