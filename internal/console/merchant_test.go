package console_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dripfaucet/drip/internal/apptest"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/price"
	"github.com/dripfaucet/drip/internal/safehttp"
	"github.com/dripfaucet/drip/internal/store"
	"github.com/dripfaucet/drip/internal/store/storetest"
)

// createCounter is a store that counts the checkouts created through it,
// so a test sees that a refused form created nothing.
type createCounter struct {
	store.Store
	created atomic.Int64
}

func (s *createCounter) Transact(ctx context.Context, fn func(store.Tx) error) error {
	return s.Store.Transact(ctx, func(tx store.Tx) error { return fn(&countingTx{Tx: tx, s: s}) })
}

type countingTx struct {
	store.Tx
	s *createCounter
}

func (t *countingTx) CheckoutCreate(ctx context.Context, c *store.Checkout) (int64, error) {
	t.s.created.Add(1)
	return t.Tx.CheckoutCreate(ctx, c)
}

// shopFixture is a console with a merchant "shop" and a funded buyer
// "bob": 0.01 BTC and 50 DOGE, at the built-in prices (BTC $90,000,
// DOGE $0.15) unless prices says otherwise.
type shopFixture struct {
	env      *apptest.Env
	st       *createCounter
	merchant *drip.User
	buyer    *drip.User
}

func newShopFixture(t *testing.T, st store.Store, prices price.Source) *shopFixture {
	t.Helper()
	f := &shopFixture{st: &createCounter{Store: st}}
	f.env = apptest.New(t, f.st, apptest.Options{Console: true, Prices: prices})
	f.merchant = f.env.Member(t, "shop", false)
	f.buyer = f.env.Member(t, "bob", false)
	for coin, amount := range map[string]int64{"BTC": 1_000_000, "DOGE": 5_000_000_000} {
		if _, err := f.env.App.Ledger.DepositTo(context.Background(), f.buyer.AccountID, coin, amount, nil); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// shopEngines runs fn on SQLite, and on PostgreSQL when it is set up.
func shopEngines(t *testing.T, fn func(t *testing.T, f *shopFixture)) {
	t.Parallel()
	for _, engine := range storetest.Engines(t) {
		t.Run(engine.Name, func(t *testing.T) {
			t.Parallel()
			fn(t, newShopFixture(t, engine.Open(t), nil))
		})
	}
}

// shopForm is a merchant's payment form, with kv's fields set (value
// "<absent>": the field left out).
func shopForm(kv ...string) url.Values {
	v := url.Values{"merchant_username": {"shop"}, "item_description": {"Premium membership, 1 month"}, "amount1": {"19.99"},
		"currency1": {"usd"}, "custom": {"order-42"}, "success_url": {"https://shop.example.com/thanks"},
		"cancel_url": {"https://shop.example.com/cart"}, "submit": {"Pay with drip"}}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "<absent>" {
			v.Del(kv[i])
		} else {
			v.Set(kv[i], kv[i+1])
		}
	}
	return v
}

// fromShop posts a form to path as a browser does from the shop's page,
// another site: Origin and Sec-Fetch-Site say so, and no cookie of
// drip's goes with it.
func fromShop(t *testing.T, env *apptest.Env, path, contentType string, body io.Reader) *apptest.Page {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, env.Server.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Origin", "https://shop.example.com")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	return send(t, req)
}

func send(t *testing.T, req *http.Request) *apptest.Page {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return &apptest.Page{Status: resp.StatusCode, Location: resp.Header.Get("Location"), Header: resp.Header, Body: string(raw)}
}

// checkout posts form from the shop's site and returns the checkout's
// page it is sent to.
func (f *shopFixture) checkout(t *testing.T, form url.Values) string {
	t.Helper()
	p := fromShop(t, f.env, "/merchant/webscr", "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
	if p.Status != http.StatusSeeOther || !strings.HasPrefix(p.Location, "/merchant/checkout/chk_") {
		t.Fatalf("post the payment form: %d to %q\n%s", p.Status, p.Location, p.Body)
	}
	return p.Location
}

// get is what a checkout's page says, as the store has it.
func (f *shopFixture) get(t *testing.T, path string) *store.Checkout {
	t.Helper()
	c, err := f.env.App.Merchant.Get(context.Background(), strings.TrimPrefix(path, "/merchant/checkout/"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (f *shopFixture) balances(t *testing.T, coin string) (buyer, merchant int64) {
	t.Helper()
	return f.env.Balance(t, f.buyer.AccountID, coin), f.env.Balance(t, f.merchant.AccountID, coin)
}

// A shop's form is posted from any site, the one POST the cross-origin
// check lets through (D15): it makes a checkout and sends the browser to
// its page. Every other form still refuses another site, the checkout's
// own Pay and Cancel first of all; other methods are refused.
func TestWebscrTakesTheShopsForm(t *testing.T) {
	t.Parallel()
	f := newShopFixture(t, storetest.OpenSQLite(t), nil)
	path := f.checkout(t, shopForm())
	c := f.get(t, path)
	if c.State != store.CheckoutOpen || c.MerchantID != f.merchant.ID || c.Amount1 != 1_999_000_000 || c.Currency1 != "USD" || c.Custom != "order-42" {
		t.Errorf("the checkout made: %+v", c)
	}

	// A form sent as multipart/form-data, as some shops do.
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, vs := range shopForm("item_description", "Multipart item") {
		_ = mw.WriteField(k, vs[0])
	}
	_ = mw.Close()
	p := fromShop(t, f.env, "/merchant/webscr", mw.FormDataContentType(), &body)
	wantStatus(t, "a multipart form", p, http.StatusSeeOther, p.Location)
	if got := f.get(t, p.Location).Item; got != "Multipart item" {
		t.Errorf("the multipart form's item: %q", got)
	}

	for _, method := range []string{http.MethodGet, http.MethodPut, http.MethodDelete} {
		req, _ := http.NewRequest(method, f.env.Server.URL+"/merchant/webscr", nil)
		p := send(t, req)
		if p.Status != http.StatusMethodNotAllowed || p.Header.Get("Allow") != http.MethodPost {
			t.Errorf("%s /merchant/webscr: %d, Allow %q; want 405 allowing POST", method, p.Status, p.Header.Get("Allow"))
		}
	}

	// Quoted by the buyer, the checkout's forms refuse another site.
	b := f.env.Browser(t).LogIn(t, "bob")
	wantStatus(t, "quote", b.Post(t, path+"/quote", "coin", "BTC"), http.StatusSeeOther, path)
	q := f.get(t, path).Quote
	for _, action := range []string{"/pay", "/cancel", "/quote"} {
		form := url.Values{"coin": {q.Coin}, "amount": {drip.FormatCoinsFixed(q.Amount)}}
		p := fromShop(t, f.env, path+action, "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
		wantStatus(t, "a cross-site "+action, p, http.StatusForbidden, "")
		wantBody(t, "a cross-site "+action, p, "sent from another site")
	}
	p = fromShop(t, f.env, "/login", "application/x-www-form-urlencoded", strings.NewReader("identifier=bob&password=x"))
	wantStatus(t, "a cross-site login", p, http.StatusForbidden, "")
	if c := f.get(t, path); c.State != store.CheckoutOpen {
		t.Errorf("after the cross-site posts the checkout is %s", c.State)
	}
	if buyer, _ := f.balances(t, "BTC"); buyer != 1_000_000 {
		t.Errorf("after the cross-site posts bob holds %d BTC units", buyer)
	}
}

// A bad form gets a page (HTTP 400) that names the field and what is
// wrong with it, and creates nothing: each field missing, too long or
// malformed, a javascript: URL, an unknown or suspended merchant.
func TestWebscrRefusesABadForm(t *testing.T) {
	t.Parallel()
	f := newShopFixture(t, storetest.OpenSQLite(t), nil)
	gone := f.env.Member(t, "gone", false)
	if err := f.env.App.Users.SetStatus(context.Background(), gone, drip.UserSuspended); err != nil {
		t.Fatal(err)
	}
	long := func(n int) string { return strings.Repeat("é", n) }
	for _, c := range []struct {
		field, value, message string
	}{
		{"merchant_username", "<absent>", "is required"},
		{"merchant_username", strings.Repeat("a", 65), "longer than 64"},
		{"merchant_username", "nobody", "is not a drip user"},
		{"merchant_username", "gone", "suspended"},
		{"item_description", "<absent>", "is required"},
		{"item_description", "", "is required"},
		{"item_description", long(501), "longer than 500"},
		{"amount1", "<absent>", "is required"},
		{"amount1", "0", "above zero"},
		{"amount1", "-5", "digits"},
		{"amount1", "1e3", "digits"},
		{"amount1", "0.000000001", "8 decimals"},
		{"currency1", "<absent>", "is required"},
		{"currency1", "U$D", "currency symbol"},
		{"currency1", "XYZ", "not a coin drip accepts"},
		{"currency2", "USD", "not USD"},
		{"currency2", "XYZ", "not a coin drip accepts"},
		{"custom", long(501), "longer than 500"},
		{"callback_url", "javascript:alert(1)", "http or https"},
		{"callback_url", "http://127.0.0.1:8080/ipn", ""},
		{"callback_url", "https://shop.example.com/" + strings.Repeat("a", 2048), "longer than 2048"},
		{"success_url", "javascript:alert(document.cookie)", "http or https"},
		{"success_url", "/thanks", "http or https"},
		{"cancel_url", "data:text/html,<script>alert(1)</script>", "http or https"},
		{"cancel_url", "https://user:pw@shop.example.com/", "user name"},
	} {
		p := fromShop(t, f.env, "/merchant/webscr", "application/x-www-form-urlencoded", strings.NewReader(shopForm(c.field, c.value).Encode()))
		what := c.field + "=" + c.value
		if len(what) > 60 {
			what = what[:60] + "..."
		}
		if p.Status != http.StatusBadRequest || p.Location != "" {
			t.Errorf("%s: %d to %q; want 400\n%s", what, p.Status, p.Location, p.Body)
			continue
		}
		wantBody(t, what, p, `<code id="field">`+c.field+`</code>`, c.message, "Nothing was created")
		if ct := p.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
			t.Errorf("%s: Content-Type %q", what, ct)
		}
		// The way back is the form's cancel_url, when it is a web address.
		if c.field == "cancel_url" {
			wantNot(t, what, p, `id="back"`, "data:text", "user:pw")
		} else {
			wantBody(t, what, p, `<a class="button" id="back" href="https://shop.example.com/cart">Return to shop.example.com</a>`)
		}
		wantNot(t, what, p, "<script>alert")
	}
	if n := f.st.created.Load(); n != 0 {
		t.Errorf("the refused forms created %d checkouts", n)
	}
	// A form too large to read is refused, not read to its end.
	p := fromShop(t, f.env, "/merchant/webscr", "application/x-www-form-urlencoded",
		strings.NewReader(shopForm("custom", strings.Repeat("x", 70<<10)).Encode()))
	wantStatus(t, "a form of 70 KB", p, http.StatusBadRequest, "")
	if n := f.st.created.Load(); n != 0 {
		t.Errorf("the refused forms created %d checkouts", n)
	}
}

// A buyer not logged in is asked to log in, with the second factor when
// they have one, and comes back to the same checkout; the login's next
// is a checkout's page exactly, nothing else.
func TestCheckoutLoginComesBack(t *testing.T) {
	t.Parallel()
	f := newShopFixture(t, storetest.OpenSQLite(t), nil)
	path := f.checkout(t, shopForm())
	next := url.QueryEscape(path)

	b := f.env.Browser(t)
	p := b.Get(t, path)
	wantStatus(t, "the checkout logged out", p, http.StatusOK, "")
	wantBody(t, "the checkout logged out", p, `<strong id="merchant">shop</strong>`, "Premium membership, 1 month", `id="price">19.99 USD<`,
		`href="/login?next=`+next+`">Log in to pay</a>`, `href="/signup">Sign up</a>`, `action="`+path+`/cancel"`)
	wantNot(t, "the checkout logged out", p, `action="`+path+`/pay"`, `action="`+path+`/quote"`)
	// Pay and quote without a session go to log in, and back.
	wantStatus(t, "pay logged out", b.Post(t, path+"/pay", "coin", "BTC", "amount", "1"), http.StatusSeeOther, "/login?next="+next)
	wantStatus(t, "quote logged out", b.Post(t, path+"/quote", "coin", "BTC"), http.StatusSeeOther, "/login?next="+next)

	p = b.Get(t, "/login?next="+next)
	wantBody(t, "the login page", p, `<input type="hidden" name="next" value="`+path+`">`, "you come back to your checkout")
	// A wrong password keeps next.
	p = b.Post(t, "/login", "identifier", "bob", "password", "wrong password", "next", path)
	wantBody(t, "a wrong password", p, `<input type="hidden" name="next" value="`+path+`">`)
	wantStatus(t, "log in", b.Post(t, "/login", "identifier", "bob", "password", apptest.Password, "next", path), http.StatusSeeOther, path)
	wantBody(t, "the checkout logged in", b.Get(t, path), "Choose the coin you pay with")

	// With the second factor: the code page carries next, and lands there.
	_, _, secret := hooksOwner(t, f.env, "carol")
	c := f.env.Browser(t)
	wantStatus(t, "log in with 2FA", c.Post(t, "/login", "identifier", "carol", "password", apptest.Password, "next", path),
		http.StatusSeeOther, "/login/code?next="+next)
	wantBody(t, "the code page", c.Get(t, "/login/code?next="+next), `<input type="hidden" name="next" value="`+path+`">`)
	if p := c.Post(t, "/login/code", "code", "000000", "next", path); p.Status == http.StatusSeeOther {
		t.Errorf("a wrong code: %d to %q", p.Status, p.Location)
	} else {
		wantBody(t, "a wrong code", p, `<input type="hidden" name="next" value="`+path+`">`)
	}
	wantStatus(t, "the code", c.Post(t, "/login/code", "code", hooksCode(t, f.env, secret), "next", path), http.StatusSeeOther, path)
	wantBody(t, "the checkout after 2FA", c.Get(t, path), "Choose the coin you pay with")

	// Anything but a checkout's page, or one of the console's, is dropped:
	// the login lands on the wallet.
	for _, bad := range []string{"https://evil.example/", "//evil.example/merchant/checkout/chk_1", path + "/pay", path + "?x=1",
		"/merchant/checkout/", "/merchant/checkout/chk_1%2F..%2F..", "/merchant/webscr"} {
		wantNot(t, "the login page with next "+bad, f.env.Browser(t).Get(t, "/login?next="+url.QueryEscape(bad)), `name="next"`)
	}
	wantStatus(t, "log in with next off the site", f.env.Browser(t).Post(t, "/login", "identifier", "bob", "password", apptest.Password,
		"next", "https://evil.example/merchant/checkout/chk_1"), http.StatusSeeOther, "/wallet")
}

var paidRE = `id="transaction">#`

// The buyer picks the coin (currency2 blank), reviews the price held 15
// minutes with its rate, source and expiry, and pays once: one transfer,
// to the shop's success_url; the form sent again shows the receipt and
// pays nothing more. Someone else sees only that it is paid. Both lists
// show it; the token verifies once.
func TestCheckoutPay(t *testing.T) {
	shopEngines(t, func(t *testing.T, f *shopFixture) {
		path := f.checkout(t, shopForm())
		b := f.env.Browser(t).LogIn(t, "bob")
		p := b.Get(t, path)
		wantStatus(t, "the checkout", p, http.StatusOK, "")
		// 19.99 USD at BTC $90,000 is 0.000222111..., rounded up.
		wantBody(t, "the coin picker", p, "Choose the coin you pay with", `name="coin" value="BTC" checked`, "about 0.00022212 BTC",
			"you hold 0.01000000", `value="DOGE"`, "about 133.26666667 DOGE", `action="`+path+`/quote"`)
		if csp := p.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "form-action 'self' https://shop.example.com;") {
			t.Errorf("the checkout's policy does not let Pay and Cancel end at the shop: %q", csp)
		}
		wantStatus(t, "choose BTC", b.Post(t, path+"/quote", "coin", "btc"), http.StatusSeeOther, path)
		p = b.Get(t, path)
		wantBody(t, "the review", p, "Review and pay", `id="amount">0.00022212 BTC<`, `id="rate">1 USD = 0.0000111111111111 BTC<`,
			"drip&#39;s built-in price table, at 2026-03-14 15:09:26 UTC", "This price holds until 15:24 UTC.", `id="balance">0.01000000 BTC<`,
			`<input type="hidden" name="coin" value="BTC">`, `<input type="hidden" name="amount" value="0.00022212">`, `action="`+path+`/cancel"`,
			"Pay with another coin")
		wantNot(t, "the review", p, `id="short"`)

		f.env.Clock.Advance(time.Minute)
		wantStatus(t, "pay", b.Post(t, path+"/pay", "coin", "BTC", "amount", "0.00022212"), http.StatusSeeOther, "https://shop.example.com/thanks")
		if buyer, shop := f.balances(t, "BTC"); buyer != 1_000_000-22_212 || shop != 22_212 {
			t.Fatalf("after paying: bob %d, shop %d", buyer, shop)
		}
		// A double click, or the form sent again: the receipt, nothing more.
		wantStatus(t, "pay again", b.Post(t, path+"/pay", "coin", "BTC", "amount", "0.00022212"), http.StatusSeeOther, path)
		if buyer, shop := f.balances(t, "BTC"); buyer != 1_000_000-22_212 || shop != 22_212 {
			t.Fatalf("after paying twice: bob %d, shop %d", buyer, shop)
		}
		c := f.get(t, path)
		p = b.Get(t, path)
		wantStatus(t, "the receipt", p, http.StatusOK, "")
		wantBody(t, "the receipt", p, "<h1>Receipt</h1>", `id="paid">0.00022212 BTC<`, "<dd>shop</dd>", "Premium membership, 1 month (19.99 USD)",
			`id="paid-at">2026-03-14 15:10:26 UTC<`, paidRE+strconv.FormatInt(c.TransferID, 10), `href="https://shop.example.com/thanks">Return to shop.example.com</a>`)
		wantNot(t, "the receipt", p, `action="`+path+`/pay"`)

		// Anyone else: paid, and nothing of who paid or what.
		f.env.Member(t, "carol", false)
		carol := f.env.Browser(t).LogIn(t, "carol")
		for who, v := range map[string]*apptest.Browser{"carol": carol, "a visitor": f.env.Browser(t)} {
			p := v.Get(t, path)
			wantStatus(t, who+" on the paid checkout", p, http.StatusOK, "")
			wantBody(t, who+" on the paid checkout", p, "<h1>Checkout closed</h1>", "it can no longer be paid")
			wantNot(t, who+" on the paid checkout", p, "bob", "0.00022212", paidRE, `action="`+path+`/pay"`)
		}
		dave := f.env.Member(t, "dave", false)
		if _, err := f.env.App.Ledger.DepositTo(context.Background(), dave.AccountID, "BTC", 1_000_000, nil); err != nil {
			t.Fatal(err)
		}
		p = f.env.Browser(t).LogIn(t, "dave").Post(t, path+"/pay", "coin", "BTC", "amount", "0.00022212")
		wantStatus(t, "dave paying the paid checkout", p, http.StatusConflict, "")
		wantBody(t, "dave paying the paid checkout", p, "paid already")
		wantNot(t, "dave paying the paid checkout", p, "bob")
		wantStatus(t, "cancelling the paid checkout", carol.Post(t, path+"/cancel"), http.StatusConflict, "")
		if c := f.get(t, path); c.State != store.CheckoutPaid || c.PayerID != f.buyer.ID {
			t.Errorf("after the others: %s by %d", c.State, c.PayerID)
		}

		// The buyer's payments, the shop's payments received.
		p = b.Get(t, "/wallet/payments")
		wantBody(t, "bob's payments", p, `<td data-label="Paid to">shop</td>`, "Premium membership, 1 month", "19.99 USD", "0.00022212 BTC",
			"#"+strconv.FormatInt(c.TransferID, 10), "2026-03-14 15:10:26", `href="/wallet/payments" aria-current="page"`)
		s := f.env.Browser(t).LogIn(t, "shop")
		p = s.Get(t, "/wallet/received")
		wantBody(t, "shop's payments", p, `<td data-label="Buyer">bob</td>`, "Premium membership, 1 month", "19.99 USD", "0.00022212 BTC",
			"order-42", "not verified", `href="/wallet/received/`+c.PublicID+`"`)
		wantBody(t, "bob's payments received", b.Get(t, "/wallet/received"), "No payments received yet")
		wantBody(t, "shop's payments made", s.Get(t, "/wallet/payments"), "No payments yet")
		p = s.Get(t, "/wallet/received/"+c.PublicID)
		wantStatus(t, "the payment's page", p, http.StatusOK, "")
		wantBody(t, "the payment's page", p, "0.00022212 BTC from bob", "1 USD = 0.0000111111111111 BTC", "order-42", "not verified",
			"gave no <code>callback_url</code>")
		wantStatus(t, "bob on the shop's payment", b.Get(t, "/wallet/received/"+c.PublicID), http.StatusNotFound, "")
		wantStatus(t, "the shop's unknown payment", s.Get(t, "/wallet/received/chk_nope"), http.StatusNotFound, "")

		// The token verifies once (D56); HEAD does not use it up.
		token, err := f.env.App.Merchant.Token(c)
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest(http.MethodHead, f.env.Server.URL+"/merchant/get-payment/"+token, nil)
		if p := send(t, req); p.Status != http.StatusMethodNotAllowed {
			t.Errorf("HEAD get-payment: %d", p.Status)
		}
		want := map[string]any{"valid": true, "transaction_id": strconv.FormatInt(c.TransferID, 10), "merchant_username": "shop",
			"payer_username": "bob", "amount1": "19.99000000", "currency1": "USD", "amount2": "0.00022212", "currency2": "BTC", "custom": "order-42"}
		if got := verify(t, f.env, token); !equalJSON(got, want) {
			t.Errorf("the first verification: %v; want %v", got, want)
		}
		for _, tok := range []string{token, "nope", strings.Repeat("A", 43)} {
			if got := verify(t, f.env, tok); got["valid"] != false || got["payer_username"] != "" {
				t.Errorf("verifying %q: %v; want valid false and nothing else", tok, got)
			}
		}
		wantBody(t, "the shop's list after verifying", s.Get(t, "/wallet/received"), `<span class="badge on">verified</span>`)
		f.env.Reconcile(t)
	})
}

// Pay sent many times at once by the same buyer (a double click, a form
// sent again while the first is on its way) pays once; every request is
// answered by the shop's success_url or the receipt.
func TestCheckoutPayTwiceAtOnce(t *testing.T) {
	shopEngines(t, func(t *testing.T, f *shopFixture) {
		path := f.checkout(t, shopForm())
		b := f.env.Browser(t).LogIn(t, "bob")
		wantStatus(t, "choose BTC", b.Post(t, path+"/quote", "coin", "BTC"), http.StatusSeeOther, path)
		jar, _ := cookiejar.New(nil)
		client := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		same := func(method, path string, form url.Values) (*http.Response, error) {
			req, err := http.NewRequest(method, f.env.Server.URL+path, strings.NewReader(form.Encode()))
			if err != nil {
				return nil, err
			}
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Origin", f.env.Server.URL)
			return client.Do(req)
		}
		resp, err := same(http.MethodPost, "/login", url.Values{"identifier": {"bob"}, "password": {apptest.Password}})
		if err != nil || resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("log in: %v %v", resp, err)
		}
		resp.Body.Close()
		const n = 8
		where := make(chan string, n)
		for range n {
			go func() {
				resp, err := same(http.MethodPost, path+"/pay", url.Values{"coin": {"BTC"}, "amount": {"0.00022212"}})
				if err != nil {
					where <- err.Error()
					return
				}
				resp.Body.Close()
				where <- strconv.Itoa(resp.StatusCode) + " " + resp.Header.Get("Location")
			}()
		}
		for range n {
			if got := <-where; got != "303 https://shop.example.com/thanks" && got != "303 "+path {
				t.Errorf("a payment sent %d times at once answered %q; want the success_url or the receipt", n, got)
			}
		}
		if buyer, shop := f.balances(t, "BTC"); buyer != 1_000_000-22_212 || shop != 22_212 {
			t.Errorf("after %d payments at once: bob %d, shop %d; want one payment", n, buyer, shop)
		}
		wantBody(t, "the receipt", b.Get(t, path), "<h1>Receipt</h1>")
		f.env.Reconcile(t)
	})
}

// verify calls the verification as a merchant's server does: no cookie,
// no Origin.
func verify(t *testing.T, env *apptest.Env, token string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, env.Server.URL+"/merchant/get-payment/"+token, nil)
	p := send(t, req)
	if p.Status != http.StatusOK || p.Header.Get("Content-Type") != "application/json" || p.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("get-payment: %d, %q, %q\n%s", p.Status, p.Header.Get("Content-Type"), p.Header.Get("Cache-Control"), p.Body)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(p.Body), &got); err != nil {
		t.Fatalf("get-payment: %v\n%s", err, p.Body)
	}
	return got
}

func equalJSON(a, b map[string]any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// An expired quote is not paid: the page says it expired and offers a new
// one; a balance too low says so and moves nothing; the merchant cannot
// pay themself; an unknown checkout is not found.
func TestCheckoutRefusals(t *testing.T) {
	shopEngines(t, func(t *testing.T, f *shopFixture) {
		path := f.checkout(t, shopForm("currency2", "<absent>"))
		b := f.env.Browser(t).LogIn(t, "bob")
		wantStatus(t, "choose BTC", b.Post(t, path+"/quote", "coin", "BTC"), http.StatusSeeOther, path)
		f.env.Clock.Advance(15*time.Minute + time.Second)
		p := b.Get(t, path)
		wantBody(t, "the expired quote", p, "The price has expired", "held until 15:24 UTC, and has expired", `id="requote"`, "Pay with another coin")
		wantNot(t, "the expired quote", p, `action="`+path+`/pay"`)
		p = b.Post(t, path+"/pay", "coin", "BTC", "amount", "0.00022212")
		wantStatus(t, "paying the expired quote", p, http.StatusConflict, "")
		wantBody(t, "paying the expired quote", p, "has expired or changed", "The price has expired")
		// A quote changed under the page (another coin chosen meanwhile).
		wantStatus(t, "a new quote", b.Post(t, path+"/quote", "coin", "BTC"), http.StatusSeeOther, path)
		wantBody(t, "the new quote", b.Get(t, path), "This price holds until 15:39 UTC.")
		wantStatus(t, "paying another amount", b.Post(t, path+"/pay", "coin", "BTC", "amount", "0.00000001"), http.StatusConflict, "")
		wantStatus(t, "paying another coin", b.Post(t, path+"/pay", "coin", "DOGE", "amount", "0.00022212"), http.StatusConflict, "")
		wantStatus(t, "paying nonsense", b.Post(t, path+"/pay", "coin", "BTC", "amount", "lots"), http.StatusConflict, "")
		if buyer, shop := f.balances(t, "BTC"); buyer != 1_000_000 || shop != 0 {
			t.Fatalf("after the refused payments: bob %d, shop %d", buyer, shop)
		}

		// A balance too low: the review warns, Pay is refused, nothing moves.
		big := f.checkout(t, shopForm("amount1", "5000", "currency2", "DOGE"))
		p = b.Get(t, big) // currency2 named: quoted on the first view
		wantBody(t, "the review of a price above the balance", p, `id="amount">33333.33333334 DOGE<`, `id="short"`, "paying would be refused", `id="balance">50.00000000 DOGE<`)
		wantNot(t, "a checkout in DOGE", p, "Choose the coin", "Pay with another coin")
		p = b.Post(t, big+"/pay", "coin", "DOGE", "amount", "33333.33333334")
		wantStatus(t, "paying more than held", p, http.StatusUnprocessableEntity, "")
		wantBody(t, "paying more than held", p, "Your DOGE balance is too low for this payment of 33333.33333334 DOGE")
		if buyer, shop := f.balances(t, "DOGE"); buyer != 5_000_000_000 || shop != 0 {
			t.Fatalf("after a payment above the balance: bob %d, shop %d", buyer, shop)
		}
		if c := f.get(t, big); c.State != store.CheckoutOpen {
			t.Errorf("the checkout refused for its balance is %s", c.State)
		}
		// A checkout in DOGE is quoted in DOGE only.
		p = b.Post(t, big+"/quote", "coin", "BTC")
		wantStatus(t, "quoting another coin", p, http.StatusUnprocessableEntity, "")
		wantBody(t, "quoting another coin", p, "This checkout is paid in DOGE.")

		// The merchant on their own checkout.
		p = f.env.Browser(t).LogIn(t, "shop").Get(t, big)
		wantBody(t, "the merchant's own checkout", p, "You cannot pay yourself")
		wantNot(t, "the merchant's own checkout", p, `action="`+big+`/pay"`)

		wantStatus(t, "an unknown checkout", b.Get(t, "/merchant/checkout/chk_nope"), http.StatusNotFound, "")
		wantStatus(t, "paying an unknown checkout", b.Post(t, "/merchant/checkout/chk_nope/pay", "coin", "BTC", "amount", "1"), http.StatusNotFound, "")
		f.env.Reconcile(t)
	})
}

// Cancel goes back to the shop's cancel_url, or to a page that says the
// payment was cancelled; a cancelled checkout is paid by no one.
func TestCheckoutCancel(t *testing.T) {
	t.Parallel()
	f := newShopFixture(t, storetest.OpenSQLite(t), nil)
	b := f.env.Browser(t).LogIn(t, "bob")
	path := f.checkout(t, shopForm())
	wantStatus(t, "choose BTC", b.Post(t, path+"/quote", "coin", "BTC"), http.StatusSeeOther, path)
	wantStatus(t, "cancel", b.Post(t, path+"/cancel"), http.StatusSeeOther, "https://shop.example.com/cart")
	p := b.Get(t, path)
	wantBody(t, "the cancelled checkout", p, "<h1>The payment was cancelled</h1>", "Nothing was paid",
		`href="https://shop.example.com/cart">Return to shop.example.com</a>`)
	wantNot(t, "the cancelled checkout", p, `action="`+path+`/pay"`)
	p = b.Post(t, path+"/pay", "coin", "BTC", "amount", "0.00022212")
	wantStatus(t, "paying the cancelled checkout", p, http.StatusConflict, "")
	wantBody(t, "paying the cancelled checkout", p, "This checkout was cancelled.")
	if buyer, shop := f.balances(t, "BTC"); buyer != 1_000_000 || shop != 0 {
		t.Fatalf("after paying a cancelled checkout: bob %d, shop %d", buyer, shop)
	}

	// Without a cancel_url, and before logging in: the page says so.
	bare := f.checkout(t, shopForm("cancel_url", "<absent>", "success_url", "<absent>"))
	v := f.env.Browser(t)
	wantStatus(t, "cancel logged out", v.Post(t, bare+"/cancel"), http.StatusSeeOther, bare)
	p = v.Get(t, bare)
	wantBody(t, "the cancelled checkout", p, "<h1>The payment was cancelled</h1>")
	wantNot(t, "the cancelled checkout", p, `id="return"`)
	if csp := p.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "form-action 'self';") {
		t.Errorf("a checkout without the shop's URLs: %q", csp)
	}
}

// Without a fresh price the checkout says so and takes nothing (D60).
func TestCheckoutWithoutAPrice(t *testing.T) {
	t.Parallel()
	prices := price.Builtin()
	delete(prices, "DOGE")
	f := newShopFixture(t, storetest.OpenSQLite(t), price.Static(prices, "static", nil))
	b := f.env.Browser(t).LogIn(t, "bob")
	path := f.checkout(t, shopForm("currency2", "doge"))
	p := b.Get(t, path)
	wantStatus(t, "a checkout in DOGE without its price", p, http.StatusServiceUnavailable, "")
	wantBody(t, "a checkout in DOGE without its price", p, "There is no current DOGE price", `id="get-price"`)
	// Choosing: DOGE is not offered.
	open := f.checkout(t, shopForm())
	p = b.Get(t, open)
	wantBody(t, "the coin picker without DOGE's price", p, `value="BTC"`)
	wantNot(t, "the coin picker without DOGE's price", p, `value="DOGE"`)
}

// What a shop's form carries (the item, custom) and what a user chose
// (the merchant's name is a username) is escaped on every page.
func TestCheckoutEscapes(t *testing.T) {
	t.Parallel()
	f := newShopFixture(t, storetest.OpenSQLite(t), nil)
	item, custom := `<script>alert(1)</script>`, `"><img src=x onerror=alert(2)>`
	path := f.checkout(t, shopForm("item_description", item, "custom", custom, "success_url", "<absent>"))
	visitor := f.env.Browser(t)
	wantBody(t, "the checkout logged out", visitor.Get(t, path), "&lt;script&gt;alert(1)&lt;/script&gt;")
	b := f.env.Browser(t).LogIn(t, "bob")
	wantStatus(t, "choose BTC", b.Post(t, path+"/quote", "coin", "BTC"), http.StatusSeeOther, path)
	pages := map[string]*apptest.Page{"the review": b.Get(t, path)}
	wantStatus(t, "pay", b.Post(t, path+"/pay", "coin", "BTC", "amount", "0.00022212"), http.StatusSeeOther, path)
	pages["the receipt"] = b.Get(t, path)
	pages["the closed checkout"] = visitor.Get(t, path)
	pages["bob's payments"] = b.Get(t, "/wallet/payments")
	s := f.env.Browser(t).LogIn(t, "shop")
	pages["shop's payments"] = s.Get(t, "/wallet/received")
	pages["the payment's page"] = s.Get(t, "/wallet/received/"+f.get(t, path).PublicID)
	for what, p := range pages {
		wantNot(t, what, p, item, custom, "<img")
		wantBody(t, what, p, "&lt;script&gt;alert(1)&lt;/script&gt;")
	}
	for _, what := range []string{"shop's payments", "the payment's page"} {
		wantBody(t, what, pages[what], "&#34;&gt;&lt;img src=x onerror=alert(2)&gt;")
	}
}

// The merchant's payment page shows the callback's attempts (D55) and
// resends a callback that is not pending; no one else's.
func TestPaymentReceivedCallback(t *testing.T) {
	t.Parallel()
	var got atomic.Int64
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Add(1)
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(`<script>alert("from the shop")</script>`))
	}))
	t.Cleanup(site.Close)
	f := &shopFixture{st: &createCounter{Store: storetest.OpenSQLite(t)}}
	f.env = apptest.New(t, f.st, apptest.Options{Console: true, Webhooks: safehttp.Options{AllowInsecure: true}})
	f.merchant, f.buyer = f.env.Member(t, "shop", false), f.env.Member(t, "bob", false)
	if _, err := f.env.App.Ledger.DepositTo(context.Background(), f.buyer.AccountID, "BTC", 1_000_000, nil); err != nil {
		t.Fatal(err)
	}
	path := f.checkout(t, shopForm("callback_url", site.URL+"/ipn"))
	b := f.env.Browser(t).LogIn(t, "bob")
	wantStatus(t, "choose BTC", b.Post(t, path+"/quote", "coin", "BTC"), http.StatusSeeOther, path)
	wantStatus(t, "pay", b.Post(t, path+"/pay", "coin", "BTC", "amount", "0.00022212"), http.StatusSeeOther, "https://shop.example.com/thanks")
	id := f.get(t, path).PublicID
	s := f.env.Browser(t).LogIn(t, "shop")
	p := s.Get(t, "/wallet/received/"+id)
	wantBody(t, "the payment before its callback", p, site.URL+"/ipn", "pending", "No attempt yet")
	wantNot(t, "the payment before its callback", p, `id="resend"`)
	wantStatus(t, "resend a pending callback", s.Post(t, "/wallet/received/"+id+"/resend"), http.StatusConflict, "")

	if _, err := f.env.App.Callbacks.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got.Load() != 1 {
		t.Fatalf("the shop received %d callbacks; want 1", got.Load())
	}
	p = s.Get(t, "/wallet/received/"+id)
	wantBody(t, "the payment after a failed attempt", p, "Attempt 1", "HTTP 500", "next attempt 2026-03-14 15:14:26 UTC",
		"&lt;script&gt;alert(&#34;from the shop&#34;)&lt;/script&gt;")
	wantNot(t, "the payment after a failed attempt", p, `<script>alert`)

	// Verified, it is delivered: the merchant may resend it.
	token, err := f.env.App.Merchant.Token(f.get(t, path))
	if err != nil {
		t.Fatal(err)
	}
	if v := verify(t, f.env, token); v["valid"] != true {
		t.Fatalf("verify: %v", v)
	}
	p = s.Get(t, "/wallet/received/"+id)
	wantBody(t, "the verified payment", p, `<span class="badge on">delivered</span>`, `id="resend"`)
	wantStatus(t, "bob resending the shop's callback", b.Post(t, "/wallet/received/"+id+"/resend"), http.StatusNotFound, "")
	wantStatus(t, "resend", s.Post(t, "/wallet/received/"+id+"/resend"), http.StatusSeeOther, "/wallet/received/"+id+"?done=callback-resent")
	wantBody(t, "the resent callback", s.Get(t, "/wallet/received/"+id+"?done=callback-resent"), "The callback is queued again", "pending")
}
