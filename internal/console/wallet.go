package console

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/dripfaucet/drip/internal/account"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/price"
	"github.com/dripfaucet/drip/internal/store"
)

// The wallet pages (issue 11, "Wallet"): every user's balances with their
// USD value, the payouts they received, the wallet addresses they linked
// (D10, D11), and "fund this faucet", which moves part of a balance to a
// faucet they own. Rules live where v2 and the admin commands find them:
// the ledger (Fund), the user registry (LinkAddress, UnlinkAddress), the
// coin catalogue; these handlers decode a form, call them, and render.

func (h *Handler) walletRoutes(mux *http.ServeMux) {
	mux.Handle("GET /wallet", h.auth(h.walletPage))
	mux.Handle("GET /wallet/payouts", h.auth(h.walletPayouts))
	mux.Handle("GET /wallet/addresses", h.auth(h.walletAddresses))
	mux.Handle("POST /wallet/addresses", h.auth(h.walletLinkAddress))
	mux.Handle("POST /wallet/addresses/remove", h.auth(h.walletUnlinkAddress))
	mux.Handle("GET /wallet/fund", h.auth(h.walletFundPage))
	mux.Handle("POST /wallet/fund", h.auth(h.walletFund))
	h.paymentRoutes(mux)
}

// walletTabs are the wallet's pages, the current one marked.
func walletTabs(current string) []tab {
	pages := []struct{ path, label string }{
		{"/wallet", "Balances"}, {"/wallet/payouts", "Payouts received"},
		{"/wallet/payments", "Payments made"}, {"/wallet/received", "Payments received"},
		{"/wallet/addresses", "Addresses"}, {"/wallet/fund", "Fund a faucet"},
	}
	out := make([]tab, len(pages))
	for i, p := range pages {
		out[i] = tab{Href: p.path, Label: p.label, Current: p.path == current}
	}
	return out
}

// walletError shows a page of the wallet that could not be read.
func (h *Handler) walletError(w http.ResponseWriter, r *http.Request, sess *account.Session, err error) {
	p := &page{Title: "Error", User: sess.User}
	h.render(w, r, h.failure(r, p, err), "problem", p, err)
}

// walletFailure puts a refusal next to the field of the wallet's form it
// is about, by its code, and returns the page's status (failure's).
func (h *Handler) walletFailure(r *http.Request, p *page, err error, fieldOf map[drip.Code]string) int {
	status := h.failure(r, p, err)
	if f, ok := fieldOf[drip.ErrorCode(err)]; ok && p.Error != "" {
		if p.Fields == nil {
			p.Fields = map[string]string{}
		}
		p.Fields[f], p.Error = p.Error, ""
	}
	return status
}

// walletBalance is one coin of a balances table.
type walletBalance struct {
	Coin   string
	Name   string
	Amount string // 8 decimals (D1)
	Units  int64
	USD    string // "" when no fresh price is known (D60)
	Active bool
}

// walletData is the data of the wallet's front page.
type walletData struct {
	Tabs     []tab
	Balances []walletBalance
	TotalUSD string // of the balances whose price is known
	Priced   bool   // some balance has a USD value
	Hash     string // the user's payout_user_hash (D12)
}

// walletBalances are a ledger account's balances: every active coin, and a
// disabled coin only while the account still holds some of it, each with
// its USD value where a price is known (D60).
func (h *Handler) walletBalances(ctx context.Context, accountID int64) (rows []walletBalance, total decimal.Decimal, priced bool, err error) {
	coins, err := h.d.Coins.List(ctx)
	if err != nil {
		return nil, total, false, err
	}
	held, err := h.d.Store.BalanceList(ctx, accountID)
	if err != nil {
		return nil, total, false, err
	}
	amounts := make(map[string]int64, len(held))
	for _, b := range held {
		amounts[b.Coin] = b.Amount
	}
	for _, c := range coins {
		units := amounts[c.Symbol]
		if !c.Active && units == 0 {
			continue
		}
		row := walletBalance{Coin: c.Symbol, Name: c.Name, Amount: drip.FormatCoinsFixed(units), Units: units, Active: c.Active}
		if q, err := h.d.Prices.Quote(ctx, c.Symbol); err == nil {
			v := price.USDValue(units, q)
			row.USD, total, priced = walletUSD(v), total.Add(v), true
		} else if !errors.Is(err, price.ErrUnavailable) {
			h.log.WarnContext(ctx, "console: price quote failed", "coin", c.Symbol, "err", err)
		}
		rows = append(rows, row)
	}
	return rows, total, priced, nil
}

// walletUSD writes a USD value to the cent, its thousands grouped
// ("$11,111.11"); a value too small to show in cents says so rather than
// reading as nothing.
func walletUSD(v decimal.Decimal) string {
	if v.IsPositive() && v.LessThan(decimal.New(1, -2)) {
		return "< $0.01"
	}
	whole, cents, _ := strings.Cut(v.StringFixed(2), ".")
	var b strings.Builder
	for i, d := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(d)
	}
	return "$" + b.String() + "." + cents
}

func (h *Handler) walletPage(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	rows, total, priced, err := h.walletBalances(r.Context(), sess.User.AccountID)
	if err != nil {
		h.walletError(w, r, sess, err)
		return
	}
	hash := sess.User.PayoutUserHash
	if hash == "" {
		hash = h.d.Users.PayoutHash(sess.User.ID)
	}
	h.render(w, r, http.StatusOK, "wallet", &page{Title: "Wallet", User: sess.User, Flash: flash(r),
		Data: walletData{Tabs: walletTabs("/wallet"), Balances: rows, TotalUSD: walletUSD(total), Priced: priced, Hash: hash}}, nil)
}

// walletPageSize is how many payouts a page of the wallet lists.
const walletPageSize = 50

// walletPayoutsData is the data of the payouts-received page.
type walletPayoutsData struct {
	Tabs     []tab
	Coins    []drip.Coin
	Faucets  []drip.Faucet // those that have paid the user, for the filter
	Coin     string        // the filters as given
	Faucet   int64
	Filtered bool
	Before   int64 // this page's cursor; 0 on the first page
	Rows     []walletPayoutRow
	Next     string // the next page's URL; "" on the last page
	Newest   string // the first page's URL, from a later page
}

// walletPayoutsURL is a page of the payouts received: the filters, and the
// payout its rows come after (0: the newest).
func walletPayoutsURL(coin string, faucet, before int64) string {
	v := url.Values{}
	if coin != "" {
		v.Set("coin", coin)
	}
	if faucet != 0 {
		v.Set("faucet", strconv.FormatInt(faucet, 10))
	}
	if before != 0 {
		v.Set("before", strconv.FormatInt(before, 10))
	}
	if len(v) == 0 {
		return "/wallet/payouts"
	}
	return "/wallet/payouts?" + v.Encode()
}

type walletPayoutRow struct {
	ID         int64
	At         string // UTC
	FaucetName string
	Coin       string
	Amount     string // 8 decimals
	To         string // the destination the faucet paid
}

// walletPayouts lists the payouts the user received, newest first, 50 a
// page (keyset: ?before= is the last row's payout), filtered by
// coin and by faucet.
func (h *Handler) walletPayouts(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	ctx, q := r.Context(), r.URL.Query()
	d := walletPayoutsData{Tabs: walletTabs("/wallet/payouts"), Coin: drip.Symbol(strings.TrimSpace(q.Get("coin")))}
	p := &page{Title: "Payouts received", User: sess.User, Wide: true, Fields: map[string]string{},
		Form: map[string]string{"coin": d.Coin, "faucet": q.Get("faucet")}}
	var err error
	if d.Coins, err = h.d.Coins.List(ctx); err != nil {
		h.walletError(w, r, sess, err)
		return
	}
	if d.Faucets, err = h.d.Store.FaucetListPayers(ctx, sess.User.ID); err != nil {
		h.walletError(w, r, sess, err)
		return
	}
	if d.Coin != "" && !drip.HasCoin(d.Coins, d.Coin) {
		p.Fields["coin"] = "There is no such coin."
	}
	if s := strings.TrimSpace(q.Get("faucet")); s != "" {
		if d.Faucet, err = strconv.ParseInt(s, 10, 64); err != nil || d.Faucet <= 0 {
			p.Fields["faucet"] = "A faucet is chosen from the list, or given by its number."
		}
	}
	if s := q.Get("before"); s != "" {
		if d.Before, err = strconv.ParseInt(s, 10, 64); err != nil || d.Before <= 0 {
			p.Error = "This page's link is broken: start again from the newest payouts."
		}
	}
	d.Filtered = d.Coin != "" || d.Faucet != 0
	if len(p.Fields) > 0 || p.Error != "" {
		p.Data = d
		h.render(w, r, http.StatusUnprocessableEntity, "wallet_payouts", p, nil)
		return
	}
	found, err := h.d.Store.PayoutListByRecipient(ctx, &store.PayoutListByRecipientParams{
		UserID: sess.User.ID, Coin: d.Coin, FaucetID: d.Faucet, Before: d.Before, Limit: walletPageSize + 1,
	})
	if err != nil {
		h.walletError(w, r, sess, err)
		return
	}
	if len(found) > walletPageSize {
		found = found[:walletPageSize]
		d.Next = walletPayoutsURL(d.Coin, d.Faucet, found[len(found)-1].ID)
	}
	if d.Before != 0 {
		d.Newest = walletPayoutsURL(d.Coin, d.Faucet, 0)
	}
	for _, f := range found {
		d.Rows = append(d.Rows, walletPayoutRow{ID: f.ID, At: f.CreatedAt.UTC().Format("2006-01-02 15:04:05"), FaucetName: f.FaucetName,
			Coin: f.Coin, Amount: drip.FormatCoinsFixed(f.Amount), To: f.To})
	}
	p.Data = d
	h.render(w, r, http.StatusOK, "wallet_payouts", p, nil)
}

// walletAddress is one linked address.
type walletAddress struct{ Coin, Address string }

// walletAddressesData is the data of the addresses page.
type walletAddressesData struct {
	Tabs      []tab
	Coins     []drip.Coin // active coins, for the form
	Addresses []walletAddress
}

func (h *Handler) walletAddresses(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	h.showWalletAddresses(w, r, sess, http.StatusOK, &page{Flash: flash(r)})
}

// showWalletAddresses renders the addresses page with p's errors and form.
func (h *Handler) showWalletAddresses(w http.ResponseWriter, r *http.Request, sess *account.Session, status int, p *page) {
	d, err := h.loadWalletAddresses(r.Context(), sess.User)
	if err != nil {
		h.walletError(w, r, sess, err)
		return
	}
	p.Title, p.User, p.Data = "Wallet addresses", sess.User, d
	h.render(w, r, status, "wallet_addresses", p, nil)
}

func (h *Handler) loadWalletAddresses(ctx context.Context, u *drip.User) (*walletAddressesData, error) {
	coins, err := h.d.Coins.ListActive(ctx)
	if err != nil {
		return nil, err
	}
	linked, err := h.d.Store.UserAddressList(ctx, u.ID)
	if err != nil {
		return nil, err
	}
	d := &walletAddressesData{Tabs: walletTabs("/wallet/addresses"), Coins: coins}
	for _, l := range linked {
		coin, addr, _ := strings.Cut(l, ":") // "COIN:address"; symbols hold no colon
		d.Addresses = append(d.Addresses, walletAddress{Coin: coin, Address: addr})
	}
	return d, nil
}

// walletAddressFields are the fields of the address form that a refusal is about.
var walletAddressFields = map[drip.Code]string{
	drip.CodeInvalidCurrency: "coin",
	drip.CodeInvalid:         "address",
	drip.CodeConflict:        "address",
}

// walletLinkAddress links a wallet address for a coin (D10); payouts to it
// reach the user (D11). An address is one user's: another's is refused
// without saying whose it is.
func (h *Handler) walletLinkAddress(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	ctx := r.Context()
	coinIn, address := r.PostFormValue("coin"), strings.TrimSpace(r.PostFormValue("address"))
	p := &page{Form: map[string]string{"coin": drip.Symbol(coinIn), "address": address}}
	c, err := h.d.Coins.Active(ctx, coinIn)
	if err == nil {
		err = h.d.Users.LinkAddress(ctx, sess.User, c.Symbol, address)
	}
	if drip.ErrorCode(err) == drip.CodeConflict {
		err = drip.Errorf(drip.CodeConflict, "This %s address is already linked to another account.", c.Symbol)
		if mine, lerr := h.walletOwnsAddress(ctx, sess.User, c.Symbol, address); lerr == nil && mine {
			err = drip.Errorf(drip.CodeConflict, "You have linked this %s address already.", c.Symbol)
		}
	}
	if err != nil {
		h.showWalletAddresses(w, r, sess, h.walletFailure(r, p, err, walletAddressFields), p)
		return
	}
	redirect(w, r, "/wallet/addresses?done=address-linked")
}

// walletOwnsAddress reports whether the user linked address for coin.
func (h *Handler) walletOwnsAddress(ctx context.Context, u *drip.User, coin, address string) (bool, error) {
	linked, err := h.d.Store.UserAddressList(ctx, u.ID)
	for _, l := range linked {
		if l == coin+":"+address {
			return true, err
		}
	}
	return false, err
}

func (h *Handler) walletUnlinkAddress(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	err := h.d.Users.UnlinkAddress(r.Context(), sess.User, drip.Symbol(r.PostFormValue("coin")), r.PostFormValue("address"))
	if err != nil {
		p := &page{}
		h.showWalletAddresses(w, r, sess, h.walletFailure(r, p, err, nil), p)
		return
	}
	redirect(w, r, "/wallet/addresses?done=address-removed")
}

// walletFundData is the data of the "fund a faucet" page.
type walletFundData struct {
	Tabs    []tab
	Faucets []drip.Faucet   // the user's own
	Wallet  []walletBalance // what the user may move
	// After a fund, the balances it left, of the faucet and coin it named.
	Funded *walletFunded
}

type walletFunded struct {
	Faucet         *drip.Faucet
	Coin           string
	Wallet, Target string // 8 decimals
}

func (h *Handler) walletFundPage(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	p := &page{Flash: flash(r), Form: map[string]string{"faucet": r.URL.Query().Get("faucet"), "coin": r.URL.Query().Get("coin")}}
	h.showWalletFund(w, r, sess, http.StatusOK, p)
}

// showWalletFund renders the fund page with p's errors and form. After a fund
// (?done=funded), it shows the new balances of the faucet and coin the
// URL names, read afresh: the URL names them, never amounts.
func (h *Handler) showWalletFund(w http.ResponseWriter, r *http.Request, sess *account.Session, status int, p *page) {
	ctx := r.Context()
	d := walletFundData{Tabs: walletTabs("/wallet/fund")}
	var err error
	if d.Faucets, err = h.d.Store.FaucetListByOwner(ctx, sess.User.ID); err == nil {
		d.Wallet, _, _, err = h.walletBalances(ctx, sess.User.AccountID)
	}
	if err != nil {
		h.walletError(w, r, sess, err)
		return
	}
	if r.URL.Query().Get("done") == "funded" {
		d.Funded = h.loadWalletFunded(ctx, sess.User, d.Faucets, r.URL.Query().Get("faucet"), r.URL.Query().Get("coin"))
	}
	p.Title, p.User, p.Data = "Fund a faucet", sess.User, d
	h.render(w, r, status, "wallet_fund", p, nil)
}

// loadWalletFunded reads the balances of coin in the wallet and in the faucet
// of id among the user's faucets; nil when the URL names no such pair.
func (h *Handler) loadWalletFunded(ctx context.Context, u *drip.User, faucets []drip.Faucet, id, coin string) *walletFunded {
	coin = drip.Symbol(coin)
	for i := range faucets {
		f := &faucets[i]
		if strconv.FormatInt(f.ID, 10) != id {
			continue
		}
		wallet, err := h.d.Store.BalanceGet(ctx, u.AccountID, coin)
		if err != nil {
			return nil
		}
		target, err := h.d.Store.BalanceGet(ctx, f.AccountID, coin)
		if err != nil {
			return nil
		}
		return &walletFunded{Faucet: f, Coin: coin, Wallet: drip.FormatCoinsFixed(wallet), Target: drip.FormatCoinsFixed(target)}
	}
	return nil
}

// walletFundFields are the fields of the fund form that a refusal is about.
var walletFundFields = map[drip.Code]string{
	drip.CodeNotFound:          "faucet",
	drip.CodeInvalidCurrency:   "coin",
	drip.CodeInvalidAmount:     "amount",
	drip.CodeInsufficientFunds: "amount",
}

// walletFund moves part of the user's balance of a coin to a faucet they own:
// one ledger transfer (ledger.Fund, which holds the rules: the faucet is
// the user's, the amount positive and held). Anyone else's faucet is
// refused as not found, as on the faucet's own pages.
func (h *Handler) walletFund(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	ctx := r.Context()
	in := map[string]string{"faucet": r.PostFormValue("faucet"), "coin": drip.Symbol(r.PostFormValue("coin")),
		"amount": strings.TrimSpace(r.PostFormValue("amount"))}
	p := &page{Form: in}
	f, err := h.walletFaucetToFund(ctx, in["faucet"])
	var c *drip.Coin
	if err == nil {
		c, err = h.d.Coins.Active(ctx, in["coin"])
	}
	var amount int64
	if err == nil {
		amount, err = drip.ParseCoins(in["amount"])
	}
	if err == nil {
		_, _, err = h.d.Ledger.Fund(ctx, sess.User, f, c.Symbol, amount)
	}
	if err != nil {
		h.showWalletFund(w, r, sess, h.walletFailure(r, p, err, walletFundFields), p)
		return
	}
	redirect(w, r, "/wallet/fund?"+url.Values{"done": {"funded"}, "faucet": {in["faucet"]}, "coin": {c.Symbol}}.Encode())
}

// walletFaucetToFund is the faucet a fund form names; the ledger judges whose
// it is. A faucet that does not exist reads as one that is not the
// user's, so the answer does not tell which faucets exist.
func (h *Handler) walletFaucetToFund(ctx context.Context, s string) (*drip.Faucet, error) {
	id, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || id <= 0 {
		return nil, drip.Errorf(drip.CodeNotFound, "Choose one of your faucets.")
	}
	f, err := h.d.Faucets.Get(ctx, id)
	if drip.ErrorCode(err) == drip.CodeNotFound {
		return nil, drip.Errorf(drip.CodeNotFound, "There is no such faucet among yours.")
	}
	return f, err
}
