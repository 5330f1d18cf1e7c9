package console

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/dripfaucet/drip/internal/account"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/merchant"
	"github.com/dripfaucet/drip/internal/store"
)

// The hosted checkout (spec 4.4, issue 13): a merchant's site posts a
// plain HTML form to WebscrPath from any origin; drip makes a checkout of
// it and sends the buyer's browser to its page, where the buyer logs in,
// picks the coin, reviews the price held for 15 minutes (D57) and pays
// with a same-origin POST. The merchant's server verifies the payment's
// token at GetPaymentPath (D56). Every rule is merchant.Service's; these
// handlers decode, call it and render.

// Paths of the hosted checkout.
const (
	WebscrPath     = "/merchant/webscr"
	CheckoutPath   = "/merchant/checkout/"    // + the checkout's public id
	GetPaymentPath = "/merchant/get-payment/" // + the payment's token
)

// maxPaymentForm bounds a posted payment form: its fields' limits with
// room for their encoding.
const maxPaymentForm = 64 << 10

func (h *Handler) merchantRoutes(mux *http.ServeMux) {
	if h.d.Merchant == nil {
		return
	}
	mux.HandleFunc("POST "+WebscrPath, h.webscr)
	mux.HandleFunc(WebscrPath, h.webscrMethod)
	mux.HandleFunc("GET "+CheckoutPath+"{id}", h.checkoutPage)
	mux.HandleFunc("POST "+CheckoutPath+"{id}/quote", h.checkoutQuote)
	mux.HandleFunc("POST "+CheckoutPath+"{id}/pay", h.checkoutPay)
	mux.HandleFunc("POST "+CheckoutPath+"{id}/cancel", h.checkoutCancel)
	mux.HandleFunc("GET "+GetPaymentPath+"{token}", h.getPayment)
}

// formErrorData is the data of the page that refuses a payment form.
type formErrorData struct {
	Field, Message string
	// Back is the form's cancel_url when it is a web address, to return
	// to the shop by; never the Referer, which the form does not vouch
	// for.
	Back, BackHost string
}

// webscr takes a merchant's payment form (spec 4.4), from any site (the
// cross-origin check lets it through: see New), and sends the browser to
// the checkout it makes. A refused form creates nothing and is answered
// by a page that names the field at fault, for the buyer to show the shop.
func (h *Handler) webscr(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxPaymentForm)
	if err := r.ParseMultipartForm(maxPaymentForm); err != nil && !errors.Is(err, http.ErrNotMultipart) {
		h.formError(w, r, &merchant.FieldError{Field: "the form", Message: "could not be read: it is larger than 64 KB or malformed"})
		return
	}
	c, err := h.d.Merchant.Create(r.Context(), r.PostForm)
	var fe *merchant.FieldError
	switch {
	case errors.As(err, &fe):
		h.formError(w, r, fe)
		return
	case err != nil:
		p := &page{Title: "The payment could not start"}
		h.render(w, r, h.failure(r, p, err), "problem", p, err)
		return
	}
	redirect(w, r, CheckoutPath+c.PublicID)
}

// formError answers a refused payment form: HTTP 400, the field and what
// is wrong with it.
func (h *Handler) formError(w http.ResponseWriter, r *http.Request, fe *merchant.FieldError) {
	d := formErrorData{Field: fe.Field, Message: fe.Message}
	if u, err := url.Parse(r.PostFormValue("cancel_url")); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.User == nil {
		d.Back, d.BackHost = u.String(), u.Host
	}
	h.render(w, r, http.StatusBadRequest, "merchant_form_error", &page{Title: "This payment form has an error", Data: d}, nil)
}

// webscrMethod answers anything but a POST to WebscrPath.
func (h *Handler) webscrMethod(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Allow", http.MethodPost)
	h.render(w, r, http.StatusMethodNotAllowed, "problem", &page{Title: "Not a payment form",
		Error: "This address takes a shop's payment form, sent with method=\"post\"; open the shop's page and pay from there."}, nil)
}

// viewer is the logged-in visitor of a checkout page, or nil: a
// visitor not logged in, or whose login waits for its second factor,
// is asked to log in.
func (h *Handler) viewer(w http.ResponseWriter, r *http.Request) (*account.Session, error) {
	sess, err := h.acc.Authenticate(r.Context(), h.token(r))
	switch {
	case errors.Is(err, account.ErrSessionEnded):
		if h.token(r) != "" {
			h.setSession(w, "")
		}
		return nil, nil
	case errors.Is(err, account.ErrSecondFactorPending):
		return nil, nil
	}
	return sess, err
}

// checkoutView is what a checkout's page shows.
type checkoutView string

const (
	viewLogin     checkoutView = "login"     // open, the visitor not logged in
	viewSelf      checkoutView = "self"      // open, seen by its merchant
	viewChoose    checkoutView = "choose"    // open, the buyer picks the coin
	viewPrice     checkoutView = "price"     // open, currency2 named and not quoted yet
	viewReview    checkoutView = "review"    // open, a quote held
	viewExpired   checkoutView = "expired"   // open, the quote expired
	viewReceipt   checkoutView = "receipt"   // paid, seen by its payer
	viewClosed    checkoutView = "closed"    // paid, seen by anyone else
	viewCancelled checkoutView = "cancelled" // cancelled
)

// checkoutData is the data of a checkout's page.
type checkoutData struct {
	View     checkoutView
	Paid     bool   // the order is paid: its card says to whom it was
	Open     bool   // the order may be paid still
	Path     string // the page's path, CheckoutPath + public id
	LoginURL string // /login?next=the page
	Merchant string // the merchant's username
	Item     string
	Price    string // amount1 currency1, "19.99 USD"
	Fixed    string // currency2, when the merchant named the coin
	Coins    []checkoutCoin
	Quote    *checkoutQuote
	Receipt  *checkoutReceipt
	// Return is where the page sends the buyer back to the shop: the
	// success_url on a receipt, the cancel_url on a cancelled checkout.
	Return, ReturnHost string
}

// checkoutCoin is a coin the buyer may pay with, as the picker offers it.
type checkoutCoin struct {
	Symbol, Name string
	About        string // the price in this coin at the current rate, 8 decimals
	Held         string // the buyer's balance, 8 decimals
	Short        bool   // the balance is below About
	Checked      bool   // picked at first: the first coin the balance pays for
}

// checkoutQuote is the price held for the buyer (D57), as shown.
type checkoutQuote struct {
	Coin    string
	Amount  string // 8 decimals, posted back by Pay exactly as shown
	Rate    string // "1 USD = 0.0000153846 BTC"
	Source  string // where the rate came from, in words
	PriceAt string // when the source observed it, UTC
	Expires string // "15:24 UTC"
	Held    string // the buyer's balance of Coin, 8 decimals
	Short   bool   // below Amount: paying would be refused
}

// checkoutReceipt is a paid checkout as its payer sees it.
type checkoutReceipt struct {
	Amount, Coin  string
	Rate          string
	PaidAt        string
	TransactionID int64
}

// sources are the price sources (D60) in words.
var sources = map[string]string{
	"static": "drip's built-in price table",
	"file":   "the operator's price file",
	"feed":   "the price feed",
}

func (h *Handler) checkoutPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	sess, err := h.viewer(w, r)
	if err != nil {
		h.checkoutError(w, r, nil, err)
		return
	}
	c, err := h.d.Merchant.Get(ctx, r.PathValue("id"))
	if err != nil {
		h.checkoutError(w, r, sess, err)
		return
	}
	p := &page{}
	status := http.StatusOK
	// A checkout whose merchant named the coin is priced on its first view
	// by a buyer: there is nothing to choose.
	if sess != nil && c.State == store.CheckoutOpen && c.Currency2 != "" && c.Quote.Coin == "" && c.MerchantID != sess.User.ID {
		if q, err := h.d.Merchant.Quote(ctx, c.PublicID, c.Currency2); err != nil {
			status = h.failure(r, p, err)
		} else {
			c = q
		}
	}
	h.showCheckout(w, r, sess, c, status, p)
}

// checkoutError answers a checkout's request that failed before there
// was a checkout to show.
func (h *Handler) checkoutError(w http.ResponseWriter, r *http.Request, sess *account.Session, err error) {
	p := &page{Title: "Checkout"}
	if sess != nil {
		p.User = sess.User
	}
	h.render(w, r, h.failure(r, p, err), "problem", p, err)
}

// showCheckout renders c's page for sess (nil: not logged in), with p's
// error.
func (h *Handler) showCheckout(w http.ResponseWriter, r *http.Request, sess *account.Session, c *merchant.Checkout, status int, p *page) {
	ctx := r.Context()
	d := &checkoutData{Path: CheckoutPath + c.PublicID, Item: c.Item, Price: drip.FormatCoins(c.Amount1) + " " + c.Currency1, Fixed: c.Currency2}
	d.LoginURL = "/login?next=" + url.QueryEscape(d.Path)
	m, err := h.d.Store.UserGetByID(ctx, c.MerchantID)
	if err != nil {
		h.checkoutError(w, r, sess, err)
		return
	}
	d.Merchant = m.Username
	if sess != nil {
		p.User = sess.User
	}
	p.Title = "Checkout"
	switch {
	case c.State == store.CheckoutCancelled:
		d.View, p.Title = viewCancelled, "The payment was cancelled"
		d.Return, d.ReturnHost = c.CancelURL, hostOf(c.CancelURL)
	case c.State == store.CheckoutPaid && sess != nil && sess.User.ID == c.PayerID:
		d.View, p.Title = viewReceipt, "Receipt"
		d.Receipt = &checkoutReceipt{Amount: drip.FormatCoinsFixed(c.Quote.Amount), Coin: c.Quote.Coin,
			Rate: rate(c), PaidAt: c.PaidAt.UTC().Format("2006-01-02 15:04:05"), TransactionID: c.TransferID}
		d.Return, d.ReturnHost = c.SuccessURL, hostOf(c.SuccessURL)
	case c.State == store.CheckoutPaid:
		// Someone else's payment: that it is paid, and nothing of who paid.
		d.View, p.Title = viewClosed, "Checkout closed"
	case sess == nil:
		d.View = viewLogin
	case sess.User.ID == c.MerchantID:
		d.View = viewSelf
	default:
		if err := h.loadCheckoutChoice(ctx, sess, c, d); err != nil {
			h.checkoutError(w, r, sess, err)
			return
		}
	}
	d.Paid, d.Open = c.State == store.CheckoutPaid, c.State == store.CheckoutOpen
	p.Data = d
	p.FormTo = formOrigins(c.SuccessURL, c.CancelURL)
	h.render(w, r, status, "checkout", p, nil)
}

// loadCheckoutChoice fills in an open checkout's view for its buyer: the
// quote held, or the coins to choose from.
func (h *Handler) loadCheckoutChoice(ctx context.Context, sess *account.Session, c *merchant.Checkout, d *checkoutData) error {
	held, err := h.d.Store.BalanceList(ctx, sess.User.AccountID)
	if err != nil {
		return err
	}
	balance := make(map[string]int64, len(held))
	for _, b := range held {
		balance[b.Coin] = b.Amount
	}
	now := h.d.Now()
	switch {
	case c.Quote.Coin == "" && c.Currency2 != "":
		d.View = viewPrice
	case c.Quote.Coin == "":
		d.View = viewChoose
	case now.Before(c.Quote.Expires):
		d.View = viewReview
	default:
		d.View = viewExpired
	}
	if c.Quote.Coin != "" {
		q := c.Quote
		d.Quote = &checkoutQuote{Coin: q.Coin, Amount: drip.FormatCoinsFixed(q.Amount), Rate: rate(c),
			Source: "no conversion: the price is in the coin you pay with", Expires: q.Expires.UTC().Format("15:04 UTC"),
			Held: drip.FormatCoinsFixed(balance[q.Coin]), Short: balance[q.Coin] < q.Amount}
		if q.Source != "" {
			d.Quote.Source = sources[q.Source]
			if d.Quote.Source == "" {
				d.Quote.Source = q.Source
			}
			d.Quote.PriceAt = q.PriceAt.UTC().Format("2006-01-02 15:04:05 UTC")
		}
	}
	if c.Currency2 != "" {
		return nil
	}
	// The coins to choose from, each with the price in it at the current
	// rate; a coin without a fresh price cannot be quoted, so it is not
	// offered (D60).
	coins, err := h.d.Merchant.Coins(ctx, c)
	if err != nil {
		return err
	}
	for _, k := range coins {
		q, err := merchant.Price(ctx, h.d.Prices, decimal.New(c.Amount1, -drip.Decimals), c.Currency1, k.Symbol, now)
		if err != nil {
			continue
		}
		d.Coins = append(d.Coins, checkoutCoin{Symbol: k.Symbol, Name: k.Name, About: drip.FormatCoinsFixed(q.Amount),
			Held: drip.FormatCoinsFixed(balance[k.Symbol]), Short: balance[k.Symbol] < q.Amount})
	}
	// The coins the balance pays for first, the first of them picked.
	slices.SortStableFunc(d.Coins, func(a, b checkoutCoin) int {
		switch {
		case a.Short == b.Short:
			return 0
		case b.Short:
			return -1
		}
		return 1
	})
	if len(d.Coins) > 0 {
		d.Coins[0].Checked = true
	}
	return nil
}

// rate is the quote's exchange rate in words: "1 USD = 0.0000153846 BTC".
func rate(c *merchant.Checkout) string {
	r := c.Quote.Rate
	if d, err := decimal.NewFromString(r); err == nil {
		r = d.String()
	}
	return "1 " + c.Currency1 + " = " + r + " " + c.Quote.Coin
}

// hostOf is the host of a URL the form gave, for the link's words.
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Host
}

// formOrigins are the origins of the URLs a checkout's forms are answered
// with a redirect to, for the page's form-action (csp). An origin is
// written into the header only when it is plainly one: scheme, host and
// port, nothing that could end the directive.
func formOrigins(urls ...string) []string {
	var out []string
	for _, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.Trim(u.Host, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:[]") != "" {
			continue
		}
		o := u.Scheme + "://" + u.Host
		if !contained(out, o) {
			out = append(out, o)
		}
	}
	return out
}

func contained(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// buyer is the logged-in visitor of a checkout's form; without one it
// sends the browser to log in and come back to the checkout.
func (h *Handler) buyer(w http.ResponseWriter, r *http.Request) (*account.Session, bool) {
	sess, err := h.viewer(w, r)
	if err != nil {
		h.checkoutError(w, r, nil, err)
		return nil, false
	}
	if sess == nil {
		redirect(w, r, "/login?next="+url.QueryEscape(CheckoutPath+r.PathValue("id")))
		return nil, false
	}
	return sess, true
}

// checkoutRefused shows the checkout again, as it is now, with the error
// err that refused what the buyer asked.
func (h *Handler) checkoutRefused(w http.ResponseWriter, r *http.Request, sess *account.Session, err error) {
	p := &page{}
	status := h.failure(r, p, err)
	c, gerr := h.d.Merchant.Get(r.Context(), r.PathValue("id"))
	if gerr != nil {
		h.checkoutError(w, r, sess, gerr)
		return
	}
	h.showCheckout(w, r, sess, c, status, p)
}

// checkoutQuote holds the price of the checkout in the coin the buyer
// picked (D57), or a new one after the last expired.
func (h *Handler) checkoutQuote(w http.ResponseWriter, r *http.Request) {
	sess, ok := h.buyer(w, r)
	if !ok {
		return
	}
	id := r.PathValue("id")
	if _, err := h.d.Merchant.Quote(r.Context(), id, drip.Symbol(strings.TrimSpace(r.PostFormValue("coin")))); err != nil {
		h.checkoutRefused(w, r, sess, err)
		return
	}
	redirect(w, r, CheckoutPath+id)
}

// checkoutPay pays the checkout at the quote the page showed: the coin
// and amount posted back. One transaction of the service's; a second
// click, or the form sent again, pays nothing more and shows the
// receipt. A paid buyer goes back to the shop's success_url, or to the
// receipt.
func (h *Handler) checkoutPay(w http.ResponseWriter, r *http.Request) {
	sess, ok := h.buyer(w, r)
	if !ok {
		return
	}
	ctx, id := r.Context(), r.PathValue("id")
	c, err := h.d.Merchant.Get(ctx, id)
	if err != nil {
		h.checkoutError(w, r, sess, err)
		return
	}
	if c.State == store.CheckoutPaid && c.PayerID == sess.User.ID { // the form sent again
		redirect(w, r, CheckoutPath+id)
		return
	}
	amount, err := drip.ParseCoins(strings.TrimSpace(r.PostFormValue("amount")))
	if err != nil {
		h.checkoutRefused(w, r, sess, merchant.ErrQuoteExpired)
		return
	}
	paid, err := h.d.Merchant.Pay(ctx, id, sess.User, drip.Symbol(r.PostFormValue("coin")), amount)
	if err != nil {
		h.checkoutRefused(w, r, sess, err)
		return
	}
	if paid.SuccessURL != "" {
		redirect(w, r, paid.SuccessURL)
		return
	}
	redirect(w, r, CheckoutPath+id)
}

// checkoutCancel cancels the open checkout: nothing is paid, and the
// buyer goes back to the shop's cancel_url, or to a page that says so.
// Whoever holds the checkout's page may cancel it, logged in or not, as
// they may leave it unpaid.
func (h *Handler) checkoutCancel(w http.ResponseWriter, r *http.Request) {
	sess, err := h.viewer(w, r)
	if err != nil {
		h.checkoutError(w, r, nil, err)
		return
	}
	c, err := h.d.Merchant.Cancel(r.Context(), r.PathValue("id"))
	if drip.ErrorCode(err) == drip.CodeConflict {
		h.checkoutRefused(w, r, sess, err)
		return
	}
	if err != nil {
		h.checkoutError(w, r, sess, err)
		return
	}
	if c.CancelURL != "" {
		redirect(w, r, c.CancelURL)
		return
	}
	redirect(w, r, CheckoutPath+c.PublicID)
}

// paymentError is the JSON of a verification that could not be answered
// (an outage): not valid, and why, so a merchant tries again.
type paymentError struct {
	Valid   bool   `json:"valid"`
	Error   string `json:"error"`
	Message string `json:"message"`
}

// getPayment verifies a payment's token for the merchant's server (D56):
// the JSON of spec 2.9, valid the first time only. It reads no session:
// it is called server to server. HEAD is refused, so that nothing that
// only looks at a URL can use a token up.
func (h *Handler) getPayment(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Type", "application/json")
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Content-Type-Options", "nosniff")
	if r.Method != http.MethodGet {
		hd.Set("Allow", http.MethodGet)
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	p, err := h.d.Merchant.Verify(r.Context(), r.PathValue("token"))
	if err != nil {
		status, code, msg := http.StatusInternalServerError, "internal", "Internal error: try again later."
		var de *drip.Error
		if errors.As(err, &de) && de.Code == drip.CodeUnavailable {
			status, code, msg = http.StatusServiceUnavailable, string(de.Code), de.Message
		} else {
			h.log.ErrorContext(r.Context(), "console: verifying a payment failed", "err", err)
		}
		hd.Set("Retry-After", strconv.Itoa(int(time.Minute/time.Second)))
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(paymentError{Error: code, Message: msg})
		return
	}
	_ = json.NewEncoder(w).Encode(p)
}
