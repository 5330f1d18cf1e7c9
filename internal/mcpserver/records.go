package mcpserver

import (
	"encoding/json"
	"time"

	"github.com/dripfaucet/drip/internal/drip"
)

// The records of tool results. Each has the JSON shape of the v2 reply data
// for the same thing (apiv2/records.go; the end-to-end test compares them
// field by field), and its jsonschema tags are the output schema's
// descriptions.

// coins writes smallest units as an exact JSON number of whole coins (D1).
func coins(units int64) json.Number { return json.Number(drip.FormatCoins(units)) }

// timestamp writes a time as RFC 3339 in UTC, as v2 does.
func timestamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func optionalTimestamp(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := timestamp(*t)
	return &s
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

type balanceRecord struct {
	Currency       string      `json:"currency" jsonschema:"coin symbol, upper-case"`
	Balance        int64       `json:"balance" jsonschema:"balance in the coin's smallest unit (1e-8 coin)"`
	BalanceBitcoin json.Number `json:"balance_bitcoin" jsonschema:"the same balance in whole coins"`
}

func newBalance(coin string, units int64) balanceRecord {
	return balanceRecord{Currency: coin, Balance: units, BalanceBitcoin: coins(units)}
}

type limitRecord struct {
	Currency      *string `json:"currency" jsonschema:"coin the limit counts; null: every coin"`
	Per           string  `json:"per" jsonschema:"what the limit is counted per: faucet (all sends), recipient or ip (claimer IP)"`
	WindowSeconds int64   `json:"window_seconds" jsonschema:"length of the sliding window, in seconds"`
	MaxCount      *int64  `json:"max_count" jsonschema:"most payouts in the window; null: not limited by count"`
	MaxAmount     *int64  `json:"max_amount" jsonschema:"most smallest units paid in the window; null: not limited by amount"`
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
	AntiFraud    bool     `json:"anti_fraud" jsonschema:"whether rank checks are on; the blacklist applies either way"`
	TrustRank    int      `json:"trust_rank" jsonschema:"minimum rank (0-100) a recipient needs to be paid"`
	NegativeRank int      `json:"negative_rank" jsonschema:"highest negative rank (0-100) tolerated in a recipient"`
	Whitelist    []string `json:"whitelist" jsonschema:"recipients (usernames, emails, addresses, payout_user_hashes, IPs or CIDRs) that skip the rank checks"`
	Blacklist    []string `json:"blacklist" jsonschema:"recipients (same forms) that are never paid"`
}

func newRules(r drip.Rules) rulesRecord {
	return rulesRecord{AntiFraud: r.AntiFraud, TrustRank: r.TrustRank, NegativeRank: r.NegativeRank,
		Whitelist: nonNil(r.Whitelist), Blacklist: nonNil(r.Blacklist)}
}

type lowBalanceRecord struct {
	Enabled    bool             `json:"enabled" jsonschema:"whether the owner is emailed when a payout takes a coin's balance below its threshold"`
	Thresholds map[string]int64 `json:"thresholds" jsonschema:"coin symbol -> threshold in smallest units"`
}

func newLowBalance(lb drip.LowBalance) lowBalanceRecord {
	t := lb.Thresholds
	if t == nil {
		t = map[string]int64{}
	}
	return lowBalanceRecord{Enabled: lb.Enabled, Thresholds: t}
}

type listingRecord struct {
	RequestID int64   `json:"request_id" jsonschema:"identifier of the approval request"`
	Currency  string  `json:"currency" jsonschema:"coin the listing cost was paid in"`
	Amount    int64   `json:"amount" jsonschema:"listing cost paid, in smallest units"`
	Status    string  `json:"status" jsonschema:"pending, approved or rejected"`
	CreatedAt string  `json:"created_at" jsonschema:"when it was requested (RFC 3339, UTC)"`
	DecidedAt *string `json:"decided_at" jsonschema:"when the operator decided; null while pending"`
}

func newListing(l *drip.ListingRequest) *listingRecord {
	if l == nil {
		return nil
	}
	return &listingRecord{RequestID: l.ID, Currency: l.Coin, Amount: l.Amount, Status: string(l.Status),
		CreatedAt: timestamp(l.CreatedAt), DecidedAt: optionalTimestamp(l.DecidedAt)}
}

// faucetRecord is the faucet with every setting its owner manages (D38).
type faucetRecord struct {
	ID                 int64            `json:"id" jsonschema:"faucet identifier"`
	Name               string           `json:"faucet_name" jsonschema:"faucet name"`
	Domain             string           `json:"faucet_domain" jsonschema:"the faucet site's host name"`
	URL                string           `json:"faucet_url" jsonschema:"the faucet site's URL"`
	Description        string           `json:"faucet_description" jsonschema:"public description"`
	TimerMinutes       int              `json:"timer_minutes" jsonschema:"minutes a visitor waits between claims"`
	CurrenciesSelected []string         `json:"currencies_selected" jsonschema:"coins the faucet pays in"`
	CategoriesSelected []string         `json:"categories_selected" jsonschema:"categories of the faucet list it appears under"`
	OwnerStatus        string           `json:"owner_status" jsonschema:"active or suspended; a suspended owner's keys are refused"`
	CreatedAt          string           `json:"created_at" jsonschema:"when the faucet was created (RFC 3339, UTC)"`
	IPWhitelist        []string         `json:"ip_whitelist" jsonschema:"addresses or CIDRs the faucet's keys may be used from; empty: any"`
	RateLimits         []limitRecord    `json:"ratelimits" jsonschema:"the owner's send limits"`
	AntiFraud          rulesRecord      `json:"anti_fraud" jsonschema:"anti-fraud rules"`
	LowBalance         lowBalanceRecord `json:"low_balance_notification" jsonschema:"low-balance alert"`
	Listing            *listingRecord   `json:"listing" jsonschema:"the latest listing approval request, or null"`
	Balances           []balanceRecord  `json:"balances" jsonschema:"balances of every coin the faucet has held"`
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
	Items   []T   `json:"items" jsonschema:"this page's items"`
	Page    int   `json:"page" jsonschema:"this page's number, from 1"`
	PerPage int   `json:"per_page" jsonschema:"items per page"`
	Total   int64 `json:"total" jsonschema:"items in all pages"`
}
