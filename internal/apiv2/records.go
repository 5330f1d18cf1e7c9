package apiv2

import (
	"encoding/json"
	"time"

	"github.com/dripfaucet/drip/internal/drip"
)

// The records of v2 replies. Each shape is decided here once, and
// openapi.json describes it; tests check every reply against that document.

// coins writes smallest units as an exact JSON number of whole coins (D1).
func coins(units int64) json.Number { return json.Number(drip.FormatCoins(units)) }

// timestamp writes a time as RFC 3339 in UTC.
func timestamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func optionalTimestamp(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := timestamp(*t)
	return &s
}

type balanceRecord struct {
	Currency       string      `json:"currency"`
	Balance        int64       `json:"balance"`
	BalanceBitcoin json.Number `json:"balance_bitcoin"`
}

func newBalance(coin string, units int64) balanceRecord {
	return balanceRecord{Currency: coin, Balance: units, BalanceBitcoin: coins(units)}
}

type limitRecord struct {
	Currency      *string `json:"currency"` // null: every coin
	Per           string  `json:"per"`
	WindowSeconds int64   `json:"window_seconds"`
	MaxCount      *int64  `json:"max_count"`
	MaxAmount     *int64  `json:"max_amount"`
}

func newLimits(list []drip.Limit) []limitRecord {
	out := make([]limitRecord, 0, len(list))
	for _, l := range list {
		r := limitRecord{Per: string(l.Per), WindowSeconds: l.WindowSeconds}
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

type rulesRecord struct {
	AntiFraud    bool     `json:"anti_fraud"`
	TrustRank    int      `json:"trust_rank"`
	NegativeRank int      `json:"negative_rank"`
	Whitelist    []string `json:"whitelist"`
	Blacklist    []string `json:"blacklist"`
}

func newRules(r drip.Rules) rulesRecord {
	return rulesRecord{AntiFraud: r.AntiFraud, TrustRank: r.TrustRank, NegativeRank: r.NegativeRank,
		Whitelist: nonNil(r.Whitelist), Blacklist: nonNil(r.Blacklist)}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

type lowBalanceRecord struct {
	Enabled    bool             `json:"enabled"`
	Thresholds map[string]int64 `json:"thresholds"`
}

func newLowBalance(lb drip.LowBalance) lowBalanceRecord {
	t := lb.Thresholds
	if t == nil {
		t = map[string]int64{}
	}
	return lowBalanceRecord{Enabled: lb.Enabled, Thresholds: t}
}

type listingRecord struct {
	RequestID int64   `json:"request_id"`
	Currency  string  `json:"currency"`
	Amount    int64   `json:"amount"`
	Status    string  `json:"status"`
	CreatedAt string  `json:"created_at"`
	DecidedAt *string `json:"decided_at"`
}

func newListing(l *drip.ListingRequest) *listingRecord {
	if l == nil {
		return nil
	}
	return &listingRecord{RequestID: l.ID, Currency: l.Coin, Amount: l.Amount, Status: string(l.Status),
		CreatedAt: timestamp(l.CreatedAt), DecidedAt: optionalTimestamp(l.DecidedAt)}
}

// faucetRecord is a faucet with every setting an owner manages (D38).
type faucetRecord struct {
	ID                 int64            `json:"id"`
	Name               string           `json:"faucet_name"`
	Domain             string           `json:"faucet_domain"`
	URL                string           `json:"faucet_url"`
	Description        string           `json:"faucet_description"`
	TimerMinutes       int              `json:"timer_minutes"`
	CurrenciesSelected []string         `json:"currencies_selected"`
	CategoriesSelected []string         `json:"categories_selected"`
	OwnerStatus        string           `json:"owner_status"`
	CreatedAt          string           `json:"created_at"`
	IPWhitelist        []string         `json:"ip_whitelist"`
	RateLimits         []limitRecord    `json:"ratelimits"`
	AntiFraud          rulesRecord      `json:"anti_fraud"`
	LowBalance         lowBalanceRecord `json:"low_balance_notification"`
	Listing            *listingRecord   `json:"listing"` // the latest approval request, or null
	Balances           []balanceRecord  `json:"balances"`
}

func newFaucet(f *drip.Faucet, balances []drip.Balance, listing *drip.ListingRequest) faucetRecord {
	r := faucetRecord{
		ID: f.ID, Name: f.Name, Domain: f.Domain, URL: f.URL, Description: f.Settings.Description,
		TimerMinutes: f.Settings.TimerMinutes, CurrenciesSelected: nonNil(f.Settings.Currencies),
		CategoriesSelected: nonNil(f.Settings.Categories), OwnerStatus: string(f.OwnerStatus),
		CreatedAt: timestamp(f.CreatedAt), IPWhitelist: f.IPWhitelistStrings(), RateLimits: newLimits(f.Limits),
		AntiFraud: newRules(f.Rules), LowBalance: newLowBalance(f.LowBalance), Listing: newListing(listing),
		Balances: []balanceRecord{},
	}
	for _, b := range balances {
		r.Balances = append(r.Balances, newBalance(b.Coin, b.Amount))
	}
	return r
}

// page is one page of a list (D37).
type page[T any] struct {
	Items   []T   `json:"items"`
	Page    int   `json:"page"`
	PerPage int   `json:"per_page"`
	Total   int64 `json:"total"`
}
