package client_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/dripfaucet/drip/client"
	"github.com/dripfaucet/drip/internal/app"
	"github.com/dripfaucet/drip/internal/safehttp"
	"github.com/dripfaucet/drip/internal/store/sqlite"
	"github.com/dripfaucet/drip/internal/user"
)

// A shop takes payment with drip's hosted checkout (spec 4.4). Its page
// carries a plain HTML form that posts to drip:
//
//	<form method="post" action="https://drip.example.com/merchant/webscr">
//	  <input type="hidden" name="merchant_username" value="shop">
//	  <input type="hidden" name="item_description" value="Premium membership, 1 month">
//	  <input type="hidden" name="amount1" value="19.99">
//	  <input type="hidden" name="currency1" value="USD">
//	  <input type="hidden" name="custom" value="order-42">
//	  <input type="hidden" name="callback_url" value="https://shop.example.com/drip-callback">
//	  <input type="hidden" name="success_url" value="https://shop.example.com/thanks">
//	  <input type="hidden" name="cancel_url" value="https://shop.example.com/cart">
//	  <input type="submit" name="submit" value="Pay with drip">
//	</form>
//
// After the buyer pays on drip's page, drip POSTs the payment to the
// callback URL. The shop trusts none of the callback's fields: it takes
// the token and asks drip, server to server, whether the payment is
// valid, and delivers only then, once (a token verifies once).
func ExampleVerifyPayment() {
	dripURL, pay, stop := startDripMerchant()
	defer stop()

	delivered := make(chan string, 1)
	shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, err := client.CallbackToken(r)
		if err != nil {
			http.Error(w, "no token", http.StatusBadRequest)
			return
		}
		p, err := client.VerifyPayment(r.Context(), dripURL, token)
		if err != nil {
			// No answer: drip calls back again later (D55).
			http.Error(w, "verification failed", http.StatusServiceUnavailable)
			return
		}
		// Valid, and for this order: the price, the currency, the shop.
		if p.Valid && p.MerchantUsername == "shop" && p.Custom == "order-42" && p.Amount1 == "19.99000000" && p.Currency1 == "USD" {
			delivered <- fmt.Sprintf("%s: %s paid %s %s as %s %s; delivering", p.Custom, p.PayerUsername, p.Amount1, p.Currency1, p.Amount2, p.Currency2)
		}
		w.WriteHeader(http.StatusOK) // 200 exactly: drip stops calling back
	}))
	defer shop.Close()

	// The buyer's part happens in the browser, on drip's pages; here it
	// is done through drip's checkout service.
	token := pay(shop.URL + "/drip-callback")
	select {
	case msg := <-delivered:
		fmt.Println(msg)
	case <-time.After(30 * time.Second):
		fmt.Println("no callback")
	}
	// Verifying the same token again: not valid any more.
	again, err := client.VerifyPayment(context.Background(), dripURL, token)
	must(err)
	fmt.Println("verified again: valid", again.Valid)
	// Output:
	// order-42: buyer paid 19.99000000 USD as 0.00022212 BTC; delivering
	// verified again: valid false
}

// startDripMerchant runs drip with a shop and a funded buyer, and returns
// its URL and a function that makes the buyer pay the shop's order with
// the given callback URL, returning the payment's token as the callback
// carried it.
func startDripMerchant() (baseURL string, pay func(callback string) string, stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	dir, err := os.MkdirTemp("", "drip-merchant-")
	must(err)
	st, err := sqlite.Open(ctx, filepath.Join(dir, "drip.db"))
	must(err)
	// The shop's server runs on this machine: the development option
	// admits loopback callback URLs (never in production, D53).
	a, err := app.New(ctx, st, app.Options{Webhooks: safehttp.Options{AllowInsecure: true}})
	must(err)
	_, err = a.Users.Create(ctx, user.CreateParams{Username: "shop", Email: "shop@example.com", Verified: true})
	must(err)
	buyer, err := a.Users.Create(ctx, user.CreateParams{Username: "buyer", Email: "buyer@example.com", Verified: true})
	must(err)
	_, err = a.Ledger.DepositTo(ctx, buyer.AccountID, "BTC", 1_000_000, nil)
	must(err)
	// The checkout's pages and the verification are the web console's.
	srv := httptest.NewUnstartedServer(nil)
	must(a.OpenAccounts(ctx, "http://"+srv.Listener.Addr().String(), app.AccountLimiters{}))
	srv.Config.Handler = a.Handler(app.HandlerOptions{})
	srv.Start()
	done := make(chan struct{})
	go func() { a.Run(ctx); close(done) }()

	pay = func(callback string) string {
		c, err := a.Merchant.Create(ctx, url.Values{"merchant_username": {"shop"}, "item_description": {"Premium membership, 1 month"},
			"amount1": {"19.99"}, "currency1": {"USD"}, "custom": {"order-42"}, "callback_url": {callback}})
		must(err)
		_, err = a.Merchant.Quote(ctx, c.PublicID, "BTC")
		must(err)
		q, _ := a.Merchant.Get(ctx, c.PublicID)
		paid, err := a.Merchant.Pay(ctx, c.PublicID, buyer, "BTC", q.Quote.Amount)
		must(err)
		form, err := a.Merchant.CallbackForm(ctx, paid) // what drip's callback carries
		must(err)
		return form.Get("token")
	}
	return srv.URL, pay, func() {
		srv.Close()
		cancel()
		<-done
		a.Close()
		st.Close()
		os.RemoveAll(dir)
	}
}
