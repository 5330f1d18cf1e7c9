package console

import (
	"context"
	"net/http"
	"strconv"

	"github.com/dripfaucet/drip/internal/account"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/merchant"
	"github.com/dripfaucet/drip/internal/store"
)

// The wallet's merchant payments (issue 13): what the user paid to shops
// through a hosted checkout, and what they received as a merchant, each
// with its callback's attempts and a resend (D55). Newest first, 50 a
// page, as the payouts received.

func (h *Handler) paymentRoutes(mux *http.ServeMux) {
	if h.d.Merchant == nil {
		return
	}
	mux.Handle("GET /wallet/payments", h.auth(h.walletPaymentsMade))
	mux.Handle("GET /wallet/received", h.auth(h.walletPaymentsReceived))
	mux.Handle("GET /wallet/received/{id}", h.auth(h.walletPaymentReceived))
	mux.Handle("POST /wallet/received/{id}/resend", h.auth(h.walletResendCallback))
}

// paymentRow is one paid checkout in a list.
type paymentRow struct {
	ID            string // the checkout's public id
	At            string // when paid, UTC
	Who           string // the merchant (payments made) or the buyer (received)
	Item          string
	Price         string // amount1 currency1, as the merchant priced it
	Paid          string // amount2 currency2, 8 decimals
	Custom        string
	Verified      bool // the merchant verified the token (D56)
	TransactionID int64
}

// paymentsData is the data of a list of payments.
type paymentsData struct {
	Tabs   []tab
	Rows   []paymentRow
	Before int64  // this page's cursor; 0 on the first page
	Next   string // the next page's URL; "" on the last page
	Newest string // the first page's URL, from a later page
}

// usernames names users by id, each read once per page.
type usernames struct {
	h     *Handler
	names map[int64]string
}

func (u *usernames) of(ctx context.Context, id int64) (string, error) {
	if n, ok := u.names[id]; ok {
		return n, nil
	}
	user, err := u.h.d.Store.UserGetByID(ctx, id)
	if err != nil {
		return "", err
	}
	u.names[id] = user.Username
	return user.Username, nil
}

func newPaymentRow(c *merchant.Checkout, who string) paymentRow {
	return paymentRow{ID: c.PublicID, At: c.PaidAt.UTC().Format("2006-01-02 15:04:05"), Who: who, Item: c.Item,
		Price: drip.FormatCoins(c.Amount1) + " " + c.Currency1, Paid: drip.FormatCoinsFixed(c.Quote.Amount) + " " + c.Quote.Coin,
		Custom: c.Custom, Verified: !c.VerifiedAt.IsZero(), TransactionID: c.TransferID}
}

// paymentsPage lists a page of payments from list (Service.Paid or
// Received), each naming the user whoOf says, at path.
func (h *Handler) paymentsPage(w http.ResponseWriter, r *http.Request, sess *account.Session, path, title, template string,
	list func(ctx context.Context, before int64, limit int) ([]merchant.Checkout, error), whoOf func(*merchant.Checkout) int64) {
	ctx := r.Context()
	d := paymentsData{Tabs: walletTabs(path)}
	p := &page{Title: title, User: sess.User, Wide: true, Flash: flash(r)}
	if s := r.URL.Query().Get("before"); s != "" {
		var err error
		if d.Before, err = strconv.ParseInt(s, 10, 64); err != nil || d.Before <= 0 {
			p.Error, p.Data = "This page's link is broken: start again from the newest payments.", d
			h.render(w, r, http.StatusUnprocessableEntity, template, p, nil)
			return
		}
	}
	found, err := list(ctx, d.Before, walletPageSize+1)
	if err != nil {
		h.walletError(w, r, sess, err)
		return
	}
	if len(found) > walletPageSize {
		found = found[:walletPageSize]
		d.Next = path + "?before=" + strconv.FormatInt(found[len(found)-1].ID, 10)
	}
	if d.Before != 0 {
		d.Newest = path
	}
	names := &usernames{h: h, names: map[int64]string{}}
	for i := range found {
		who, err := names.of(ctx, whoOf(&found[i]))
		if err != nil {
			h.walletError(w, r, sess, err)
			return
		}
		d.Rows = append(d.Rows, newPaymentRow(&found[i], who))
	}
	p.Data = d
	h.render(w, r, http.StatusOK, template, p, nil)
}

// walletPaymentsMade lists what the user paid to merchants.
func (h *Handler) walletPaymentsMade(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	h.paymentsPage(w, r, sess, "/wallet/payments", "Payments made", "wallet_payments",
		func(ctx context.Context, before int64, limit int) ([]merchant.Checkout, error) {
			return h.d.Merchant.Paid(ctx, sess.User.ID, before, limit)
		}, func(c *merchant.Checkout) int64 { return c.MerchantID })
}

// walletPaymentsReceived lists what buyers paid the user, as a merchant.
func (h *Handler) walletPaymentsReceived(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	h.paymentsPage(w, r, sess, "/wallet/received", "Payments received", "wallet_received",
		func(ctx context.Context, before int64, limit int) ([]merchant.Checkout, error) {
			return h.d.Merchant.Received(ctx, sess.User.ID, before, limit)
		}, func(c *merchant.Checkout) int64 { return c.PayerID })
}

// receivedData is the data of one payment received.
type receivedData struct {
	Tabs    []tab
	Payment paymentRow
	Rate    string // "1 USD = 0.00002 BTC"
	Source  string // where the rate came from, in words; "" for none
	PriceAt string
	// VerifiedAt is when the merchant verified the token, UTC; "" if not yet.
	VerifiedAt string
	// The callback (D55): its URL, its delivery and every attempt, oldest
	// first; Delivery nil when the form gave no callback_url.
	CallbackURL string
	Delivery    *callbackDelivery
	Attempts    []attemptRow
}

// callbackDelivery is a callback's state as the page shows it.
type callbackDelivery struct {
	State, Next, Done string // Next: the next attempt, while pending; Done: when it ended
	Tries             int
	Resend            bool // it may be sent again: it is not pending
}

// walletPaymentReceived shows one payment the user received: the
// payment, whether its token was verified, and its callback's attempts.
func (h *Handler) walletPaymentReceived(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	h.showPaymentReceived(w, r, sess, http.StatusOK, &page{Flash: flash(r)})
}

func (h *Handler) showPaymentReceived(w http.ResponseWriter, r *http.Request, sess *account.Session, status int, p *page) {
	ctx := r.Context()
	c, dl, attempts, err := h.d.Merchant.Callback(ctx, sess.User.ID, r.PathValue("id"))
	if err != nil {
		h.walletError(w, r, sess, err)
		return
	}
	buyer, err := h.d.Store.UserGetByID(ctx, c.PayerID)
	if err != nil {
		h.walletError(w, r, sess, err)
		return
	}
	d := receivedData{Tabs: walletTabs("/wallet/received"), Payment: newPaymentRow(c, buyer.Username), Rate: rate(c), CallbackURL: c.CallbackURL}
	if c.Quote.Source != "" {
		d.Source, d.PriceAt = sources[c.Quote.Source], c.Quote.PriceAt.UTC().Format("2006-01-02 15:04:05")
		if d.Source == "" {
			d.Source = c.Quote.Source
		}
	}
	if !c.VerifiedAt.IsZero() {
		d.VerifiedAt = c.VerifiedAt.UTC().Format("2006-01-02 15:04:05")
	}
	if dl != nil {
		d.Delivery = &callbackDelivery{State: dl.State, Tries: dl.Tries, Resend: dl.State != store.DeliveryPending}
		if dl.State == store.DeliveryPending {
			d.Delivery.Next = dl.NextAttemptAt.UTC().Format("2006-01-02 15:04:05")
		} else if !dl.DoneAt.IsZero() {
			d.Delivery.Done = dl.DoneAt.UTC().Format("2006-01-02 15:04:05")
		}
		for _, a := range attempts {
			d.Attempts = append(d.Attempts, newAttemptRow(a))
		}
		// The log is every attempt ever made; the delivery's own count
		// can lag it when a verification ended the callback while an
		// attempt was under way.
		d.Delivery.Tries = max(d.Delivery.Tries, len(d.Attempts))
	}
	p.Title, p.User, p.Wide, p.Data = "Payment received", sess.User, true, d
	h.render(w, r, status, "wallet_received_payment", p, nil)
}

// walletResendCallback starts a delivered or failed callback's schedule
// again (D55): the merchant's server missed it, or has been fixed.
func (h *Handler) walletResendCallback(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	id := r.PathValue("id")
	if err := h.d.Merchant.ResendCallback(r.Context(), sess.User.ID, id); err != nil {
		p := &page{}
		status := h.failure(r, p, err)
		if status == http.StatusNotFound {
			h.walletError(w, r, sess, err)
			return
		}
		h.showPaymentReceived(w, r, sess, status, p)
		return
	}
	redirect(w, r, "/wallet/received/"+id+"?done=callback-resent")
}
