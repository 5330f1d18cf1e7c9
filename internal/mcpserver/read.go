package mcpserver

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/faucet"
	"github.com/dripfaucet/drip/internal/payout"
)

// The read tools (spec 4.3): what a read key may call. Each answers as the
// v2 read path of the same name does (spec 4.2).

type noArgs struct{}

// readTools are the read tools, in the order of spec 4.3.
func (h *Handler) readTools() []tool {
	return []tool{
		newTool(h, spec[noArgs, faucetRecord]{
			name: "get_faucet", title: "Faucet details",
			description: "Read the faucet's whole record: name, domain, URL, description, claim timer, selected currencies and " +
				"categories, owner status, IP whitelist, send limits, anti-fraud rules, low-balance alert, listing approval " +
				"and the balance of every coin it has held. Start here for a general question about the faucet.",
			annotations: readAnnotations("Faucet details"),
			run: func(ctx context.Context, c *payout.Caller, _ noArgs) (faucetRecord, string, error) {
				rec, err := h.faucetRecord(ctx, c.Faucet)
				return rec, "OK", err
			},
		}),
		newTool(h, spec[noArgs, balancesData]{
			name: "get_balances", title: "Balances",
			description: "Read the faucet's balance of every active coin, zero balances included. Amounts are in the coin's " +
				"smallest unit (balance) and in whole coins (balance_bitcoin).",
			annotations: readAnnotations("Balances"),
			run:         h.balances,
		}),
		newTool(h, spec[balanceArgs, balanceRecord]{
			name: "get_balance", title: "Balance of one coin",
			description: "Read the faucet's balance of one coin, in the coin's smallest unit (balance) and in whole coins " +
				"(balance_bitcoin). Without currency: the faucet's first selected coin, or BTC. Use get_currencies for the coins.",
			annotations: readAnnotations("Balance of one coin"),
			run:         h.balance,
		}),
		newTool(h, spec[payoutsArgs, payoutsData]{
			name: "get_payouts", title: "Recent payouts",
			description: "List the faucet's latest payouts, newest first: recipient as given, amount in smallest units, coin, " +
				"claimer IP, referral tag and time. count is 1 to 100 (default 10); currency filters to one coin. " +
				"For totals per day use get_daily_stats; per recipient, get_user_stats.",
			annotations: readAnnotations("Recent payouts"),
			refine: func(in *jsonschema.Schema) {
				in.Properties["count"].Minimum, in.Properties["count"].Maximum = new(1.0), new(100.0)
				in.Properties["count"].Default = json.RawMessage("10")
			},
			run: h.payouts,
		}),
		newTool(h, spec[noArgs, currenciesData]{
			name: "get_currencies", title: "Currencies and their limits",
			description: "List the coins the service pays in, each with its minimum payout, whether the faucet selected it, " +
				"and the owner's send limits that count it.",
			annotations: readAnnotations("Currencies and their limits"),
			run:         h.currencies,
		}),
		newTool(h, spec[checkAddressArgs, checkAddressData]{
			name: "check_address", title: "Check a destination",
			description: "Check that a destination (email, username, wallet address or payout_user_hash) is a registered, " +
				"payable user, and get their payout_user_hash. A wallet address needs the coin it is linked for " +
				"(currency; default the faucet's first selected coin, or BTC). An error result means it cannot be paid.",
			annotations: readAnnotations("Check a destination"),
			refine:      func(in *jsonschema.Schema) { in.Properties["address"].MinLength = new(1) },
			run:         h.checkAddress,
		}),
		newTool(h, spec[noArgs, dailyData]{
			name: "get_daily_stats", title: "Daily statistics",
			description: "Sum the faucet's payouts per UTC day and coin over the last 30 days (today included): payouts, " +
				"amount and distinct recipients. Days without payouts are left out; newest first.",
			annotations: readAnnotations("Daily statistics"),
			run:         h.dailyStats,
		}),
		newTool(h, spec[pageArgs, page[userStatRecord]]{
			name: "get_user_stats", title: "Payouts per recipient",
			description: "List what the faucet paid each recipient in one coin (payouts, amount, last payout), largest totals " +
				"first, 50 a page. Recipients are identified by payout_user_hash.",
			annotations: readAnnotations("Payouts per recipient"),
			refine:      refinePage,
			run:         h.userStats,
		}),
		newTool(h, spec[pageArgs, page[transactionRecord]]{
			name: "get_transactions", title: "Transactions",
			description: "List the faucet's ledger entries in one coin, newest first, 50 a page: deposits, payouts, listing " +
				"fees and refunds. amount is positive for money in, negative for money out.",
			annotations: readAnnotations("Transactions"),
			refine:      refinePage,
			run:         h.transactions,
		}),
		newTool(h, spec[noArgs, rateLimitsData]{
			name: "get_ratelimits", title: "Rate limits",
			description: "Read this key's request rate (requests a minute, burst, and how many it may still make now) and the " +
				"owner's send limits (payouts or amounts per faucet, recipient or claimer IP within a window).",
			annotations: readAnnotations("Rate limits"),
			run: func(_ context.Context, c *payout.Caller, _ noArgs) (rateLimitsData, string, error) {
				return h.rateLimitsData(c, c.Faucet), "OK", nil
			},
		}),
		newTool(h, spec[noArgs, lowBalanceData]{
			name: "get_low_balance_notification", title: "Low-balance alert",
			description: "Read the low-balance alert: whether it is on, each coin's threshold, and the latest alert emails " +
				"with their delivery state.",
			annotations: readAnnotations("Low-balance alert"),
			run: func(ctx context.Context, c *payout.Caller, _ noArgs) (lowBalanceData, string, error) {
				return h.lowBalanceData(ctx, c.Faucet)
			},
		}),
	}
}

func (h *Handler) faucetRecord(ctx context.Context, f *drip.Faucet) (faucetRecord, error) {
	balances, err := h.Faucets.Balances(ctx, f)
	if err != nil {
		return faucetRecord{}, err
	}
	listing, err := h.Listing.Status(ctx, f.ID)
	if err != nil {
		return faucetRecord{}, err
	}
	return newFaucet(f, balances, listing), nil
}

type balancesData struct {
	Balances []balanceRecord `json:"balances" jsonschema:"one per active coin"`
}

func (h *Handler) balances(ctx context.Context, c *payout.Caller, _ noArgs) (balancesData, string, error) {
	active, err := h.Coins.ListActive(ctx)
	if err != nil {
		return balancesData{}, "", err
	}
	held, err := h.Faucets.Balances(ctx, c.Faucet)
	if err != nil {
		return balancesData{}, "", err
	}
	data := balancesData{Balances: []balanceRecord{}}
	for _, coin := range active {
		var units int64
		for _, b := range held {
			if b.Coin == coin.Symbol {
				units = b.Amount
			}
		}
		data.Balances = append(data.Balances, newBalance(coin.Symbol, units))
	}
	return data, "OK", nil
}

type balanceArgs struct {
	Currency string `json:"currency,omitempty" jsonschema:"coin symbol, upper-case (BTC, DOGE...); default: the faucet's first selected coin, or BTC"`
}

func (h *Handler) balance(ctx context.Context, c *payout.Caller, in balanceArgs) (balanceRecord, string, error) {
	if in.Currency == "" {
		in.Currency = defaultCurrency(c.Faucet)
	}
	b, err := h.Payouts.Balance(ctx, c, in.Currency)
	if err != nil {
		return balanceRecord{}, "", err
	}
	return newBalance(in.Currency, b), "OK", nil
}

// defaultCurrency is the coin of a read that names none, as in v2: the
// faucet's first selected coin, or BTC when it selected none.
func defaultCurrency(f *drip.Faucet) string {
	if sel := f.Settings.Currencies; len(sel) > 0 {
		return sel[0]
	}
	return "BTC"
}

type currencyRecord struct {
	Currency             string        `json:"currency" jsonschema:"coin symbol"`
	Name                 string        `json:"name" jsonschema:"coin name"`
	MinimumPayout        int64         `json:"minimum_payout" jsonschema:"smallest payout the service makes in this coin, in smallest units"`
	MinimumPayoutBitcoin json.Number   `json:"minimum_payout_bitcoin" jsonschema:"the same in whole coins"`
	Selected             bool          `json:"selected" jsonschema:"whether the faucet's currencies_selected lists it"`
	RateLimits           []limitRecord `json:"ratelimits" jsonschema:"the owner's send limits that count this coin"`
}

type currenciesData struct {
	Currencies []currencyRecord `json:"currencies" jsonschema:"the active coins"`
}

func (h *Handler) currencies(ctx context.Context, c *payout.Caller, _ noArgs) (currenciesData, string, error) {
	active, err := h.Payouts.Currencies(ctx, c)
	if err != nil {
		return currenciesData{}, "", err
	}
	data := currenciesData{Currencies: []currencyRecord{}}
	for _, coin := range active {
		var limits []drip.Limit
		for _, l := range c.Faucet.Limits {
			if l.Coin == "" || l.Coin == coin.Symbol {
				limits = append(limits, l)
			}
		}
		data.Currencies = append(data.Currencies, currencyRecord{
			Currency: coin.Symbol, Name: coin.Name, MinimumPayout: coin.MinPayout,
			MinimumPayoutBitcoin: coins(coin.MinPayout),
			Selected:             slices.Contains(c.Faucet.Settings.Currencies, coin.Symbol),
			RateLimits:           newLimits(limits),
		})
	}
	return data, "OK", nil
}

type checkAddressArgs struct {
	Address  string `json:"address" jsonschema:"email, username, wallet address or payout_user_hash"`
	Currency string `json:"currency,omitempty" jsonschema:"coin a wallet address is linked for; default: the faucet's first selected coin, or BTC"`
}

type checkAddressData struct {
	Address        string `json:"address" jsonschema:"the destination as given"`
	Currency       string `json:"currency" jsonschema:"the coin checked"`
	PayoutUserHash string `json:"payout_user_hash" jsonschema:"the user's stable identifier, usable as a destination"`
}

func (h *Handler) checkAddress(ctx context.Context, c *payout.Caller, in checkAddressArgs) (checkAddressData, string, error) {
	if in.Currency == "" {
		in.Currency = defaultCurrency(c.Faucet)
	}
	u, err := h.Payouts.CheckAddress(ctx, c, in.Address, in.Currency)
	if err != nil {
		return checkAddressData{}, "", err
	}
	return checkAddressData{Address: in.Address, Currency: in.Currency, PayoutUserHash: u.PayoutUserHash},
		"The address belongs to a registered user.", nil
}

type payoutsArgs struct {
	Currency string `json:"currency,omitempty" jsonschema:"only payouts in this coin; default: every coin"`
	Count    *int   `json:"count,omitempty" jsonschema:"how many payouts, 1 to 100"`
}

type payoutRecord struct {
	PayoutID  int64  `json:"payout_id" jsonschema:"payout identifier"`
	To        string `json:"to" jsonschema:"recipient as the faucet gave it"`
	Amount    int64  `json:"amount" jsonschema:"amount in smallest units"`
	Currency  string `json:"currency" jsonschema:"coin symbol"`
	IPAddress string `json:"ip_address" jsonschema:"claimer IP the faucet reported, or empty"`
	Referral  string `json:"referral" jsonschema:"referral tag the faucet gave, or empty"`
	CreatedAt string `json:"created_at" jsonschema:"when it was paid (RFC 3339, UTC)"`
}

type payoutsData struct {
	Payouts []payoutRecord `json:"payouts" jsonschema:"newest first"`
}

func (h *Handler) payouts(ctx context.Context, c *payout.Caller, in payoutsArgs) (payoutsData, string, error) {
	count := 10
	if in.Count != nil {
		count = *in.Count // 1-100, as the input schema says
	}
	list, err := h.Payouts.Payouts(ctx, c, in.Currency, count)
	if err != nil {
		return payoutsData{}, "", err
	}
	data := payoutsData{Payouts: make([]payoutRecord, len(list))}
	for i, po := range list {
		data.Payouts[i] = payoutRecord{PayoutID: po.ID, To: po.To, Amount: po.Amount, Currency: po.Coin,
			IPAddress: po.IPAddress, Referral: po.Referral, CreatedAt: timestamp(po.CreatedAt)}
	}
	return data, "OK", nil
}

type dailyRecord struct {
	Date          string      `json:"date" jsonschema:"UTC day, YYYY-MM-DD"`
	Currency      string      `json:"currency" jsonschema:"coin symbol"`
	Payouts       int64       `json:"payouts" jsonschema:"number of payouts"`
	Amount        int64       `json:"amount" jsonschema:"amount paid, in smallest units"`
	AmountBitcoin json.Number `json:"amount_bitcoin" jsonschema:"the same in whole coins"`
	UniqueUsers   int64       `json:"unique_users" jsonschema:"distinct recipients"`
}

type dailyData struct {
	From string        `json:"from" jsonschema:"first day covered, YYYY-MM-DD"`
	To   string        `json:"to" jsonschema:"today (UTC), YYYY-MM-DD"`
	Days []dailyRecord `json:"days" jsonschema:"one per day and coin with payouts, newest first"`
}

const dateLayout = "2006-01-02"

func (h *Handler) dailyStats(ctx context.Context, c *payout.Caller, _ noArgs) (dailyData, string, error) {
	stats, err := h.Faucets.DailyStats(ctx, c.Faucet)
	if err != nil {
		return dailyData{}, "", err
	}
	today := h.Now().UTC()
	data := dailyData{From: today.AddDate(0, 0, -(faucet.StatsDays - 1)).Format(dateLayout), To: today.Format(dateLayout),
		Days: make([]dailyRecord, len(stats))}
	for i, s := range stats {
		data.Days[i] = dailyRecord{Date: s.Day.Format(dateLayout), Currency: s.Coin, Payouts: s.Payouts,
			Amount: s.Amount, AmountBitcoin: coins(s.Amount), UniqueUsers: s.Recipients}
	}
	return data, "OK", nil
}

type pageArgs struct {
	Coin string `json:"coin" jsonschema:"coin symbol, upper-case (BTC, DOGE...)"`
	Page *int   `json:"page,omitempty" jsonschema:"page number, from 1"`
}

func refinePage(in *jsonschema.Schema) {
	in.Properties["coin"].MinLength = new(1)
	in.Properties["page"].Minimum, in.Properties["page"].Default = new(1.0), json.RawMessage("1")
}

// readPage checks a paged call as v2 does: any coin the service knows (one
// disabled since keeps its history), a page from 1.
func (h *Handler) readPage(ctx context.Context, in pageArgs) (string, int, error) {
	all, err := h.Coins.List(ctx)
	if err != nil {
		return "", 0, err
	}
	if !drip.HasCoin(all, in.Coin) {
		return "", 0, drip.Errorf(drip.CodeInvalidCurrency, "Invalid coin: not a supported coin.")
	}
	n := 1
	if in.Page != nil {
		n = *in.Page
	}
	return in.Coin, n, nil
}

type userStatRecord struct {
	PayoutUserHash string      `json:"payout_user_hash" jsonschema:"the recipient"`
	Payouts        int64       `json:"payouts" jsonschema:"number of payouts"`
	Amount         int64       `json:"amount" jsonschema:"amount paid, in smallest units"`
	AmountBitcoin  json.Number `json:"amount_bitcoin" jsonschema:"the same in whole coins"`
	LastPayoutAt   string      `json:"last_payout_at" jsonschema:"the latest payout (RFC 3339, UTC)"`
}

func (h *Handler) userStats(ctx context.Context, c *payout.Caller, in pageArgs) (page[userStatRecord], string, error) {
	coin, n, err := h.readPage(ctx, in)
	if err != nil {
		return page[userStatRecord]{}, "", err
	}
	p, err := h.Faucets.UserStats(ctx, c.Faucet, coin, n)
	if err != nil {
		return page[userStatRecord]{}, "", err
	}
	data := page[userStatRecord]{Items: make([]userStatRecord, len(p.Items)), Page: p.Page, PerPage: faucet.PerPage, Total: p.Total}
	for i, s := range p.Items {
		data.Items[i] = userStatRecord{PayoutUserHash: s.PayoutUserHash, Payouts: s.Payouts, Amount: s.Amount,
			AmountBitcoin: coins(s.Amount), LastPayoutAt: timestamp(s.LastPayoutAt)}
	}
	return data, "OK", nil
}

type transactionRecord struct {
	ID            int64       `json:"id" jsonschema:"entry identifier"`
	Type          string      `json:"type" jsonschema:"deposit, payout, listing_fee or listing_refund"`
	Currency      string      `json:"currency" jsonschema:"coin symbol"`
	Amount        int64       `json:"amount" jsonschema:"smallest units: positive in, negative out"`
	AmountBitcoin json.Number `json:"amount_bitcoin" jsonschema:"the same in whole coins"`
	PayoutID      *int64      `json:"payout_id" jsonschema:"the payout of a payout entry; null for others"`
	CreatedAt     string      `json:"created_at" jsonschema:"when it was booked (RFC 3339, UTC)"`
}

func (h *Handler) transactions(ctx context.Context, c *payout.Caller, in pageArgs) (page[transactionRecord], string, error) {
	coin, n, err := h.readPage(ctx, in)
	if err != nil {
		return page[transactionRecord]{}, "", err
	}
	p, err := h.Faucets.Transactions(ctx, c.Faucet, coin, n)
	if err != nil {
		return page[transactionRecord]{}, "", err
	}
	data := page[transactionRecord]{Items: make([]transactionRecord, len(p.Items)), Page: p.Page, PerPage: faucet.PerPage, Total: p.Total}
	for i, t := range p.Items {
		r := transactionRecord{ID: t.ID, Type: t.Kind, Currency: t.Coin, Amount: t.Amount, AmountBitcoin: coins(t.Amount),
			CreatedAt: timestamp(t.CreatedAt)}
		if t.PayoutID != 0 {
			r.PayoutID = &t.PayoutID
		}
		data.Items[i] = r
	}
	return data, "OK", nil
}

type requestRate struct {
	PerMinute float64 `json:"per_minute" jsonschema:"requests a minute this key may make"`
	Burst     int     `json:"burst" jsonschema:"requests it may make at once"`
	Remaining float64 `json:"remaining" jsonschema:"requests it may make now"`
}

type rateLimitsData struct {
	RequestRate requestRate   `json:"request_rate" jsonschema:"this key's request rate; tool calls count"`
	RateLimits  []limitRecord `json:"ratelimits" jsonschema:"the owner's send limits"`
}

func (h *Handler) rateLimitsData(c *payout.Caller, f *drip.Faucet) rateLimitsData {
	return rateLimitsData{
		RequestRate: requestRate{PerMinute: h.Rate.PerMinute, Burst: h.Rate.Burst, Remaining: float64(int64(c.RateRemaining))},
		RateLimits:  newLimits(f.Limits),
	}
}

type notificationRecord struct {
	ID        int64   `json:"id" jsonschema:"notification identifier"`
	Currency  string  `json:"currency" jsonschema:"coin whose balance fell"`
	Threshold int64   `json:"threshold" jsonschema:"threshold crossed, in smallest units"`
	Balance   int64   `json:"balance" jsonschema:"balance after the payout, in smallest units"`
	CreatedAt string  `json:"created_at" jsonschema:"when the balance fell (RFC 3339, UTC)"`
	SentAt    *string `json:"sent_at" jsonschema:"when the email was delivered; null: not yet"`
	Channel   string  `json:"channel" jsonschema:"smtp or log once delivered; empty until then"`
	Attempts  int     `json:"attempts" jsonschema:"delivery attempts"`
	LastError string  `json:"last_error" jsonschema:"the last failed attempt's error, or empty"`
}

type lowBalanceData struct {
	Enabled       bool                 `json:"enabled" jsonschema:"whether the owner is emailed when a payout takes a coin's balance below its threshold"`
	Thresholds    map[string]int64     `json:"thresholds" jsonschema:"coin symbol -> threshold in smallest units"`
	Notifications []notificationRecord `json:"notifications" jsonschema:"the latest alert emails, newest first"`
}

func (h *Handler) lowBalanceData(ctx context.Context, f *drip.Faucet) (lowBalanceData, string, error) {
	list, err := h.Faucets.Notifications(ctx, f)
	if err != nil {
		return lowBalanceData{}, "", err
	}
	lb := newLowBalance(f.LowBalance)
	data := lowBalanceData{Enabled: lb.Enabled, Thresholds: lb.Thresholds, Notifications: make([]notificationRecord, len(list))}
	for i, n := range list {
		data.Notifications[i] = notificationRecord{ID: n.ID, Currency: n.Coin, Threshold: n.Threshold, Balance: n.Balance,
			CreatedAt: timestamp(n.CreatedAt), SentAt: optionalTimestamp(n.SentAt), Channel: n.Channel,
			Attempts: n.Attempts, LastError: n.LastError}
	}
	return data, "OK", nil
}
