package console

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/dripfaucet/drip/internal/account"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/faucet"
	"github.com/dripfaucet/drip/internal/operation"
	record "github.com/dripfaucet/drip/internal/reply"
)

// A faucet's settings pages: each form is filled with the current values,
// read into the Params of the operation v2 and the tool server run
// (UpdateFaucet, SetRateLimits, SetIPWhitelist, ToggleAntiFraud,
// UpdateAntiFraudRules, ToggleLowBalanceNotification, RequestApproval),
// and the operation's refusal is shown beside its field.

// choice is a checkbox or option of a form.
type choice struct {
	Value, Label string
	Checked      bool
}

// settingsData is the data of the settings page.
type settingsData struct {
	Currencies []choice
	Categories []choice
}

func (h *Handler) settingsPage(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	f, ok := h.ownedFaucet(w, r, sess)
	if !ok {
		return
	}
	p := &page{Form: map[string]string{"faucet_name": f.Name, "faucet_domain": f.Domain, "faucet_url": f.URL,
		"faucet_description": f.Settings.Description, "timer_minutes": strconv.Itoa(f.Settings.TimerMinutes)}}
	h.showSettings(w, r, sess, f, http.StatusOK, p, f.Settings.Currencies, f.Settings.Categories, nil)
}

func (h *Handler) showSettings(w http.ResponseWriter, r *http.Request, sess *account.Session, f *drip.Faucet, status int, p *page, currencies, categories []string, failed error) {
	active, err := h.d.Coins.ListActive(r.Context())
	if err != nil {
		h.problem(w, r, sess, err)
		return
	}
	d := &settingsData{}
	for _, c := range active {
		d.Currencies = append(d.Currencies, choice{Value: c.Symbol, Label: c.Symbol + " · " + c.Name, Checked: slices.Contains(currencies, c.Symbol)})
	}
	for _, c := range drip.Categories {
		d.Categories = append(d.Categories, choice{Value: c, Label: c, Checked: slices.Contains(categories, c)})
	}
	h.showFaucet(w, r, sess, f, view{"settings", "manage_settings", "Settings · " + f.Name}, status, p, d, "", failed)
}

func (h *Handler) saveSettings(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	f, ok := h.ownedFaucet(w, r, sess)
	if !ok {
		return
	}
	_ = r.ParseForm()
	form := map[string]string{}
	for _, k := range []string{"faucet_name", "faucet_domain", "faucet_url", "faucet_description", "timer_minutes"} {
		form[k] = r.PostForm.Get(k)
	}
	currencies, categories := nonNil(r.PostForm["currencies_selected"]), nonNil(r.PostForm["categories_selected"])
	_, _, err := h.change(r, sess, f, h.d.Ops.UpdateFaucet, decodeInto(func(p *operation.UpdateFaucetParams) error {
		name, domain, url := form["faucet_name"], strings.TrimSpace(form["faucet_domain"]), strings.TrimSpace(form["faucet_url"])
		description := strings.ReplaceAll(form["faucet_description"], "\r\n", "\n")
		*p = operation.UpdateFaucetParams{Name: &name, Domain: &domain, URL: &url, Description: &description,
			CurrenciesSelected: &currencies, CategoriesSelected: &categories}
		timer, err := strconv.Atoi(strings.TrimSpace(form["timer_minutes"]))
		if err != nil {
			return drip.Errorf(drip.CodeInvalid, "Invalid timer_minutes: a whole number of minutes, 1 to 1440.")
		}
		p.TimerMinutes = &timer
		return nil
	}))
	if err != nil {
		p := &page{Form: form}
		h.showSettings(w, r, sess, f, h.manageFailure(r, p, err), p, currencies, categories, err)
		return
	}
	h.done(w, r, f, "/settings", "manage-settings", "", nil)
}

// nonNil is a form's list, empty rather than nil when no box is ticked:
// ticking none is a choice, not an absent field.
func nonNil(list []string) []string {
	if list == nil {
		return []string{}
	}
	return list
}

// limitRow is one send limit as the limits page lists it, with the
// values that name it to its remove button.
type limitRow struct {
	Coin, Per, Window, MaxCount, MaxAmount string
	Input                                  map[string]string
}

// limitsData is the data of the send limits page.
type limitsData struct {
	Limits []limitRow
	Coins  []string // the active coins a new limit may count
	Pers   []choice
	Units  []choice
}

// windowUnits are the units a limit's window is typed in, in seconds.
var windowUnits = []windowUnit{{"seconds", 1}, {"minutes", 60}, {"hours", 3600}, {"days", 86400}}

type windowUnit struct {
	name    string
	seconds int64
}

func (h *Handler) limitsPage(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	f, ok := h.ownedFaucet(w, r, sess)
	if !ok {
		return
	}
	h.showLimits(w, r, sess, f, http.StatusOK, &page{Form: map[string]string{"per": "recipient", "unit": "hours"}}, "", nil)
}

func (h *Handler) showLimits(w http.ResponseWriter, r *http.Request, sess *account.Session, f *drip.Faucet, status int, p *page, warning string, failed error) {
	active, err := h.d.Coins.ListActive(r.Context())
	if err != nil {
		h.problem(w, r, sess, err)
		return
	}
	d := &limitsData{}
	for _, c := range active {
		d.Coins = append(d.Coins, c.Symbol)
	}
	for _, per := range []struct{ v, l string }{{"faucet", "all payouts of the faucet"}, {"recipient", "each recipient"}, {"ip", "each claimer IP"}} {
		d.Pers = append(d.Pers, choice{Value: per.v, Label: per.l, Checked: p.Form["per"] == per.v})
	}
	for _, u := range windowUnits {
		d.Units = append(d.Units, choice{Value: u.name, Label: u.name, Checked: p.Form["unit"] == u.name})
	}
	for _, l := range f.Limits {
		row := limitRow{Coin: "every coin", Per: string(l.Per), Window: window(l.WindowSeconds), MaxCount: "—", MaxAmount: "—",
			Input: limitForm(l)}
		if l.Coin != "" {
			row.Coin = l.Coin
		}
		if l.MaxCount > 0 {
			row.MaxCount = strconv.FormatInt(l.MaxCount, 10)
		}
		if l.MaxAmount > 0 {
			row.MaxAmount = drip.FormatCoinsFixed(l.MaxAmount)
			if l.Coin == "" {
				row.MaxAmount += " of each coin"
			}
		}
		d.Limits = append(d.Limits, row)
	}
	h.showFaucet(w, r, sess, f, view{"limits", "manage_limits", "Send limits · " + f.Name}, status, p, d, warning, failed)
}

// window writes a limit's window in its largest whole unit.
func window(seconds int64) string {
	for i := len(windowUnits) - 1; i >= 0; i-- {
		u := windowUnits[i]
		if seconds%u.seconds == 0 {
			n := seconds / u.seconds
			name := u.name
			if n == 1 {
				name = strings.TrimSuffix(name, "s")
			}
			return strconv.FormatInt(n, 10) + " " + name
		}
	}
	return strconv.FormatInt(seconds, 10) + " seconds"
}

// limitForm is a limit as the remove form carries it: exact units, so
// that the limit removed is the one shown.
func limitForm(l drip.Limit) map[string]string {
	return map[string]string{"coin": l.Coin, "per": string(l.Per), "window_seconds": strconv.FormatInt(l.WindowSeconds, 10),
		"max_count": strconv.FormatInt(l.MaxCount, 10), "max_amount_units": strconv.FormatInt(l.MaxAmount, 10)}
}

// limitInputs are f's limits as SetRateLimits takes them.
func limitInputs(limits []drip.Limit) []faucet.LimitInput {
	out := make([]faucet.LimitInput, 0, len(limits)+1)
	for _, l := range limits {
		in := faucet.LimitInput{Per: string(l.Per), WindowSeconds: l.WindowSeconds}
		if l.Coin != "" {
			in.Currency = &l.Coin
		}
		if l.MaxCount > 0 {
			in.MaxCount = &l.MaxCount
		}
		if l.MaxAmount > 0 {
			in.MaxAmount = &l.MaxAmount
		}
		out = append(out, in)
	}
	return out
}

// addLimit adds a send limit to the faucet's list (D41).
func (h *Handler) addLimit(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	f, ok := h.ownedFaucet(w, r, sess)
	if !ok {
		return
	}
	_ = r.ParseForm()
	form := map[string]string{}
	for _, k := range []string{"coin", "per", "window", "unit", "max_count", "max_amount"} {
		form[k] = strings.TrimSpace(r.PostForm.Get(k))
	}
	_, warning, err := h.change(r, sess, f, h.d.Ops.SetRateLimits, decodeInto(func(p *operation.SetRateLimitsParams) error {
		limits := limitInputs(f.Limits)
		p.RateLimits = &limits
		in, err := readLimit(form)
		if err != nil {
			return err
		}
		limits = append(limits, in)
		return nil
	}))
	if err != nil {
		p := &page{Form: form}
		h.showLimits(w, r, sess, f, h.manageFailure(r, p, err), p, "", err)
		return
	}
	h.done(w, r, f, "/limits", "manage-limit-added", warning, nil)
}

// readLimit reads the add form's limit: a window in a unit, a count and
// an amount in coins, either left empty for no maximum.
func readLimit(form map[string]string) (faucet.LimitInput, error) {
	in := faucet.LimitInput{Per: form["per"]}
	if form["coin"] != "" {
		coin := form["coin"]
		in.Currency = &coin
	}
	n, err := strconv.ParseInt(form["window"], 10, 64)
	unit := slices.IndexFunc(windowUnits, func(u windowUnit) bool { return u.name == form["unit"] })
	if err != nil || n < 1 || unit < 0 || n > (1<<62)/windowUnits[unit].seconds {
		return in, drip.Errorf(drip.CodeInvalid, "Invalid limit window: a whole number of seconds, minutes, hours or days.")
	}
	in.WindowSeconds = n * windowUnits[unit].seconds
	if form["max_count"] != "" {
		c, err := strconv.ParseInt(form["max_count"], 10, 64)
		if err != nil || c < 0 {
			return in, drip.Errorf(drip.CodeInvalid, "Invalid limit count: a whole number of payouts, or empty for no maximum.")
		}
		in.MaxCount = &c
	}
	if form["max_amount"] != "" {
		a, err := drip.ParseCoins(form["max_amount"])
		if err != nil {
			return in, drip.Errorf(drip.CodeInvalid, "Invalid limit amount: %s", strings.TrimPrefix(drip.ErrorMessage(err), "Invalid amount: "))
		}
		in.MaxAmount = &a
	}
	return in, nil
}

// removeLimit removes the first of the faucet's limits equal to the one
// the form names; a limit removed meanwhile (in another tab, or through
// v2) removes nothing more.
func (h *Handler) removeLimit(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	f, ok := h.ownedFaucet(w, r, sess)
	if !ok {
		return
	}
	_ = r.ParseForm()
	i := slices.IndexFunc(f.Limits, func(l drip.Limit) bool {
		for k, v := range limitForm(l) {
			if r.PostForm.Get(k) != v {
				return false
			}
		}
		return true
	})
	if i < 0 {
		h.done(w, r, f, "/limits", "manage-limit-gone", "", nil)
		return
	}
	kept := slices.Delete(slices.Clone(f.Limits), i, i+1)
	_, warning, err := h.change(r, sess, f, h.d.Ops.SetRateLimits, decodeInto(func(p *operation.SetRateLimitsParams) error {
		limits := limitInputs(kept)
		p.RateLimits = &limits
		return nil
	}))
	if err != nil {
		p := &page{Form: map[string]string{"per": "recipient", "unit": "hours"}}
		h.showLimits(w, r, sess, f, h.manageFailure(r, p, err), p, "", err)
		return
	}
	h.done(w, r, f, "/limits", "manage-limit-removed", warning, h.again(w, r, sess, f, func(f *drip.Faucet, p *page, warning string) {
		p.Form = map[string]string{"per": "recipient", "unit": "hours"}
		h.showLimits(w, r, sess, f, http.StatusOK, p, warning, nil)
	}))
}

// lines splits a list typed one entry a line (commas and spaces also
// separate), dropping blank entries.
func lines(s string) []string {
	return strings.FieldsFunc(s, func(c rune) bool { return c == '\n' || c == '\r' || c == ',' || c == ' ' || c == '\t' })
}

func (h *Handler) whitelistPage(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	f, ok := h.ownedFaucet(w, r, sess)
	if !ok {
		return
	}
	p := &page{Form: map[string]string{"ip_whitelist": strings.Join(f.IPWhitelistStrings(), "\n")}}
	h.showWhitelist(w, r, sess, f, http.StatusOK, p, "", nil)
}

func (h *Handler) showWhitelist(w http.ResponseWriter, r *http.Request, sess *account.Session, f *drip.Faucet, status int, p *page, warning string, failed error) {
	h.showFaucet(w, r, sess, f, view{"whitelist", "manage_whitelist", "IP whitelist · " + f.Name}, status, p, f.IPWhitelistStrings(), warning, failed)
}

func (h *Handler) saveWhitelist(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	f, ok := h.ownedFaucet(w, r, sess)
	if !ok {
		return
	}
	typed := r.PostFormValue("ip_whitelist")
	list := lines(typed)
	_, warning, err := h.change(r, sess, f, h.d.Ops.SetIPWhitelist, given(operation.SetIPWhitelistParams{IPWhitelist: &list}))
	if err != nil {
		p := &page{Form: map[string]string{"ip_whitelist": typed}}
		h.showWhitelist(w, r, sess, f, h.manageFailure(r, p, err), p, "", err)
		return
	}
	h.done(w, r, f, "/ip-whitelist", "manage-whitelist", warning, h.again(w, r, sess, f, func(f *drip.Faucet, p *page, warning string) {
		p.Form = map[string]string{"ip_whitelist": strings.Join(f.IPWhitelistStrings(), "\n")}
		h.showWhitelist(w, r, sess, f, http.StatusOK, p, warning, nil)
	}))
}

func (h *Handler) antiFraudPage(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	f, ok := h.ownedFaucet(w, r, sess)
	if !ok {
		return
	}
	h.showAntiFraud(w, r, sess, f, http.StatusOK, &page{Form: rulesForm(f.Rules)}, "", nil)
}

// rulesForm is the rules form filled with the faucet's rules.
func rulesForm(rules drip.Rules) map[string]string {
	return map[string]string{"trust_rank": strconv.Itoa(rules.TrustRank), "negative_rank": strconv.Itoa(rules.NegativeRank),
		"whitelist": strings.Join(rules.Whitelist, "\n"), "blacklist": strings.Join(rules.Blacklist, "\n")}
}

func (h *Handler) showAntiFraud(w http.ResponseWriter, r *http.Request, sess *account.Session, f *drip.Faucet, status int, p *page, warning string, failed error) {
	h.showFaucet(w, r, sess, f, view{"rules", "manage_antifraud", "Anti-fraud · " + f.Name}, status, p, f.Rules, warning, failed)
}

// again re-reads the faucet after a change that weakened it and shows
// the page with the warning.
func (h *Handler) again(w http.ResponseWriter, r *http.Request, sess *account.Session, f *drip.Faucet, show func(f *drip.Faucet, p *page, warning string)) func(p *page, warning string) {
	return func(p *page, warning string) {
		f, err := h.d.Faucets.Get(r.Context(), f.ID)
		if err != nil {
			h.problem(w, r, sess, err)
			return
		}
		show(f, p, warning)
	}
}

// toggleAntiFraud turns the rank checks on or off, as the button says
// (never a flip: a form sent twice does the same once).
func (h *Handler) toggleAntiFraud(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	f, ok := h.ownedFaucet(w, r, sess)
	if !ok {
		return
	}
	on := r.PostFormValue("enabled") == "true"
	_, warning, err := h.change(r, sess, f, h.d.Ops.ToggleAntiFraud, given(operation.ToggleAntiFraudParams{Enabled: &on}))
	if err != nil {
		p := &page{Form: rulesForm(f.Rules)}
		h.showAntiFraud(w, r, sess, f, h.manageFailure(r, p, err), p, "", err)
		return
	}
	notice := "manage-antifraud-off"
	if on {
		notice = "manage-antifraud-on"
	}
	h.done(w, r, f, "/anti-fraud", notice, warning, h.again(w, r, sess, f, func(f *drip.Faucet, p *page, warning string) {
		p.Form = rulesForm(f.Rules)
		h.showAntiFraud(w, r, sess, f, http.StatusOK, p, warning, nil)
	}))
}

// saveRules sets the ranks and both lists (D42).
func (h *Handler) saveRules(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	f, ok := h.ownedFaucet(w, r, sess)
	if !ok {
		return
	}
	_ = r.ParseForm()
	form := map[string]string{}
	for _, k := range []string{"trust_rank", "negative_rank", "whitelist", "blacklist"} {
		form[k] = r.PostForm.Get(k)
	}
	_, warning, err := h.change(r, sess, f, h.d.Ops.UpdateAntiFraudRules, decodeInto(func(p *operation.UpdateRulesParams) error {
		white, black := lines(form["whitelist"]), lines(form["blacklist"])
		p.Whitelist, p.Blacklist = &white, &black
		for _, rank := range []struct {
			name string
			to   **int
		}{{"trust_rank", &p.TrustRank}, {"negative_rank", &p.NegativeRank}} {
			n, err := strconv.Atoi(strings.TrimSpace(form[rank.name]))
			if err != nil {
				return drip.Errorf(drip.CodeInvalid, "Invalid %s: a whole number from 0 to 100.", rank.name)
			}
			*rank.to = &n
		}
		return nil
	}))
	if err != nil {
		p := &page{Form: form}
		h.showAntiFraud(w, r, sess, f, h.manageFailure(r, p, err), p, "", err)
		return
	}
	h.done(w, r, f, "/anti-fraud", "manage-rules", warning, h.again(w, r, sess, f, func(f *drip.Faucet, p *page, warning string) {
		p.Form = rulesForm(f.Rules)
		h.showAntiFraud(w, r, sess, f, http.StatusOK, p, warning, nil)
	}))
}

// alertsData is the data of the low-balance alerts page.
type alertsData struct {
	Enabled       bool
	Coins         []thresholdField
	Notifications []record.Notification
}

// thresholdField is one coin's threshold input.
type thresholdField struct {
	Coin, Name, Value string
}

func (h *Handler) alertsPage(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	f, ok := h.ownedFaucet(w, r, sess)
	if !ok {
		return
	}
	h.showAlerts(w, r, sess, f, http.StatusOK, &page{}, nil, nil)
}

// showAlerts shows the alert's setting; typed, when not nil, is what the
// form held (enabled and threshold-<COIN>), shown again after a refusal.
func (h *Handler) showAlerts(w http.ResponseWriter, r *http.Request, sess *account.Session, f *drip.Faucet, status int, p *page, typed map[string]string, failed error) {
	coins, err := h.alertCoins(r, f)
	if err != nil {
		h.problem(w, r, sess, err)
		return
	}
	rec, err := h.read(r, f, h.d.Ops.LowBalanceNotification, given(operation.NoParams{}))
	if err != nil {
		h.problem(w, r, sess, err)
		return
	}
	d := &alertsData{Enabled: f.LowBalance.Enabled, Notifications: rec.(record.LowBalanceNotification).Notifications}
	for _, c := range coins {
		t := thresholdField{Coin: c, Name: "threshold-" + c}
		if units, ok := f.LowBalance.Thresholds[c]; ok {
			t.Value = drip.FormatCoinsFixed(units)
		}
		if typed != nil {
			t.Value = typed[t.Name]
		}
		d.Coins = append(d.Coins, t)
	}
	if typed != nil {
		d.Enabled = typed["enabled"] == "on"
	}
	h.showFaucet(w, r, sess, f, view{"alerts", "manage_alerts", "Low-balance alerts · " + f.Name}, status, p, d, "", failed)
}

// alertCoins are the coins a threshold may be set for on the page: the
// active ones, and any other the faucet has a threshold for.
func (h *Handler) alertCoins(r *http.Request, f *drip.Faucet) ([]string, error) {
	active, err := h.d.Coins.ListActive(r.Context())
	if err != nil {
		return nil, err
	}
	var coins []string
	for _, c := range active {
		coins = append(coins, c.Symbol)
	}
	for c := range f.LowBalance.Thresholds {
		if !slices.Contains(coins, c) {
			coins = append(coins, c)
		}
	}
	slices.Sort(coins[len(active):])
	return coins, nil
}

// saveAlerts sets the alert on or off and every coin's threshold, typed
// in coins; an empty threshold removes the coin's (D43).
func (h *Handler) saveAlerts(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	f, ok := h.ownedFaucet(w, r, sess)
	if !ok {
		return
	}
	coins, err := h.alertCoins(r, f)
	if err != nil {
		h.problem(w, r, sess, err)
		return
	}
	_ = r.ParseForm()
	typed := map[string]string{"enabled": r.PostForm.Get("enabled")}
	_, _, err = h.change(r, sess, f, h.d.Ops.ToggleLowBalanceNotification, decodeInto(func(p *operation.ToggleLowBalanceParams) error {
		on := typed["enabled"] == "on"
		p.Enabled, p.Thresholds = &on, map[string]*int64{}
		for _, c := range coins {
			name := "threshold-" + c
			typed[name] = strings.TrimSpace(r.PostForm.Get(name))
			units := int64(0)
			if typed[name] != "" {
				var err error
				if units, err = drip.ParseCoins(typed[name]); err != nil {
					return drip.Errorf(drip.CodeInvalid, "Invalid threshold for %s: %s", c, strings.TrimPrefix(drip.ErrorMessage(err), "Invalid amount: "))
				}
			}
			p.Thresholds[c] = &units
		}
		return nil
	}))
	if err != nil {
		p := &page{}
		h.showAlerts(w, r, sess, f, h.manageFailure(r, p, err), p, typed, err)
		return
	}
	h.done(w, r, f, "/alerts", "manage-alerts", "", nil)
}

// listingData is the data of the listing page: the latest request, and
// what listing costs in each coin the operator offers it in.
type listingData struct {
	Latest *record.Listing
	Offers []listingOffer
	Open   bool // a request is pending or approved: no new one
}

type listingOffer struct {
	Coin, Cost, Balance string
	Affordable          bool
}

func (h *Handler) listingPage(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	f, ok := h.ownedFaucet(w, r, sess)
	if !ok {
		return
	}
	h.showListing(w, r, sess, f, http.StatusOK, &page{}, nil)
}

func (h *Handler) showListing(w http.ResponseWriter, r *http.Request, sess *account.Session, f *drip.Faucet, status int, p *page, failed error) {
	costs, err := h.d.Listing.Costs(r.Context())
	if err != nil {
		h.problem(w, r, sess, err)
		return
	}
	coins := make([]string, 0, len(costs))
	for c, cost := range costs {
		if cost > 0 {
			coins = append(coins, c)
		}
	}
	slices.Sort(coins)
	d := &listingData{}
	for _, c := range coins {
		rec, err := h.read(r, f, h.d.Ops.ApprovalCost, given(operation.CoinParams{Coin: c}))
		if err != nil {
			h.problem(w, r, sess, err)
			return
		}
		ac := rec.(operation.ApprovalCost)
		d.Latest = ac.Listing
		d.Offers = append(d.Offers, listingOffer{Coin: c, Cost: drip.FormatCoinsFixed(ac.Cost), Balance: drip.FormatCoinsFixed(ac.Balance),
			Affordable: ac.Balance >= ac.Cost})
	}
	if d.Latest == nil {
		req, err := h.d.Listing.Status(r.Context(), f.ID)
		if err != nil {
			h.problem(w, r, sess, err)
			return
		}
		d.Latest = record.NewListing(req)
	}
	d.Open = d.Latest != nil && d.Latest.Status != string(drip.ListingRejected)
	h.showFaucet(w, r, sess, f, view{"listing", "manage_listing", "Listing · " + f.Name}, status, p, d, "", failed)
}

// requestListing pays the listing cost in the chosen coin from the
// faucet's balance and opens the request the operator decides (D44).
func (h *Handler) requestListing(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	f, ok := h.ownedFaucet(w, r, sess)
	if !ok {
		return
	}
	coin := r.PostFormValue("coin")
	_, _, err := h.change(r, sess, f, h.d.Ops.RequestApproval, given(operation.CoinParams{Coin: coin}))
	if err != nil {
		p := &page{Form: map[string]string{"coin": coin}}
		h.showListing(w, r, sess, f, h.manageFailure(r, p, err), p, err)
		return
	}
	h.done(w, r, f, "/listing", "manage-listing", "", nil)
}
