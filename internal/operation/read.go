package operation

import (
	"cmp"
	"context"
	"encoding/json"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/faucet"
	"github.com/dripfaucet/drip/internal/payout"
	"github.com/dripfaucet/drip/internal/reply"
)

// The read-scope operations (spec 4.2): balances, coins, payouts, the
// faucet's record, statistics, the journal, limits and the low-balance
// alert.

// currencyOrDefault is the coin of a read, in upper case (D28); when it
// names none, the faucet's first selected coin, or the deployment's
// default coin when it selected none.
func (r *runner) currencyOrDefault(f *drip.Faucet, currency string) string {
	if currency != "" {
		return drip.Symbol(currency)
	}
	if sel := f.Settings.Currencies; len(sel) > 0 {
		return sel[0]
	}
	return r.Payouts.DefaultCoin()
}

// BalanceParams name the coin of /balance and get_balance.
type BalanceParams struct {
	Currency string `json:"currency,omitempty" jsonschema:"coin symbol, upper-case (BTC, DOGE...); default: the faucet's first selected coin, or BTC"`
}

func (BalanceParams) refine(s *jsonschema.Schema) { optionalCoinSchema(s.Properties["currency"]) }

// balance is one coin's balance.
func (r *runner) balance(ctx context.Context, c *payout.Caller, p BalanceParams) (reply.Balance, string, error) {
	p.Currency = r.currencyOrDefault(c.Faucet, p.Currency)
	b, err := r.Payouts.Balance(ctx, c, p.Currency)
	if err != nil {
		return reply.Balance{}, "", err
	}
	return reply.NewBalance(p.Currency, b), ok, nil
}

// balances lists every active coin's balance, zero included.
func (r *runner) balances(ctx context.Context, c *payout.Caller, _ NoParams) (reply.Balances, string, error) {
	active, err := r.Payouts.Currencies(ctx, c)
	if err != nil {
		return reply.Balances{}, "", err
	}
	held, err := r.Faucets.Balances(ctx, c.Faucet)
	if err != nil {
		return reply.Balances{}, "", err
	}
	return reply.NewBalances(active, held), ok, nil
}

// currencies lists the active coins with their limits: the service's
// minimum payout and the faucet owner's send limits that count the coin.
func (r *runner) currencies(ctx context.Context, c *payout.Caller, _ NoParams) (reply.Currencies, string, error) {
	active, err := r.Payouts.Currencies(ctx, c)
	if err != nil {
		return reply.Currencies{}, "", err
	}
	return reply.NewCurrencies(active, c.Faucet), ok, nil
}

// CheckAddressParams are the destination /check-address and check_address
// verify.
type CheckAddressParams struct {
	Address  string `json:"address" jsonschema:"email, username, wallet address or payout_user_hash"`
	Currency string `json:"currency,omitempty" jsonschema:"coin a wallet address must be linked for; absent: any coin, and the answer says which"`
}

func (p CheckAddressParams) validate() error {
	if p.Address == "" {
		return drip.Errorf(drip.CodeInvalid, "Missing address.").WithV1Status(456) // v1: not payable
	}
	return nil
}

func (CheckAddressParams) refine(s *jsonschema.Schema) {
	s.Properties["address"].MinLength = new(1)
	textSchema(s.Properties["address"])
	optionalCoinSchema(s.Properties["currency"])
}

// checkAddress verifies a destination. A wallet address needs the coin it
// is linked for; a payout_user_hash, email or username resolves without.
func (r *runner) checkAddress(ctx context.Context, c *payout.Caller, p CheckAddressParams) (reply.AddressCheck, string, error) {
	var u *drip.User
	var err error
	if p.Currency != "" {
		p.Currency = drip.Symbol(p.Currency)
		u, err = r.Payouts.CheckAddress(ctx, c, p.Address, p.Currency)
	} else {
		// Any kind of destination, a wallet address in whichever coin it
		// is linked for; the others are answered with the faucet's coin.
		var linked string
		u, linked, err = r.Payouts.CheckAddressAnyCoin(ctx, c, p.Address)
		p.Currency = cmp.Or(linked, r.currencyOrDefault(c.Faucet, ""))
	}
	if err != nil {
		return reply.AddressCheck{}, "", err
	}
	return reply.AddressCheck{Address: p.Address, Currency: p.Currency, PayoutUserHash: u.PayoutUserHash},
		"The address belongs to a registered user.", nil
}

// PayoutsParams filter and count the payouts of /payouts and get_payouts.
type PayoutsParams struct {
	Currency string `json:"currency,omitempty" jsonschema:"only payouts in this coin; default: every coin"`
	Count    *int   `json:"count,omitempty" jsonschema:"how many payouts, 1 to 100"`
}

// defaultCount and maxCount bound a list of payouts (spec 8). v1 clamps a
// count outside them (D27); v2 and the tools refuse it.
const defaultCount, maxCount = 10, 100

func (p PayoutsParams) validate() error {
	if p.Count != nil && (*p.Count < 1 || *p.Count > maxCount) {
		return drip.Errorf(drip.CodeInvalid, "Invalid count: 1 to 100.")
	}
	return nil
}

func (PayoutsParams) refine(s *jsonschema.Schema) {
	optionalCoinSchema(s.Properties["currency"])
	count := s.Properties["count"]
	count.Minimum, count.Maximum, count.Default = new(1.0), new(float64(maxCount)), json.RawMessage("10")
}

// payouts lists recent payouts, newest first.
func (r *runner) payouts(ctx context.Context, c *payout.Caller, p PayoutsParams) (reply.Payouts, string, error) {
	count := defaultCount
	if p.Count != nil {
		count = *p.Count
	}
	list, err := r.Payouts.Payouts(ctx, c, p.Currency, count)
	if err != nil {
		return reply.Payouts{}, "", err
	}
	return reply.NewPayouts(list), ok, nil
}

// readFaucet reads what f's record shows besides f itself, its balances
// and its latest listing request, and makes the record.
func (r *runner) readFaucet(ctx context.Context, f *drip.Faucet) (reply.Faucet, error) {
	balances, err := r.Faucets.Balances(ctx, f)
	if err != nil {
		return reply.Faucet{}, err
	}
	req, err := r.Listing.Status(ctx, f.ID)
	if err != nil {
		return reply.Faucet{}, err
	}
	return reply.NewFaucet(f, balances, req), nil
}

// faucet is the faucet's record.
func (r *runner) faucet(ctx context.Context, c *payout.Caller, _ NoParams) (reply.Faucet, string, error) {
	rec, err := r.readFaucet(ctx, c.Faucet)
	return rec, ok, err
}

// dailyStats sums the last 30 days' payouts per day and coin.
func (r *runner) dailyStats(ctx context.Context, c *payout.Caller, _ NoParams) (reply.Daily, string, error) {
	stats, err := r.Faucets.DailyStats(ctx, c.Faucet)
	if err != nil {
		return reply.Daily{}, "", err
	}
	return reply.NewDaily(stats, r.Now()), ok, nil
}

// PageParams choose the coin and page of a paged read (D37).
type PageParams struct {
	Coin string `json:"coin" jsonschema:"coin symbol, upper-case (BTC, DOGE...)"`
	Page *int   `json:"page,omitempty" jsonschema:"page number, from 1"`
}

func (p PageParams) validate() error {
	if p.Coin == "" {
		return drip.Errorf(drip.CodeInvalid, "Missing coin.").WithV1Status(410) // v1: no currency
	}
	return nil
}

func (PageParams) refine(s *jsonschema.Schema) {
	coinSchema(s.Properties["coin"])
	page := s.Properties["page"]
	page.Minimum, page.Maximum, page.Default = new(1.0), new(float64(faucet.MaxPage)), json.RawMessage("1")
}

// number is the page asked for, 1 when none.
func (p PageParams) number() int {
	if p.Page == nil {
		return 1
	}
	return *p.Page
}

// userStats is one page of what each recipient was paid in a coin, the
// largest totals first.
func (r *runner) userStats(ctx context.Context, c *payout.Caller, p PageParams) (reply.Page[reply.UserStat], string, error) {
	page, err := r.Faucets.UserStats(ctx, c.Faucet, p.Coin, p.number())
	if err != nil {
		return reply.Page[reply.UserStat]{}, "", err
	}
	return reply.NewUserStats(page), ok, nil
}

// transactions is one page of the faucet's journal in a coin, newest first.
func (r *runner) transactions(ctx context.Context, c *payout.Caller, p PageParams) (reply.Page[reply.Transaction], string, error) {
	page, err := r.Faucets.Transactions(ctx, c.Faucet, p.Coin, p.number())
	if err != nil {
		return reply.Page[reply.Transaction]{}, "", err
	}
	return reply.NewTransactions(page), ok, nil
}

// rateLimits reads the key's request rate and the owner's send limits.
func (r *runner) rateLimits(_ context.Context, c *payout.Caller, _ NoParams) (reply.RateLimits, string, error) {
	return reply.NewRateLimits(r.Rate, c.RateRemaining, c.Faucet.Limits), ok, nil
}

// lowBalanceNotification reads the alert's setting and its latest emails
// (D43).
func (r *runner) lowBalanceNotification(ctx context.Context, c *payout.Caller, _ NoParams) (reply.LowBalanceNotification, string, error) {
	rec, err := r.lowBalanceRecord(ctx, c.Faucet)
	return rec, ok, err
}

func (r *runner) lowBalanceRecord(ctx context.Context, f *drip.Faucet) (reply.LowBalanceNotification, error) {
	list, err := r.Faucets.Notifications(ctx, f)
	if err != nil {
		return reply.LowBalanceNotification{}, err
	}
	return reply.NewLowBalanceNotification(f.LowBalance, list), nil
}
