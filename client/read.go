package client

import (
	"context"
	"encoding/json"
)

// The read-scope paths of v2 (spec 4.2). Each is retried as the client's
// RetryPolicy says: a read changes nothing.

// Balance is one coin's balance.
type Balance struct {
	Currency       string      `json:"currency"`
	Balance        int64       `json:"balance"`         // smallest units
	BalanceBitcoin json.Number `json:"balance_bitcoin"` // the same in whole coins
}

// Balance reads the faucet's balance of currency; "" reads the faucet's
// first selected coin, or the server's default coin.
func (c *Client) Balance(ctx context.Context, currency string) (*Balance, error) {
	return read[Balance](ctx, c, "/balance", struct {
		Currency string `json:"currency,omitempty"`
	}{currency})
}

// Balances are the faucet's balances of every active coin, zero included.
type Balances struct {
	Balances []Balance `json:"balances"`
}

// Balances reads the faucet's balance of every active coin.
func (c *Client) Balances(ctx context.Context) (*Balances, error) {
	return read[Balances](ctx, c, "/balances", nil)
}

// Limit is one of the owner's send limits as drip reports it (D41).
type Limit struct {
	Currency      *string `json:"currency"` // nil: every coin
	Per           string  `json:"per"`      // faucet, recipient or ip
	WindowSeconds int64   `json:"window_seconds"`
	MaxCount      *int64  `json:"max_count"`  // nil: not limited by count
	MaxAmount     *int64  `json:"max_amount"` // nil: not limited by amount
}

// Currency is a coin drip pays in, and the owner's limits that count it.
type Currency struct {
	Currency             string      `json:"currency"`
	Name                 string      `json:"name"`
	MinimumPayout        int64       `json:"minimum_payout"`
	MinimumPayoutBitcoin json.Number `json:"minimum_payout_bitcoin"`
	Selected             bool        `json:"selected"` // in the faucet's currencies_selected
	RateLimits           []Limit     `json:"ratelimits"`
}

// Currencies are the active coins.
type Currencies struct {
	Currencies []Currency `json:"currencies"`
}

// Currencies lists the active coins.
func (c *Client) Currencies(ctx context.Context) (*Currencies, error) {
	return read[Currencies](ctx, c, "/currencies", nil)
}

// AddressCheck is a destination found payable.
type AddressCheck struct {
	Address        string `json:"address"`
	Currency       string `json:"currency"` // the coin checked
	PayoutUserHash string `json:"payout_user_hash"`
}

// CheckAddress verifies that address (an email, username, wallet address
// or payout_user_hash) is a payable user; currency may be "" (any coin,
// and the reply says which). An unknown address is an *Error with Code
// CodeRecipientNotPayable.
func (c *Client) CheckAddress(ctx context.Context, address, currency string) (*AddressCheck, error) {
	return read[AddressCheck](ctx, c, "/check-address", struct {
		Address  string `json:"address"`
		Currency string `json:"currency,omitempty"`
	}{address, currency})
}

// Payout is one payout the faucet made.
type Payout struct {
	PayoutID  int64  `json:"payout_id"`
	To        string `json:"to"`
	Amount    int64  `json:"amount"`
	Currency  string `json:"currency"`
	IPAddress string `json:"ip_address"`
	Referral  string `json:"referral"`
	CreatedAt string `json:"created_at"` // RFC 3339, UTC
}

// Payouts are the faucet's latest payouts, newest first.
type Payouts struct {
	Payouts []Payout `json:"payouts"`
}

// PayoutsQuery filters a read of payouts.
type PayoutsQuery struct {
	Currency string `json:"currency,omitempty"` // "": every coin
	Count    int    `json:"count,omitempty"`    // 1 to 100; 0: the server's default, 10
}

// Payouts lists the faucet's latest payouts.
func (c *Client) Payouts(ctx context.Context, q PayoutsQuery) (*Payouts, error) {
	return read[Payouts](ctx, c, "/payouts", q)
}

// Listing is a listing approval request (D44).
type Listing struct {
	RequestID int64   `json:"request_id"`
	Currency  string  `json:"currency"`
	Amount    int64   `json:"amount"`
	Status    string  `json:"status"` // pending, approved or rejected
	CreatedAt string  `json:"created_at"`
	DecidedAt *string `json:"decided_at"` // nil while pending
}

// AntiFraudRules are the owner's anti-fraud rules (D42).
type AntiFraudRules struct {
	AntiFraud    bool     `json:"anti_fraud"` // rank checks on; the blacklist applies either way
	TrustRank    int      `json:"trust_rank"`
	NegativeRank int      `json:"negative_rank"`
	Whitelist    []string `json:"whitelist"`
	Blacklist    []string `json:"blacklist"`
}

// LowBalance is the low-balance alert's setting (D43).
type LowBalance struct {
	Enabled    bool             `json:"enabled"`
	Thresholds map[string]int64 `json:"thresholds"` // coin -> smallest units
}

// Faucet is the faucet's record with every setting its owner manages.
type Faucet struct {
	ID                 int64          `json:"id"`
	Name               string         `json:"faucet_name"`
	Domain             string         `json:"faucet_domain"`
	URL                string         `json:"faucet_url"`
	Description        string         `json:"faucet_description"`
	TimerMinutes       int            `json:"timer_minutes"`
	CurrenciesSelected []string       `json:"currencies_selected"`
	CategoriesSelected []string       `json:"categories_selected"`
	OwnerStatus        string         `json:"owner_status"` // active or suspended
	CreatedAt          string         `json:"created_at"`
	IPWhitelist        []string       `json:"ip_whitelist"`
	RateLimits         []Limit        `json:"ratelimits"`
	AntiFraud          AntiFraudRules `json:"anti_fraud"`
	LowBalance         LowBalance     `json:"low_balance_notification"`
	Listing            *Listing       `json:"listing"` // nil: never requested
	Balances           []Balance      `json:"balances"`
}

// Faucet reads the faucet's record.
func (c *Client) Faucet(ctx context.Context) (*Faucet, error) {
	return read[Faucet](ctx, c, "/faucet", nil)
}

// Day is the payouts of one UTC day in one coin.
type Day struct {
	Date          string      `json:"date"` // YYYY-MM-DD
	Currency      string      `json:"currency"`
	Payouts       int64       `json:"payouts"`
	Amount        int64       `json:"amount"`
	AmountBitcoin json.Number `json:"amount_bitcoin"`
	UniqueUsers   int64       `json:"unique_users"`
}

// DailyStats are the payouts per day and coin of the last 30 days.
type DailyStats struct {
	From string `json:"from"`
	To   string `json:"to"`
	Days []Day  `json:"days"` // newest first
}

// DailyStats reads the payouts per day and coin.
func (c *Client) DailyStats(ctx context.Context) (*DailyStats, error) {
	return read[DailyStats](ctx, c, "/stats/daily", nil)
}

// Page is one page of a list (D37).
type Page[T any] struct {
	Items   []T   `json:"items"`
	Page    int   `json:"page"`
	PerPage int   `json:"per_page"`
	Total   int64 `json:"total"` // items in all pages
}

// pageQuery chooses a paged read's coin and page.
type pageQuery struct {
	Coin string `json:"coin"`
	Page int    `json:"page,omitempty"`
}

// UserStat is what the faucet paid one recipient in a coin.
type UserStat struct {
	PayoutUserHash string      `json:"payout_user_hash"`
	Payouts        int64       `json:"payouts"`
	Amount         int64       `json:"amount"`
	AmountBitcoin  json.Number `json:"amount_bitcoin"`
	LastPayoutAt   string      `json:"last_payout_at"`
}

// UserStats reads page (from 1; 0 is 1) of what each recipient was paid
// in coin, the largest totals first.
func (c *Client) UserStats(ctx context.Context, coin string, page int) (*Page[UserStat], error) {
	return read[Page[UserStat]](ctx, c, "/stats/users", pageQuery{coin, page})
}

// Transaction is one entry of the faucet's journal.
type Transaction struct {
	ID            int64       `json:"id"`
	Type          string      `json:"type"` // deposit, payout, listing_fee or listing_refund
	Currency      string      `json:"currency"`
	Amount        int64       `json:"amount"` // positive in, negative out
	AmountBitcoin json.Number `json:"amount_bitcoin"`
	PayoutID      *int64      `json:"payout_id"` // the payout of a payout entry
	CreatedAt     string      `json:"created_at"`
}

// Transactions reads page (from 1; 0 is 1) of the faucet's journal in
// coin, newest first.
func (c *Client) Transactions(ctx context.Context, coin string, page int) (*Page[Transaction], error) {
	return read[Page[Transaction]](ctx, c, "/transactions", pageQuery{coin, page})
}

// RequestRate is the key's request rate (D40).
type RequestRate struct {
	PerMinute float64 `json:"per_minute"`
	Burst     int     `json:"burst"`
	Remaining float64 `json:"remaining"`
}

// RateLimits are the key's request rate and the owner's send limits.
type RateLimits struct {
	RequestRate RequestRate `json:"request_rate"`
	RateLimits  []Limit     `json:"ratelimits"`
}

// RateLimits reads the key's request rate and the owner's send limits.
func (c *Client) RateLimits(ctx context.Context) (*RateLimits, error) {
	return read[RateLimits](ctx, c, "/ratelimits", nil)
}

// Notification is one low-balance alert email and its delivery.
type Notification struct {
	ID        int64   `json:"id"`
	Currency  string  `json:"currency"`
	Threshold int64   `json:"threshold"`
	Balance   int64   `json:"balance"`
	CreatedAt string  `json:"created_at"`
	SentAt    *string `json:"sent_at"` // nil: not delivered yet
	Channel   string  `json:"channel"`
	Attempts  int     `json:"attempts"`
	LastError string  `json:"last_error"`
}

// LowBalanceNotification is the low-balance alert's setting and its
// latest emails.
type LowBalanceNotification struct {
	LowBalance
	Notifications []Notification `json:"notifications"` // newest first
}

// LowBalanceNotification reads the low-balance alert.
func (c *Client) LowBalanceNotification(ctx context.Context) (*LowBalanceNotification, error) {
	return read[LowBalanceNotification](ctx, c, "/low-balance-notification", nil)
}

// AuditEntry is one change to the faucet: a manage call made through the
// tool server, or a change made on the faucet's console pages.
type AuditEntry struct {
	ID        int64           `json:"id"`
	Via       string          `json:"via"`    // "tool_server" or "console"
	By        string          `json:"by"`     // the key's prefix, or the user's name on the console
	KeyID     int64           `json:"key_id"` // 0 for a change made on the console
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	Result    string          `json:"result"`
	IsError   bool            `json:"is_error"`
	CreatedAt string          `json:"created_at"`
}

// AuditLog is the latest entries of the audit log, newest first.
type AuditLog struct {
	Entries []AuditEntry `json:"entries"`
}

// Audit reads the latest count (1 to 200; 0: the server's default, 50)
// manage calls made through the tool server.
func (c *Client) Audit(ctx context.Context, count int) (*AuditLog, error) {
	return read[AuditLog](ctx, c, "/audit", struct {
		Count int `json:"count,omitempty"`
	}{count})
}

// read is Client.read into a new T, nil on error.
func read[T any](ctx context.Context, c *Client, path string, in any) (*T, error) {
	var out T
	if err := c.read(ctx, path, in, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
