package apiv2

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/faucet"
	"github.com/dripfaucet/drip/internal/payout"
)

// The read-scope operations (spec 4.2). Each also takes GET (D33).

type currencyParams struct {
	Currency string `json:"currency"`
}

// balance is one coin's balance. Without a currency it is the faucet's
// first selected coin, or BTC when it selected none.
func (h *Handler) balance(ctx context.Context, c *payout.Caller, in *input) (any, string, error) {
	var p currencyParams
	if err := in.decode(&p); err != nil {
		return nil, "", err
	}
	if p.Currency == "" {
		p.Currency = defaultCurrency(c.Faucet)
	}
	b, err := h.Payouts.Balance(ctx, c, p.Currency)
	if err != nil {
		return nil, "", err
	}
	return newBalance(p.Currency, b), "OK", nil
}

// defaultCurrency is the coin of a read that names none: the faucet's
// first selected coin, or BTC when it selected none.
func defaultCurrency(f *drip.Faucet) string {
	if sel := f.Settings.Currencies; len(sel) > 0 {
		return sel[0]
	}
	return "BTC"
}

type balancesData struct {
	Balances []balanceRecord `json:"balances"`
}

// balances lists every active coin's balance, zero included.
func (h *Handler) balances(ctx context.Context, c *payout.Caller, in *input) (any, string, error) {
	if err := in.decode(&struct{}{}); err != nil {
		return nil, "", err
	}
	active, err := h.Coins.ListActive(ctx)
	if err != nil {
		return nil, "", err
	}
	held, err := h.Faucets.Balances(ctx, c.Faucet)
	if err != nil {
		return nil, "", err
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

type currencyRecord struct {
	Currency             string        `json:"currency"`
	Name                 string        `json:"name"`
	MinimumPayout        int64         `json:"minimum_payout"`
	MinimumPayoutBitcoin json.Number   `json:"minimum_payout_bitcoin"`
	Selected             bool          `json:"selected"`   // in the faucet's currencies_selected
	RateLimits           []limitRecord `json:"ratelimits"` // the owner's send limits that apply to this coin
}

type currenciesData struct {
	Currencies []currencyRecord `json:"currencies"`
}

// currencies lists the active coins with their limits: the service's
// minimum payout and the faucet owner's send limits that count the coin.
func (h *Handler) currencies(ctx context.Context, c *payout.Caller, in *input) (any, string, error) {
	if err := in.decode(&struct{}{}); err != nil {
		return nil, "", err
	}
	active, err := h.Payouts.Currencies(ctx, c)
	if err != nil {
		return nil, "", err
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

type checkAddressParams struct {
	Address  string `json:"address"`
	Currency string `json:"currency"`
}

type checkAddressData struct {
	Address        string `json:"address"`
	Currency       string `json:"currency"`
	PayoutUserHash string `json:"payout_user_hash"`
}

// checkAddress verifies a destination. A wallet address needs the coin it
// is linked for; a payout_user_hash, email or username resolves without.
func (h *Handler) checkAddress(ctx context.Context, c *payout.Caller, in *input) (any, string, error) {
	var p checkAddressParams
	if err := in.decode(&p); err != nil {
		return nil, "", err
	}
	if p.Address == "" {
		return nil, "", drip.Errorf(drip.CodeInvalid, "Missing address.")
	}
	if p.Currency == "" {
		p.Currency = defaultCurrency(c.Faucet)
	}
	u, err := h.Payouts.CheckAddress(ctx, c, p.Address, p.Currency)
	if err != nil {
		return nil, "", err
	}
	return checkAddressData{Address: p.Address, Currency: p.Currency, PayoutUserHash: u.PayoutUserHash},
		"The address belongs to a registered user.", nil
}

type payoutsParams struct {
	Currency string `json:"currency"`
	Count    *int   `json:"count"`
}

type payoutRecord struct {
	PayoutID  int64  `json:"payout_id"`
	To        string `json:"to"`
	Amount    int64  `json:"amount"`
	Currency  string `json:"currency"`
	IPAddress string `json:"ip_address"`
	Referral  string `json:"referral"`
	CreatedAt string `json:"created_at"`
}

type payoutsData struct {
	Payouts []payoutRecord `json:"payouts"`
}

// payouts lists recent payouts, newest first; count is 1-100, default 10.
func (h *Handler) payouts(ctx context.Context, c *payout.Caller, in *input) (any, string, error) {
	var p payoutsParams
	if err := in.decode(&p); err != nil {
		return nil, "", err
	}
	count := 10
	if p.Count != nil {
		if *p.Count < 1 || *p.Count > 100 {
			return nil, "", drip.Errorf(drip.CodeInvalid, "Invalid count: 1 to 100.")
		}
		count = *p.Count
	}
	list, err := h.Payouts.Payouts(ctx, c, p.Currency, count)
	if err != nil {
		return nil, "", err
	}
	data := payoutsData{Payouts: make([]payoutRecord, len(list))}
	for i, po := range list {
		data.Payouts[i] = payoutRecord{PayoutID: po.ID, To: po.To, Amount: po.Amount, Currency: po.Coin,
			IPAddress: po.IPAddress, Referral: po.Referral, CreatedAt: timestamp(po.CreatedAt)}
	}
	return data, "OK", nil
}

// faucet is the faucet's record.
func (h *Handler) faucet(ctx context.Context, c *payout.Caller, in *input) (any, string, error) {
	if err := in.decode(&struct{}{}); err != nil {
		return nil, "", err
	}
	rec, err := h.faucetRecord(ctx, c.Faucet)
	return rec, "OK", err
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

type dailyRecord struct {
	Date          string      `json:"date"` // YYYY-MM-DD, UTC
	Currency      string      `json:"currency"`
	Payouts       int64       `json:"payouts"`
	Amount        int64       `json:"amount"`
	AmountBitcoin json.Number `json:"amount_bitcoin"`
	UniqueUsers   int64       `json:"unique_users"`
}

type dailyData struct {
	From string        `json:"from"` // first day covered, YYYY-MM-DD
	To   string        `json:"to"`   // today, YYYY-MM-DD
	Days []dailyRecord `json:"days"` // days with payouts, newest first
}

// statsDaily sums the last 30 days' payouts per day and coin.
func (h *Handler) statsDaily(ctx context.Context, c *payout.Caller, in *input) (any, string, error) {
	if err := in.decode(&struct{}{}); err != nil {
		return nil, "", err
	}
	stats, err := h.Faucets.DailyStats(ctx, c.Faucet)
	if err != nil {
		return nil, "", err
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

const dateLayout = "2006-01-02"

type pageParams struct {
	Coin string `json:"coin"`
	Page *int   `json:"page"`
}

// readPage checks a paged request: a known coin, a page from 1 (default 1).
func (h *Handler) readPage(ctx context.Context, in *input) (string, int, error) {
	var p pageParams
	if err := in.decode(&p); err != nil {
		return "", 0, err
	}
	if p.Coin == "" {
		return "", 0, drip.Errorf(drip.CodeInvalid, "Missing coin.")
	}
	// A coin disabled since keeps its history: any known coin is accepted.
	all, err := h.Coins.List(ctx)
	if err != nil {
		return "", 0, err
	}
	if !slices.ContainsFunc(all, func(c drip.Coin) bool { return c.Symbol == p.Coin }) {
		return "", 0, drip.Errorf(drip.CodeInvalidCurrency, "Invalid coin: not a supported coin.")
	}
	n := 1
	if p.Page != nil {
		n = *p.Page
	}
	return p.Coin, n, nil
}

type userStatRecord struct {
	PayoutUserHash string      `json:"payout_user_hash"`
	Payouts        int64       `json:"payouts"`
	Amount         int64       `json:"amount"`
	AmountBitcoin  json.Number `json:"amount_bitcoin"`
	LastPayoutAt   string      `json:"last_payout_at"`
}

// statsUsers is one page of what each recipient was paid in a coin, the
// largest totals first.
func (h *Handler) statsUsers(ctx context.Context, c *payout.Caller, in *input) (any, string, error) {
	coin, n, err := h.readPage(ctx, in)
	if err != nil {
		return nil, "", err
	}
	p, err := h.Faucets.UserStats(ctx, c.Faucet, coin, n)
	if err != nil {
		return nil, "", err
	}
	data := page[userStatRecord]{Items: make([]userStatRecord, len(p.Items)), Page: p.Page, PerPage: faucet.PerPage, Total: p.Total}
	for i, s := range p.Items {
		data.Items[i] = userStatRecord{PayoutUserHash: s.PayoutUserHash, Payouts: s.Payouts, Amount: s.Amount,
			AmountBitcoin: coins(s.Amount), LastPayoutAt: timestamp(s.LastPayoutAt)}
	}
	return data, "OK", nil
}

type transactionRecord struct {
	ID            int64       `json:"id"`
	Type          string      `json:"type"`
	Currency      string      `json:"currency"`
	Amount        int64       `json:"amount"` // positive in, negative out
	AmountBitcoin json.Number `json:"amount_bitcoin"`
	PayoutID      *int64      `json:"payout_id"`
	CreatedAt     string      `json:"created_at"`
}

// transactions is one page of the faucet's journal in a coin, newest first.
func (h *Handler) transactions(ctx context.Context, c *payout.Caller, in *input) (any, string, error) {
	coin, n, err := h.readPage(ctx, in)
	if err != nil {
		return nil, "", err
	}
	p, err := h.Faucets.Transactions(ctx, c.Faucet, coin, n)
	if err != nil {
		return nil, "", err
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
	PerMinute float64 `json:"per_minute"`
	Burst     int     `json:"burst"`
	Remaining float64 `json:"remaining"`
}

type rateLimitsData struct {
	RequestRate requestRate   `json:"request_rate"` // this key's request rate (D40)
	RateLimits  []limitRecord `json:"ratelimits"`   // the owner's send limits (D41)
}

// rateLimits reads the key's request rate and the owner's send limits.
func (h *Handler) rateLimits(ctx context.Context, c *payout.Caller, in *input) (any, string, error) {
	if err := in.decode(&struct{}{}); err != nil {
		return nil, "", err
	}
	return h.rateLimitsData(c, c.Faucet), "OK", nil
}

func (h *Handler) rateLimitsData(c *payout.Caller, f *drip.Faucet) rateLimitsData {
	return rateLimitsData{
		RequestRate: requestRate{PerMinute: h.Rate.PerMinute, Burst: h.Rate.Burst, Remaining: float64(int64(c.RateRemaining))},
		RateLimits:  newLimits(f.Limits),
	}
}

type notificationRecord struct {
	ID        int64   `json:"id"`
	Currency  string  `json:"currency"`
	Threshold int64   `json:"threshold"`
	Balance   int64   `json:"balance"`
	CreatedAt string  `json:"created_at"`
	SentAt    *string `json:"sent_at"`
	Channel   string  `json:"channel"` // "smtp", "log", or "" until delivered
	Attempts  int     `json:"attempts"`
	LastError string  `json:"last_error"`
}

type lowBalanceData struct {
	lowBalanceRecord
	Notifications []notificationRecord `json:"notifications"` // the latest emails, newest first
}

// lowBalance reads the alert's setting and its latest emails (D43).
func (h *Handler) lowBalance(ctx context.Context, c *payout.Caller, in *input) (any, string, error) {
	if err := in.decode(&struct{}{}); err != nil {
		return nil, "", err
	}
	return h.lowBalanceData(ctx, c.Faucet)
}

func (h *Handler) lowBalanceData(ctx context.Context, f *drip.Faucet) (any, string, error) {
	list, err := h.Faucets.Notifications(ctx, f)
	if err != nil {
		return nil, "", err
	}
	data := lowBalanceData{lowBalanceRecord: newLowBalance(f.LowBalance), Notifications: make([]notificationRecord, len(list))}
	for i, n := range list {
		data.Notifications[i] = notificationRecord{ID: n.ID, Currency: n.Coin, Threshold: n.Threshold, Balance: n.Balance,
			CreatedAt: timestamp(n.CreatedAt), SentAt: optionalTimestamp(n.SentAt), Channel: n.Channel,
			Attempts: n.Attempts, LastError: n.LastError}
	}
	return data, "OK", nil
}

type auditParams struct {
	Count *int `json:"count"`
}

type auditRecord struct {
	ID        int64           `json:"id"`
	KeyID     int64           `json:"key_id"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	Result    string          `json:"result"`
	IsError   bool            `json:"is_error"`
	CreatedAt string          `json:"created_at"`
}

type auditData struct {
	Entries []auditRecord `json:"entries"`
}

// auditLog lists the manage calls made through the tool server, newest
// first; count is 1-200, default 50.
func (h *Handler) auditLog(ctx context.Context, c *payout.Caller, in *input) (any, string, error) {
	var p auditParams
	if err := in.decode(&p); err != nil {
		return nil, "", err
	}
	count := 50
	if p.Count != nil {
		if *p.Count < 1 || *p.Count > 200 {
			return nil, "", drip.Errorf(drip.CodeInvalid, "Invalid count: 1 to 200.")
		}
		count = *p.Count
	}
	list, err := h.Audit.List(ctx, c.Faucet.ID, count)
	if err != nil {
		return nil, "", err
	}
	data := auditData{Entries: make([]auditRecord, len(list))}
	for i, e := range list {
		data.Entries[i] = auditRecord{ID: e.ID, KeyID: e.KeyID, Tool: e.Tool, Arguments: e.Arguments,
			Result: e.Result, IsError: e.IsError, CreatedAt: timestamp(e.CreatedAt)}
	}
	return data, "OK", nil
}
