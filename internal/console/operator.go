package console

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/dripfaucet/drip/internal/account"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/ledger"
	"github.com/dripfaucet/drip/internal/store"
)

// The operator pages (issue 11, item 6): the ledger's health and totals,
// users, deposits, coins, listing approval and the operator log. Only a
// user with the operator role sees them; to anyone else every path under
// /operator answers the console's plain 404, so the pages do not reveal
// that they exist. Each page calls the service v2, the tool server and
// drip admin call (user.Registry, ledger.Ledger, coin.Catalog,
// listing.Service), and every action is written to the operator log.

func (h *Handler) operatorRoutes(mux *http.ServeMux) {
	mux.Handle("GET /operator", h.operator(h.operatorOverview))
	mux.Handle("GET /operator/users", h.operator(h.operatorUsers))
	mux.Handle("POST /operator/users/{id}/{action}", h.operator(h.operatorUserAction))
	mux.Handle("GET /operator/deposits", h.operator(h.operatorDepositsPage))
	mux.Handle("POST /operator/deposits", h.operator(h.operatorDeposit))
	mux.Handle("GET /operator/coins", h.operator(h.operatorCoinsPage))
	mux.Handle("POST /operator/coins/{symbol}/{action}", h.operator(h.operatorCoinAction))
	mux.Handle("GET /operator/listing", h.operator(h.operatorListingPage))
	mux.Handle("POST /operator/listing/costs", h.operator(h.operatorListingCost))
	mux.Handle("POST /operator/listing/{id}/{action}", h.operator(h.operatorListingDecide))
	mux.Handle("GET /operator/log", h.operator(h.operatorLogPage))
	mux.Handle("/operator/", h.operator(func(w http.ResponseWriter, r *http.Request, _ *account.Session) { h.opNotFound(w, r) }))
}

// operator serves next to a logged-in operator; anyone else, logged in
// or not, gets the same 404 as a path that does not exist.
func (h *Handler) operator(next func(http.ResponseWriter, *http.Request, *account.Session)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sess, err := h.acc.Authenticate(r.Context(), h.token(r))
		if err != nil || !sess.User.Operator {
			h.opNotFound(w, r)
			return
		}
		next(w, r.WithContext(context.WithValue(r.Context(), sessionKey{}, sess)), sess)
	})
}

// opNotFound is the console's answer to a path it does not serve.
func (h *Handler) opNotFound(w http.ResponseWriter, r *http.Request) {
	h.render(w, r, http.StatusNotFound, "problem", &page{Title: "Not found", Error: "There is no such page."}, nil)
}

// operatorSections are the operator pages, in the order their tabs list them.
var operatorSections = []struct{ Name, Href, Label string }{
	{"overview", "/operator", "Ledger"},
	{"users", "/operator/users", "Users"},
	{"deposits", "/operator/deposits", "Deposits"},
	{"coins", "/operator/coins", "Coins"},
	{"listing", "/operator/listing", "Listing"},
	{"log", "/operator/log", "Operator log"},
}

func operatorTabs(current string) []tab {
	out := make([]tab, len(operatorSections))
	for i, s := range operatorSections {
		out[i] = tab{Href: s.Href, Label: s.Label, Current: s.Name == current}
	}
	return out
}

// operatorPage renders one of the operator pages; a failure to read what
// it shows is the problem page.
func (h *Handler) operatorPage(w http.ResponseWriter, r *http.Request, sess *account.Session, status int, name string, p *page, data any, err error) {
	if err != nil {
		p := &page{Title: "Error", User: sess.User}
		h.render(w, r, h.failure(r, p, err), "problem", p, err)
		return
	}
	p.User, p.Wide, p.Data = sess.User, true, data
	if p.Flash == "" && status == http.StatusOK {
		p.Flash = flash(r)
	}
	h.render(w, r, status, name, p, nil)
}

// record writes an operator action to the operator log, in tx when given
// (a deposit commits with its record), else in its own transaction.
func (h *Handler) opRecord(ctx context.Context, tx store.Tx, sess *account.Session, action, target string, detail map[string]any) error {
	raw, err := json.Marshal(detail)
	if err != nil {
		return err
	}
	e := &store.OperatorLogEntry{OperatorID: sess.User.ID, Action: action, Target: target, Detail: raw, CreatedAt: h.d.Now()}
	if tx != nil {
		_, err = tx.OperatorLogAdd(ctx, e)
		return err
	}
	return h.d.Store.Transact(ctx, func(tx store.Tx) error {
		_, err := tx.OperatorLogAdd(ctx, e)
		return err
	})
}

// done redirects after an action, once it is in the operator log. An
// action made whose record failed says so, rather than inviting a retry
// that would make it twice.
func (h *Handler) opDone(w http.ResponseWriter, r *http.Request, sess *account.Session, recordErr error, to string) {
	if recordErr != nil {
		h.log.ErrorContext(r.Context(), "console: an operator action was made but not recorded", "path", r.URL.Path, "err", recordErr)
		h.render(w, r, http.StatusInternalServerError, "problem", &page{Title: "Not recorded", User: sess.User,
			Error: "The change was made, but the operator log could not record it: do not repeat it. The server's log has the details."}, nil)
		return
	}
	redirect(w, r, to)
}

// opCoins writes an amount of smallest units in whole coins, 8 decimals, as
// the operator pages show amounts (D1).
func opCoins(units int64) string { return drip.FormatCoinsFixed(units) }

// ---- GET /operator: the ledger's reconcile result and totals per coin.

type opOverview struct {
	Tabs   []tab
	Report *ledger.Report // of the last finished check; nil before the first
	// CheckedAt and Took say when the last check began and how long it
	// took; Checking, that a check is still running (reconciler).
	CheckedAt, Took string
	Checking        bool
	Totals          []opCoinTotals
}

// opCoinTotals is what each kind of holder holds of one coin; Sum is zero
// when the coin reconciles (D3).
type opCoinTotals struct {
	Coin                              string
	Users, Faucets, Listing, Deposits string
	UserAccounts, FaucetAccounts      int64
	Sum                               string
	Balanced                          bool
}

// operatorOverview asks for a check of the ledger (D3) on every view and
// waits a little for it; a ledger too large to check in that time shows
// its last finished check, and that one is running (reconciler).
func (h *Handler) operatorOverview(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	d := opOverview{Tabs: operatorTabs("overview")}
	wait := reconcileWait
	if deadline, ok := r.Context().Deadline(); ok {
		wait = min(wait, time.Until(deadline)-time.Second) // the time to render the page
	}
	run, running := h.recon.check(r.Context(), wait)
	d.Checking = running
	var err error
	if run != nil {
		err = run.Err
		d.Report, d.CheckedAt, d.Took = run.Report, run.At.UTC().Format(time.DateTime), "under a millisecond"
		if run.Took >= time.Millisecond {
			d.Took = run.Took.Round(time.Millisecond).String()
		}
	}
	if err == nil {
		d.Totals, err = h.opTotals(r.Context())
	}
	h.operatorPage(w, r, sess, http.StatusOK, "operator", &page{Title: "Operator"}, d, err)
}

func (h *Handler) opTotals(ctx context.Context) ([]opCoinTotals, error) {
	rows, err := h.d.Store.BalanceTotals(ctx)
	if err != nil {
		return nil, err
	}
	var out []opCoinTotals
	var sums []int64
	for _, b := range rows {
		if len(out) == 0 || out[len(out)-1].Coin != b.Coin {
			out = append(out, opCoinTotals{Coin: b.Coin, Users: opCoins(0), Faucets: opCoins(0), Listing: opCoins(0), Deposits: opCoins(0)})
			sums = append(sums, 0)
		}
		c := &out[len(out)-1]
		sums[len(sums)-1] += b.Amount
		switch b.Holder {
		case "user":
			c.Users, c.UserAccounts = opCoins(b.Amount), b.Accounts
		case "faucet":
			c.Faucets, c.FaucetAccounts = opCoins(b.Amount), b.Accounts
		case "system:listing":
			c.Listing = opCoins(b.Amount)
		case "system:deposits":
			c.Deposits = opCoins(b.Amount)
		}
	}
	for i := range out {
		out[i].Sum, out[i].Balanced = opCoins(sums[i]), sums[i] == 0
	}
	return out, nil
}

// ---- /operator/users: search, suspend, unsuspend, mark verified.

// opUsersPerPage is one page of the user search.
const opUsersPerPage = 25

type opUsers struct {
	Tabs       []tab
	Query      string
	Users      []drip.User
	Self       int64
	Offset     int
	Prev, Next string // the pages' links; "" when there is none
}

func (h *Handler) operatorUsers(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	h.opShowUsers(w, r, sess, http.StatusOK, &page{}, r.URL.Query().Get("q"), r.URL.Query().Get("offset"))
}

func (h *Handler) opShowUsers(w http.ResponseWriter, r *http.Request, sess *account.Session, status int, p *page, q, offsetText string) {
	offset, _ := strconv.Atoi(offsetText)
	offset = max(offset, 0)
	d := opUsers{Tabs: operatorTabs("users"), Query: q, Self: sess.User.ID, Offset: offset}
	users, err := h.d.Users.Search(r.Context(), q, opUsersPerPage+1, offset)
	if err != nil {
		var de *drip.Error
		if !errors.As(err, &de) || de.Code != drip.CodeInvalid {
			h.operatorPage(w, r, sess, status, "operator_users", p, nil, err)
			return
		}
		p.Fields = map[string]string{"q": de.Message}
		status = http.StatusUnprocessableEntity
	}
	if len(users) > opUsersPerPage {
		users, d.Next = users[:opUsersPerPage], opUsersLink(q, offset+opUsersPerPage)
	}
	if offset > 0 {
		d.Prev = opUsersLink(q, max(offset-opUsersPerPage, 0))
	}
	d.Users = users
	p.Title = "Users"
	h.operatorPage(w, r, sess, status, "operator_users", p, d, nil)
}

// opUsersLink is the users page of a search from the offset-th user.
func opUsersLink(q string, offset int) string {
	v := url.Values{}
	if q != "" {
		v.Set("q", q)
	}
	if offset > 0 {
		v.Set("offset", strconv.Itoa(offset))
	}
	if len(v) == 0 {
		return "/operator/users"
	}
	return "/operator/users?" + v.Encode()
}

// opUserActions are what the users page's buttons do, with the notice each
// leaves (flashes).
var opUserActions = map[string]string{"suspend": "op-suspended", "unsuspend": "op-unsuspended", "verify": "op-verified"}

func (h *Handler) operatorUserAction(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	action := r.PathValue("action")
	notice, ok := opUserActions[action]
	if !ok {
		h.opNotFound(w, r)
		return
	}
	q, offset := r.PostFormValue("q"), r.PostFormValue("offset")
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	u, err := h.d.Store.UserGetByID(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		err = drip.Errorf(drip.CodeNotFound, "There is no such user.")
	}
	if err == nil {
		err = h.opChangeUser(r.Context(), sess, u, action)
	}
	if err != nil {
		p := &page{}
		h.opShowUsers(w, r, sess, h.failure(r, p, err), p, q, offset)
		return
	}
	detail := map[string]any{"user_id": u.ID, "username": u.Username}
	if action == "verify" {
		detail["email"] = u.Email
	}
	err = h.opRecord(r.Context(), nil, sess, "user."+action, "user "+u.Username, detail)
	to := opUsersLink(q, opAtoi(offset))
	sep := "?"
	if strings.Contains(to, "?") {
		sep = "&"
	}
	h.opDone(w, r, sess, err, to+sep+"done="+notice)
}

// opChangeUser makes one of the users page's changes. An operator may not
// suspend themself: the pages would lock out the one using them.
func (h *Handler) opChangeUser(ctx context.Context, sess *account.Session, u *drip.User, action string) error {
	switch action {
	case "suspend":
		if u.ID == sess.User.ID {
			return drip.Errorf(drip.CodeInvalid, "You cannot suspend yourself.")
		}
		return h.d.Users.SetStatus(ctx, u, drip.UserSuspended)
	case "unsuspend":
		return h.d.Users.SetStatus(ctx, u, drip.UserActive)
	default: // verify
		return h.d.Users.MarkVerified(ctx, u)
	}
}

func opAtoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// ---- /operator/deposits: money from system:deposits to a faucet or a user.

type opDeposits struct {
	Tabs  []tab
	Coins []drip.Coin
}

// opDepositBack is where the confirm-it-is-you page returns to.
const opDepositBack = "/operator/deposits"

// operatorDepositsPage shows the deposit form; a deposit creates money,
// so its page asks for a code (or the password) again first when the
// session was not verified within 15 minutes, as every sensitive action.
func (h *Handler) operatorDepositsPage(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	if !h.acc.RecentlyVerified(sess) {
		h.reverify(w, r, opDepositBack)
		return
	}
	h.opShowDeposits(w, r, sess, http.StatusOK, &page{Form: map[string]string{"kind": "faucet"}})
}

func (h *Handler) opShowDeposits(w http.ResponseWriter, r *http.Request, sess *account.Session, status int, p *page) {
	coins, err := h.d.Coins.List(r.Context())
	p.Title = "Deposits"
	h.operatorPage(w, r, sess, status, "operator_deposits", p, opDeposits{Tabs: operatorTabs("deposits"), Coins: coins}, err)
}

// opDepositTarget is the account a deposit credits, as the operator named it.
type opDepositTarget struct {
	account int64
	name    string         // "faucet 3" or "user alice", for the log
	detail  map[string]any // who it is, for the log
}

func (h *Handler) operatorDeposit(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	if !h.acc.RecentlyVerified(sess) {
		h.reverify(w, r, opDepositBack)
		return
	}
	form := map[string]string{"kind": r.PostFormValue("kind"), "target": strings.TrimSpace(r.PostFormValue("target")),
		"coin": r.PostFormValue("coin"), "amount": strings.TrimSpace(r.PostFormValue("amount"))}
	fields := map[string]string{}
	target, err := h.opTarget(r.Context(), form["kind"], form["target"])
	if err != nil {
		fields["target"] = opMessage(err)
	}
	coin, err := h.opKnownCoin(r.Context(), form["coin"])
	if err != nil {
		fields["coin"] = opMessage(err)
	}
	units, err := drip.ParseCoins(form["amount"])
	if err == nil && units == 0 {
		err = drip.Errorf(drip.CodeInvalidAmount, "Invalid amount: a deposit is more than 0.")
	}
	if err != nil {
		fields["amount"] = opMessage(err)
	}
	if len(fields) > 0 {
		h.opShowDeposits(w, r, sess, http.StatusUnprocessableEntity, &page{Form: form, Fields: fields})
		return
	}
	_, err = h.d.Ledger.DepositTo(r.Context(), target.account, coin, units, func(tx store.Tx, transferID, balance int64) error {
		detail := target.detail
		detail["coin"], detail["amount"], detail["amount_coins"] = coin, units, drip.FormatCoins(units)
		detail["transfer_id"], detail["balance"] = transferID, balance
		return h.opRecord(r.Context(), tx, sess, "deposit", target.name, detail)
	})
	if err != nil {
		p := &page{Form: form}
		h.opShowDeposits(w, r, sess, h.failure(r, p, err), p)
		return
	}
	redirect(w, r, opDepositBack+"?done=op-deposited")
}

// opDepositTarget finds the faucet (by id) or the user (by username) a
// deposit is for.
func (h *Handler) opTarget(ctx context.Context, kind, target string) (*opDepositTarget, error) {
	switch kind {
	case "faucet":
		id, err := strconv.ParseInt(strings.TrimPrefix(target, "#"), 10, 64)
		if err != nil || id <= 0 {
			return nil, drip.Errorf(drip.CodeInvalid, "Enter the faucet's id, a number.")
		}
		f, err := h.d.Faucets.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		return &opDepositTarget{account: f.AccountID, name: "faucet " + strconv.FormatInt(f.ID, 10),
			detail: map[string]any{"faucet_id": f.ID, "faucet": f.Name}}, nil
	case "user":
		if target == "" {
			return nil, drip.Errorf(drip.CodeInvalid, "Enter the user's username.")
		}
		u, err := h.d.Users.ByUsername(ctx, target)
		if err != nil {
			return nil, err
		}
		return &opDepositTarget{account: u.AccountID, name: "user " + u.Username,
			detail: map[string]any{"user_id": u.ID, "username": u.Username}}, nil
	}
	return nil, drip.Errorf(drip.CodeInvalid, "Choose whether the deposit is for a faucet or a user.")
}

// opKnownCoin is a coin of the catalogue, active or not (an operator may
// fund a coin before enabling it), by its symbol in any case (D28).
func (h *Handler) opKnownCoin(ctx context.Context, symbol string) (string, error) {
	coins, err := h.d.Coins.List(ctx)
	if err != nil {
		return "", err
	}
	if s := drip.Symbol(strings.TrimSpace(symbol)); drip.HasCoin(coins, s) {
		return s, nil
	}
	return "", drip.Errorf(drip.CodeInvalidCurrency, "Choose one of the coins.")
}

// opMessage is what a page shows of an error next to its field: a
// *drip.Error's message, written for people; anything else is internal.
func opMessage(err error) string {
	var de *drip.Error
	if errors.As(err, &de) {
		return de.Message
	}
	return "Internal error: try again later."
}

// ---- /operator/coins: enable, disable, minimum payout.

type opCoinsData struct {
	Tabs  []tab
	Coins []opCoinRow
}

type opCoinRow struct {
	drip.Coin
	Min, Units string // the minimum payout in coins, and in smallest units ("1 unit")
}

func (h *Handler) operatorCoinsPage(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	h.opShowCoins(w, r, sess, http.StatusOK, &page{})
}

func (h *Handler) opShowCoins(w http.ResponseWriter, r *http.Request, sess *account.Session, status int, p *page) {
	coins, err := h.d.Coins.List(r.Context())
	d := opCoinsData{Tabs: operatorTabs("coins")}
	for _, c := range coins {
		units := strconv.FormatInt(c.MinPayout, 10) + " units"
		if c.MinPayout == 1 {
			units = "1 unit"
		}
		d.Coins = append(d.Coins, opCoinRow{Coin: c, Min: opCoins(c.MinPayout), Units: units})
	}
	p.Title = "Coins"
	h.operatorPage(w, r, sess, status, "operator_coins", p, d, err)
}

func (h *Handler) operatorCoinAction(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	ctx := r.Context()
	symbol, err := h.opKnownCoin(ctx, r.PathValue("symbol"))
	if err != nil {
		h.opNotFound(w, r)
		return
	}
	before, err := h.opCoin(ctx, symbol)
	if err != nil {
		p := &page{}
		h.opShowCoins(w, r, sess, h.failure(r, p, err), p)
		return
	}
	var action, notice string
	detail := map[string]any{"coin": symbol}
	switch r.PathValue("action") {
	case "enable", "disable":
		active := r.PathValue("action") == "enable"
		action, notice = "coin."+r.PathValue("action"), "op-coin-"+r.PathValue("action")+"d"
		detail["was_active"] = before.Active
		err = h.d.Coins.SetActive(ctx, symbol, active)
	case "min-payout":
		var units int64
		units, err = opMinPayout(r.PostFormValue("min"), r.PostFormValue("unit"))
		if err != nil {
			p := &page{Fields: map[string]string{"min-" + symbol: opMessage(err)},
				Form: map[string]string{"min-" + symbol: r.PostFormValue("min"), "unit-" + symbol: r.PostFormValue("unit")}}
			h.opShowCoins(w, r, sess, http.StatusUnprocessableEntity, p)
			return
		}
		action, notice = "coin.min_payout", "op-min-payout"
		detail["from"], detail["to"], detail["to_coins"] = before.MinPayout, units, drip.FormatCoins(units)
		err = h.d.Coins.SetMinPayout(ctx, symbol, units)
	default:
		h.opNotFound(w, r)
		return
	}
	if err != nil {
		p := &page{}
		h.opShowCoins(w, r, sess, h.failure(r, p, err), p)
		return
	}
	h.opDone(w, r, sess, h.opRecord(ctx, nil, sess, action, "coin "+symbol, detail), "/operator/coins?done="+notice)
}

// coin is the catalogue's coin of a symbol known to exist.
func (h *Handler) opCoin(ctx context.Context, symbol string) (*drip.Coin, error) {
	coins, err := h.d.Coins.List(ctx)
	if err != nil {
		return nil, err
	}
	for _, c := range coins {
		if c.Symbol == symbol {
			return &c, nil
		}
	}
	return nil, drip.Errorf(drip.CodeNotFound, "No coin %q.", symbol)
}

// opMinPayout reads a minimum payout given in coins (up to 8 decimals) or
// in smallest units.
func opMinPayout(text, unit string) (int64, error) {
	text = strings.TrimSpace(text)
	if unit == "units" {
		if n, ok := drip.ParseAmount(text); ok {
			return n, nil
		}
		return 0, drip.Errorf(drip.CodeInvalidAmount, "Invalid minimum payout: a whole number of smallest units, at least 1.")
	}
	n, err := drip.ParseCoins(text)
	if err == nil && n == 0 {
		err = drip.Errorf(drip.CodeInvalidAmount, "Invalid minimum payout: at least 0.00000001.")
	}
	return n, err
}

// ---- /operator/listing: listing costs and pending requests (D44).

type opListing struct {
	Tabs     []tab
	Costs    []opListingCost
	Coins    []drip.Coin
	Requests []opListingRow
}

type opListingCost struct {
	Coin, Amount string
}

type opListingRow struct {
	drip.ListingRequest
	Faucet *drip.Faucet
	Amount string
}

func (h *Handler) operatorListingPage(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	h.opShowListing(w, r, sess, http.StatusOK, &page{})
}

func (h *Handler) opShowListing(w http.ResponseWriter, r *http.Request, sess *account.Session, status int, p *page) {
	d, err := h.opListingData(r.Context())
	p.Title = "Listing approval"
	h.operatorPage(w, r, sess, status, "operator_listing", p, d, err)
}

func (h *Handler) opListingData(ctx context.Context) (*opListing, error) {
	d := &opListing{Tabs: operatorTabs("listing")}
	var err error
	if d.Coins, err = h.d.Coins.List(ctx); err != nil {
		return nil, err
	}
	costs, err := h.d.Listing.Costs(ctx)
	if err != nil {
		return nil, err
	}
	for _, c := range d.Coins {
		if cost, ok := costs[c.Symbol]; ok && cost > 0 {
			d.Costs = append(d.Costs, opListingCost{Coin: c.Symbol, Amount: opCoins(cost)})
		}
	}
	pending, err := h.d.Listing.Requests(ctx, drip.ListingPending)
	if err != nil {
		return nil, err
	}
	for _, req := range pending {
		f, err := h.d.Faucets.Get(ctx, req.FaucetID)
		if err != nil {
			return nil, err
		}
		d.Requests = append(d.Requests, opListingRow{ListingRequest: req, Faucet: f, Amount: opCoins(req.Amount)})
	}
	return d, nil
}

func (h *Handler) operatorListingCost(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	form := map[string]string{"coin": r.PostFormValue("coin"), "amount": strings.TrimSpace(r.PostFormValue("amount"))}
	fields := map[string]string{}
	coin, err := h.opKnownCoin(r.Context(), form["coin"])
	if err != nil {
		fields["coin"] = opMessage(err)
	}
	units, err := drip.ParseCoins(form["amount"])
	if err != nil {
		fields["amount"] = opMessage(err)
	}
	if len(fields) == 0 {
		err = h.d.Listing.SetCost(r.Context(), coin, units)
	}
	if len(fields) > 0 || err != nil {
		p := &page{Form: form, Fields: fields}
		status := http.StatusUnprocessableEntity
		if err != nil && len(fields) == 0 {
			status = h.failure(r, p, err)
		}
		h.opShowListing(w, r, sess, status, p)
		return
	}
	detail := map[string]any{"coin": coin, "amount": units, "amount_coins": drip.FormatCoins(units)}
	h.opDone(w, r, sess, h.opRecord(r.Context(), nil, sess, "listing.cost", "coin "+coin, detail), "/operator/listing?done=op-listing-cost")
}

// opDecisions are the decisions on a listing request, with the notice
// each leaves (flashes).
var opDecisions = map[string]string{"approve": "op-approved", "reject": "op-rejected"}

func (h *Handler) operatorListingDecide(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	action := r.PathValue("action")
	notice, ok := opDecisions[action]
	if !ok {
		h.opNotFound(w, r)
		return
	}
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	var req *drip.ListingRequest
	switch {
	case err != nil:
		err = drip.Errorf(drip.CodeNotFound, "There is no such listing request.")
	case action == "approve":
		req, err = h.d.Listing.Approve(r.Context(), id)
	default: // reject refunds the fee to the faucet, in the same transaction (D44)
		req, err = h.d.Listing.Reject(r.Context(), id)
	}
	if err != nil {
		p := &page{}
		h.opShowListing(w, r, sess, h.failure(r, p, err), p)
		return
	}
	detail := map[string]any{"request_id": req.ID, "faucet_id": req.FaucetID, "coin": req.Coin, "amount": req.Amount}
	if action == "reject" {
		detail["refunded"] = req.Amount
	}
	target := "listing request " + strconv.FormatInt(req.ID, 10)
	h.opDone(w, r, sess, h.opRecord(r.Context(), nil, sess, "listing."+action, target, detail), "/operator/listing?done="+notice)
}

// ---- GET /operator/log: the operator log, newest first.

// opLogPerPage is one page of the operator log.
const opLogPerPage = 50

type opLog struct {
	Tabs    []tab
	Entries []opLogRow
	Newer   bool   // the page does not start at the newest entry
	Older   string // the next page's link; "" at the end
}

type opLogRow struct {
	store.OperatorLogEntry
	When string
}

func (h *Handler) operatorLogPage(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	before, _ := strconv.ParseInt(r.URL.Query().Get("before"), 10, 64)
	before = max(before, 0)
	entries, err := h.d.Store.OperatorLogList(r.Context(), &store.OperatorLogListParams{BeforeID: before, Limit: opLogPerPage + 1})
	d := opLog{Tabs: operatorTabs("log"), Newer: before > 0}
	if len(entries) > opLogPerPage {
		entries = entries[:opLogPerPage]
		d.Older = "/operator/log?before=" + strconv.FormatInt(entries[len(entries)-1].ID, 10)
	}
	for _, e := range entries {
		d.Entries = append(d.Entries, opLogRow{OperatorLogEntry: e, When: e.CreatedAt.UTC().Format(time.DateTime)})
	}
	h.operatorPage(w, r, sess, http.StatusOK, "operator_log", &page{Title: "Operator log"}, d, err)
}
