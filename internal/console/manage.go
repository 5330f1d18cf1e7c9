package console

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/dripfaucet/drip/internal/account"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/operation"
	"github.com/dripfaucet/drip/internal/payout"
	record "github.com/dripfaucet/drip/internal/reply"
)

// The faucet management pages (issue 11, section 5): an owner's faucets,
// creating one, and per faucet its overview, payouts, settings, send
// limits, IP whitelist, anti-fraud rules, low-balance alerts and listing.
// Each page reads and changes the faucet through the operations v2 and
// the tool server call (internal/operation), as the faucet (ownerCaller),
// so no rule is copied here; every change lands in the faucet's audit
// log beside the tool server's manage calls.

func (h *Handler) manageRoutes(mux *http.ServeMux) {
	mux.Handle("GET /manage", h.auth(h.myFaucets))
	mux.Handle("POST /manage", h.auth(h.createFaucet))
	mux.Handle("GET /manage/{id}", h.auth(h.overview))
	mux.Handle("GET /manage/{id}/payouts", h.auth(h.payoutsPage))
	mux.Handle("GET /manage/{id}/payouts.csv", h.auth(h.payoutsCSV))
	mux.Handle("GET /manage/{id}/settings", h.auth(h.settingsPage))
	mux.Handle("POST /manage/{id}/settings", h.auth(h.saveSettings))
	mux.Handle("GET /manage/{id}/limits", h.auth(h.limitsPage))
	mux.Handle("POST /manage/{id}/limits", h.auth(h.addLimit))
	mux.Handle("POST /manage/{id}/limits/remove", h.auth(h.removeLimit))
	mux.Handle("GET /manage/{id}/ip-whitelist", h.auth(h.whitelistPage))
	mux.Handle("POST /manage/{id}/ip-whitelist", h.auth(h.saveWhitelist))
	mux.Handle("GET /manage/{id}/anti-fraud", h.auth(h.antiFraudPage))
	mux.Handle("POST /manage/{id}/anti-fraud", h.auth(h.saveRules))
	mux.Handle("POST /manage/{id}/anti-fraud/toggle", h.auth(h.toggleAntiFraud))
	mux.Handle("GET /manage/{id}/alerts", h.auth(h.alertsPage))
	mux.Handle("POST /manage/{id}/alerts", h.auth(h.saveAlerts))
	mux.Handle("GET /manage/{id}/listing", h.auth(h.listingPage))
	mux.Handle("POST /manage/{id}/listing", h.auth(h.requestListing))
}

// ownedFaucetSummary is a line of "My faucets".
type ownedFaucetSummary struct {
	Faucet   drip.Faucet
	Balances []coinAmount // the coins it holds, none when empty
}

// coinAmount is an amount of a coin as the pages show it: 8 decimals.
type coinAmount struct {
	Coin   string
	Amount string
}

func newCoinAmount(coin string, units int64) coinAmount {
	return coinAmount{Coin: coin, Amount: drip.FormatCoinsFixed(units)}
}

// myFaucets lists the user's faucets, with the form that creates one.
func (h *Handler) myFaucets(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	h.showMyFaucets(w, r, sess, http.StatusOK, &page{Flash: flash(r)}, nil)
}

func (h *Handler) showMyFaucets(w http.ResponseWriter, r *http.Request, sess *account.Session, status int, p *page, failed error) {
	ctx := r.Context()
	faucets, err := h.d.Store.FaucetListByOwner(ctx, sess.User.ID)
	list := make([]ownedFaucetSummary, 0, len(faucets))
	for i := 0; err == nil && i < len(faucets); i++ {
		var held []drip.Balance
		held, err = h.d.Faucets.Balances(ctx, &faucets[i])
		s := ownedFaucetSummary{Faucet: faucets[i]}
		for _, b := range held {
			if b.Amount != 0 {
				s.Balances = append(s.Balances, newCoinAmount(b.Coin, b.Amount))
			}
		}
		list = append(list, s)
	}
	if err != nil {
		h.problem(w, r, sess, err)
		return
	}
	p.Title, p.User, p.Wide, p.Data = "My faucets", sess.User, true, list
	h.render(w, r, status, "manage", p, failed)
}

// createFaucet makes a faucet with the CreateFaucet operation, the one v2
// /faucet/create runs, and shows its v1 key this once (D13): the answer
// is the page itself, never stored, logged or redirected to.
func (h *Handler) createFaucet(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	params := operation.CreateFaucetParams{
		Name: r.PostFormValue("faucet_name"), Domain: strings.TrimSpace(r.PostFormValue("faucet_domain")),
		URL: strings.TrimSpace(r.PostFormValue("faucet_url")),
	}
	// The operation makes the faucet for its caller's owner; a user who
	// owns none yet calls it as the owner alone.
	caller := &payout.Caller{Faucet: &drip.Faucet{OwnerID: sess.User.ID}}
	rec, msg, err := h.d.Ops.CreateFaucet.Call(r.Context(), caller, given(params))
	if err != nil {
		p := &page{Form: map[string]string{"faucet_name": params.Name, "faucet_domain": params.Domain, "faucet_url": params.URL}}
		h.showMyFaucets(w, r, sess, h.manageFailure(r, p, err), p, err)
		return
	}
	created := rec.(operation.CreatedFaucet)
	f, err := h.d.Faucets.Get(r.Context(), created.Faucet.ID)
	if err != nil {
		h.problem(w, r, sess, err)
		return
	}
	h.recordChange(r, sess, f, h.d.Ops.CreateFaucet.Name(), params, msg, nil)
	h.render(w, r, http.StatusOK, "manage_created", &page{Title: "Faucet created", User: sess.User, Data: created}, nil)
}

// given is a Decoder that hands an operation the Params a page read from
// its form.
func given[P any](params P) operation.Decoder {
	return decodeInto(func(p *P) error { *p = params; return nil })
}

// decodeInto is a Decoder that fills an operation's Params with read; an
// error of read (a number that is not one) is the call's, as a v2 body
// that does not decode is.
func decodeInto[P any](read func(p *P) error) operation.Decoder {
	return func(dst any) error {
		p, ok := dst.(*P)
		if !ok {
			return fmt.Errorf("console: a decoder of %T was given %T", new(P), dst)
		}
		return read(p)
	}
}

// warned is a change's record that may say what it weakened
// (operation/warning.go).
type warned interface{ Warned() string }

// change runs a manage operation on f as its owner, with the Params read
// decodes from the form, and records the call in the faucet's audit log
// (issue 11): the Params as decoded, and the operation's message with its
// warning, as the tool server records its manage calls. warning is what
// the change weakened, or "".
func (h *Handler) change(r *http.Request, sess *account.Session, f *drip.Faucet, op *operation.Op, decode operation.Decoder) (rec any, warning string, err error) {
	var args any = struct{}{}
	var msg string
	rec, msg, err = op.Call(r.Context(), ownerCaller(f), func(p any) error {
		args = p // what was asked, as far as it decoded
		return decode(p)
	})
	if w, ok := rec.(warned); ok && err == nil {
		warning = w.Warned()
	}
	result := msg
	if warning != "" {
		result += " Warning: " + warning
	}
	h.recordChange(r, sess, f, op.Name(), args, result, err)
	return rec, warning, err
}

// read runs a read operation on f as its owner.
func (h *Handler) read(r *http.Request, f *drip.Faucet, op *operation.Op, decode operation.Decoder) (any, error) {
	rec, _, err := op.Call(r.Context(), ownerCaller(f), decode)
	return rec, err
}

// manageFields tells which field of the faucet pages an operation's error
// is about, by the start of its message (the operations' wording); an
// error of no field is shown above the form.
var manageFields = []fieldPrefix{
	{"Invalid faucet name", "faucet_name"},
	{"Invalid faucet domain", "faucet_domain"},
	{"Invalid faucet URL", "faucet_url"},
	{"Invalid faucet description", "faucet_description"},
	{"Invalid timer_minutes", "timer_minutes"},
	{"Invalid currencies_selected", "currencies_selected"},
	{"Invalid categories_selected", "categories_selected"},
	{"Invalid limit", "limit"},
	{"Invalid IP", "ip_whitelist"},
	{"Invalid CIDR", "ip_whitelist"},
	{"Invalid trust_rank", "trust_rank"},
	{"Invalid negative_rank", "negative_rank"},
	{"Invalid rank", "trust_rank"},
	{"Invalid whitelist", "whitelist"},
	{"Invalid blacklist", "blacklist"},
	{"Invalid list", "whitelist"},
	{"Invalid recipient", "recipient"},
	{"Recipient not payable", "recipient"},
	{"This address is linked", "recipient"},
	{"Invalid coin", "coin"},
	{"Invalid threshold", "thresholds"},
}

// manageFailure is failure for the faucet pages: the error goes next to
// the field it is about (manageFields).
func (h *Handler) manageFailure(r *http.Request, p *page, err error) int {
	status := h.failure(r, p, err)
	toField(p, manageFields)
	return status
}

// problem shows a page that could not be read: its error, or a 404 for a
// faucet that is not the user's.
func (h *Handler) problem(w http.ResponseWriter, r *http.Request, sess *account.Session, err error) {
	p := &page{Title: "Error", User: sess.User}
	h.render(w, r, h.manageFailure(r, p, err), "problem", p, err)
}

// faucetPage is what every page of one faucet gets: its tabs, and its
// own data.
type faucetPage struct {
	Tabs    faucetTabs
	Warning string // what a change just made weakened (operation/warning.go)
	Page    any
}

// view names one of a faucet's pages: its tab, template and title.
type view struct{ tab, name, title string }

// showFaucet renders one of f's pages under its tabs; warning is what a
// change just made weakened, or "".
func (h *Handler) showFaucet(w http.ResponseWriter, r *http.Request, sess *account.Session, f *drip.Faucet, v view, status int, p *page, data any, warning string, failed error) {
	p.Title, p.User, p.Data = v.title, sess.User, faucetPage{Tabs: faucetTabs{Faucet: f, Current: v.tab}, Warning: warning, Page: data}
	if p.Flash == "" && failed == nil {
		p.Flash = flash(r)
	}
	h.render(w, r, status, v.name, p, failed)
}

// done answers a successful change: back to the page with its notice
// (POST/redirect/GET). A change that weakened a protection is answered
// by again, the page itself with the warning, as the tool server puts
// the warning first in its answer: it is about this one change, so no URL
// may carry it, and sending the same form again changes nothing more.
func (h *Handler) done(w http.ResponseWriter, r *http.Request, f *drip.Faucet, path, notice, warning string, again func(p *page, warning string)) {
	if warning == "" || again == nil {
		redirect(w, r, "/manage/"+strconv.FormatInt(f.ID, 10)+path+"?done="+notice)
		return
	}
	again(&page{Flash: flashes[notice]}, warning)
}

// overviewData is the data of a faucet's overview.
type overviewData struct {
	Balances []coinAmount
	Coins    []coinOverview // coins with payouts in the last 30 days
	From, To string         // the days the statistics cover
}

// coinOverview is one coin's payouts: today's, the last 30 days', the
// chart of its days, and its top recipients.
type coinOverview struct {
	Coin                     string
	TodayCount, MonthCount   int64
	TodayAmount, MonthAmount string
	Chart                    *barChart
	Days                     []dayFigure // the days with payouts, newest first
	Top                      []recipientFigure
}

type dayFigure struct {
	Date    string
	Payouts int64
	Amount  string
}

type recipientFigure struct {
	PayoutUserHash string
	Payouts        int64
	Amount         string
	LastPayoutAt   string
}

// topRecipients is how many of a coin's recipients the overview lists.
const topRecipients = 10

// overview shows a faucet's balances, its payouts per coin today and over
// the last 30 days (DailyStats, drawn as a chart) and its top recipients
// (UserStats).
func (h *Handler) overview(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	f, ok := h.ownedFaucet(w, r, sess)
	if !ok {
		return
	}
	d, err := h.overviewData(r, f)
	if err != nil {
		h.problem(w, r, sess, err)
		return
	}
	h.showFaucet(w, r, sess, f, view{"overview", "manage_overview", f.Name}, http.StatusOK, &page{Wide: true}, d, "", nil)
}

func (h *Handler) overviewData(r *http.Request, f *drip.Faucet) (*overviewData, error) {
	rec, err := h.read(r, f, h.d.Ops.Balances, given(operation.NoParams{}))
	if err != nil {
		return nil, err
	}
	d := &overviewData{}
	for _, b := range rec.(record.Balances).Balances {
		d.Balances = append(d.Balances, newCoinAmount(b.Currency, b.Balance))
	}
	rec, err = h.read(r, f, h.d.Ops.DailyStats, given(operation.NoParams{}))
	if err != nil {
		return nil, err
	}
	daily := rec.(record.Daily)
	d.From, d.To = daily.From, daily.To
	byCoin := map[string][]record.Day{}
	var coins []string
	for _, day := range daily.Days {
		if _, seen := byCoin[day.Currency]; !seen {
			coins = append(coins, day.Currency)
		}
		byCoin[day.Currency] = append(byCoin[day.Currency], day)
	}
	for _, coin := range coins {
		c, err := h.coinOverview(r, f, coin, byCoin[coin], daily.From, daily.To)
		if err != nil {
			return nil, err
		}
		d.Coins = append(d.Coins, c)
	}
	return d, nil
}

func (h *Handler) coinOverview(r *http.Request, f *drip.Faucet, coin string, days []record.Day, from, to string) (coinOverview, error) {
	c := coinOverview{Coin: coin}
	var today, month int64
	for _, day := range days {
		c.MonthCount += day.Payouts
		month += day.Amount
		if day.Date == to {
			c.TodayCount += day.Payouts
			today += day.Amount
		}
		c.Days = append(c.Days, dayFigure{Date: day.Date, Payouts: day.Payouts, Amount: drip.FormatCoinsFixed(day.Amount)})
	}
	c.TodayAmount, c.MonthAmount = drip.FormatCoinsFixed(today), drip.FormatCoinsFixed(month)
	chart, err := dailyChart(coin, days, from, to)
	if err != nil {
		return c, err
	}
	c.Chart = chart
	rec, err := h.read(r, f, h.d.Ops.UserStats, given(operation.PageParams{Coin: coin}))
	if err != nil {
		return c, err
	}
	for i, s := range rec.(record.Page[record.UserStat]).Items {
		if i == topRecipients {
			break
		}
		c.Top = append(c.Top, recipientFigure{PayoutUserHash: s.PayoutUserHash, Payouts: s.Payouts,
			Amount: drip.FormatCoinsFixed(s.Amount), LastPayoutAt: strings.Replace(strings.TrimSuffix(s.LastPayoutAt, "Z"), "T", " ", 1)})
	}
	return c, nil
}
