package reply

import (
	"encoding/json"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/ratelimit"
)

// The faucet and the settings its owner manages (D38), each also read and
// set on its own.

// Balance is one coin's balance: /balance and get_balance, and an entry of
// the faucet's balances.
type Balance struct {
	Currency       string      `json:"currency" jsonschema:"coin symbol, upper-case"`
	Balance        int64       `json:"balance" jsonschema:"balance in the coin's smallest unit (1e-8 coin)"`
	BalanceBitcoin json.Number `json:"balance_bitcoin" jsonschema:"the same balance in whole coins"`
}

// NewBalance is the balance of units of coin.
func NewBalance(coin string, units int64) Balance {
	return Balance{Currency: coin, Balance: units, BalanceBitcoin: Coins(units)}
}

// Limit is one of the owner's send limits (D41). Unset parts are null.
type Limit struct {
	Currency      *string `json:"currency" jsonschema:"coin the limit counts; null: every coin"`
	Per           string  `json:"per" jsonschema:"what the limit is counted per: faucet (all sends), recipient or ip (claimer IP)"`
	WindowSeconds int64   `json:"window_seconds" jsonschema:"length of the sliding window, in seconds"`
	MaxCount      *int64  `json:"max_count" jsonschema:"most payouts in the window; null: not limited by count"`
	MaxAmount     *int64  `json:"max_amount" jsonschema:"most smallest units paid in the window; null: not limited by amount"`
}

// NewLimits are the records of list, [] when it is empty.
func NewLimits(list []drip.Limit) []Limit {
	out := make([]Limit, 0, len(list))
	for _, l := range list {
		r := Limit{Per: string(l.Per), WindowSeconds: l.WindowSeconds}
		if l.Coin != "" {
			r.Currency = &l.Coin
		}
		if l.MaxCount > 0 {
			r.MaxCount = &l.MaxCount
		}
		if l.MaxAmount > 0 {
			r.MaxAmount = &l.MaxAmount
		}
		out = append(out, r)
	}
	return out
}

// Rules are the anti-fraud rules (D42): /anti-fraud/rules and
// get_anti_fraud, and what setting them answers.
type Rules struct {
	AntiFraud    bool     `json:"anti_fraud" jsonschema:"whether rank checks are on; the blacklist applies either way"`
	TrustRank    int      `json:"trust_rank" jsonschema:"minimum rank (0-100) a recipient needs to be paid"`
	NegativeRank int      `json:"negative_rank" jsonschema:"highest negative rank (0-100) tolerated in a recipient"`
	Whitelist    []string `json:"whitelist" jsonschema:"recipients (usernames, emails, addresses, payout_user_hashes, IPs or CIDRs) that skip the rank checks"`
	Blacklist    []string `json:"blacklist" jsonschema:"recipients (same forms) that are never paid"`
}

// NewRules is the record of r.
func NewRules(r drip.Rules) Rules {
	return Rules{AntiFraud: r.AntiFraud, TrustRank: r.TrustRank, NegativeRank: r.NegativeRank,
		Whitelist: nonNil(r.Whitelist), Blacklist: nonNil(r.Blacklist)}
}

// LowBalance is the low-balance alert's setting (D43).
type LowBalance struct {
	Enabled    bool             `json:"enabled" jsonschema:"whether the owner is emailed when a payout takes a coin's balance below its threshold"`
	Thresholds map[string]int64 `json:"thresholds" jsonschema:"coin symbol -> threshold in smallest units"`
}

// NewLowBalance is the record of lb; no thresholds are {}.
func NewLowBalance(lb drip.LowBalance) LowBalance {
	t := lb.Thresholds
	if t == nil {
		t = map[string]int64{}
	}
	return LowBalance{Enabled: lb.Enabled, Thresholds: t}
}

// Listing is a listing approval request (D44).
type Listing struct {
	RequestID int64   `json:"request_id" jsonschema:"identifier of the approval request"`
	Currency  string  `json:"currency" jsonschema:"coin the listing cost was paid in"`
	Amount    int64   `json:"amount" jsonschema:"listing cost paid, in smallest units"`
	Status    string  `json:"status" jsonschema:"pending, approved or rejected"`
	CreatedAt string  `json:"created_at" jsonschema:"when it was requested (RFC 3339, UTC)"`
	DecidedAt *string `json:"decided_at" jsonschema:"when the operator decided; null while pending"`
}

// NewListing is the record of l, nil (null) when there is no request.
func NewListing(l *drip.ListingRequest) *Listing {
	if l == nil {
		return nil
	}
	return &Listing{RequestID: l.ID, Currency: l.Coin, Amount: l.Amount, Status: string(l.Status),
		CreatedAt: Timestamp(l.CreatedAt), DecidedAt: OptionalTimestamp(l.DecidedAt)}
}

// Faucet is the faucet with every setting its owner manages (D38): /faucet
// and get_faucet, and what changing its settings answers.
type Faucet struct {
	ID                 int64      `json:"id" jsonschema:"faucet identifier"`
	Name               string     `json:"faucet_name" jsonschema:"faucet name"`
	Domain             string     `json:"faucet_domain" jsonschema:"the faucet site's host name"`
	URL                string     `json:"faucet_url" jsonschema:"the faucet site's URL"`
	Description        string     `json:"faucet_description" jsonschema:"public description"`
	TimerMinutes       int        `json:"timer_minutes" jsonschema:"minutes a visitor waits between claims"`
	CurrenciesSelected []string   `json:"currencies_selected" jsonschema:"coins the faucet pays in"`
	CategoriesSelected []string   `json:"categories_selected" jsonschema:"categories of the faucet list it appears under"`
	OwnerStatus        string     `json:"owner_status" jsonschema:"active or suspended; a suspended owner's keys are refused"`
	CreatedAt          string     `json:"created_at" jsonschema:"when the faucet was created (RFC 3339, UTC)"`
	IPWhitelist        []string   `json:"ip_whitelist" jsonschema:"addresses or CIDRs the faucet's keys may be used from; empty: any"`
	RateLimits         []Limit    `json:"ratelimits" jsonschema:"the owner's send limits"`
	AntiFraud          Rules      `json:"anti_fraud" jsonschema:"anti-fraud rules"`
	LowBalance         LowBalance `json:"low_balance_notification" jsonschema:"low-balance alert"`
	Listing            *Listing   `json:"listing" jsonschema:"the latest listing approval request, or null"`
	Balances           []Balance  `json:"balances" jsonschema:"balances of every coin the faucet has held"`
}

// NewFaucet is the record of f, with its balances and its latest listing
// request (nil: none).
func NewFaucet(f *drip.Faucet, balances []drip.Balance, listing *drip.ListingRequest) Faucet {
	r := Faucet{
		ID: f.ID, Name: f.Name, Domain: f.Domain, URL: f.URL, Description: f.Settings.Description,
		TimerMinutes: f.Settings.TimerMinutes, CurrenciesSelected: nonNil(f.Settings.Currencies),
		CategoriesSelected: nonNil(f.Settings.Categories), OwnerStatus: string(f.OwnerStatus),
		CreatedAt: Timestamp(f.CreatedAt), IPWhitelist: f.IPWhitelistStrings(), RateLimits: NewLimits(f.Limits),
		AntiFraud: NewRules(f.Rules), LowBalance: NewLowBalance(f.LowBalance), Listing: NewListing(listing),
		Balances: []Balance{},
	}
	for _, b := range balances {
		r.Balances = append(r.Balances, NewBalance(b.Coin, b.Amount))
	}
	return r
}

// IPWhitelist is the faucet's IP whitelist: /ip-whitelist and
// get_ip_whitelist, and what setting it answers. Its field is not named
// IPWhitelist: a type embedding this one would hide a field of the type's
// own name from the schema inference (reflect.VisibleFields).
type IPWhitelist struct {
	Entries []string `json:"ip_whitelist" jsonschema:"addresses and CIDRs the faucet's keys may be used from; empty: any IP"`
}

// NewIPWhitelist is the record of f's IP whitelist.
func NewIPWhitelist(f *drip.Faucet) IPWhitelist {
	return IPWhitelist{Entries: f.IPWhitelistStrings()}
}

// RequestRate is a key's request rate (D40).
type RequestRate struct {
	PerMinute float64 `json:"per_minute" jsonschema:"requests a minute this key may make"`
	Burst     int     `json:"burst" jsonschema:"requests it may make at once"`
	Remaining float64 `json:"remaining" jsonschema:"requests it may make now"`
}

// RateLimits are a key's request rate and the owner's send limits:
// /ratelimits and get_ratelimits, and what setting the limits answers.
type RateLimits struct {
	RequestRate RequestRate `json:"request_rate" jsonschema:"this key's request rate; tool calls count"`
	RateLimits  []Limit     `json:"ratelimits" jsonschema:"the owner's send limits"`
}

// NewRateLimits is the record of the request rate, with the requests a key
// may still make (remaining, written as a whole number), and of limits.
func NewRateLimits(rate ratelimit.Config, remaining float64, limits []drip.Limit) RateLimits {
	return RateLimits{
		RequestRate: RequestRate{PerMinute: rate.PerMinute, Burst: rate.Burst, Remaining: float64(int64(remaining))},
		RateLimits:  NewLimits(limits),
	}
}

// Notification is one low-balance alert email and its delivery.
type Notification struct {
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

// LowBalanceNotification is the low-balance alert's setting and its latest
// emails (D43): /low-balance-notification and get_low_balance_notification,
// and what toggling it answers.
type LowBalanceNotification struct {
	LowBalance
	Notifications []Notification `json:"notifications" jsonschema:"the latest alert emails, newest first"`
}

// NewLowBalanceNotification is the record of lb and the emails in list.
func NewLowBalanceNotification(lb drip.LowBalance, list []drip.Notification) LowBalanceNotification {
	r := LowBalanceNotification{LowBalance: NewLowBalance(lb), Notifications: make([]Notification, len(list))}
	for i, n := range list {
		r.Notifications[i] = Notification{ID: n.ID, Currency: n.Coin, Threshold: n.Threshold, Balance: n.Balance,
			CreatedAt: Timestamp(n.CreatedAt), SentAt: OptionalTimestamp(n.SentAt), Channel: n.Channel,
			Attempts: n.Attempts, LastError: n.LastError}
	}
	return r
}
