package reply

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/faucet"
)

// What the reads answer besides the faucet's settings: balances, coins,
// payouts, statistics and the journal.

// Balances are the faucet's balances of every active coin: /balances and
// get_balances.
type Balances struct {
	Balances []Balance `json:"balances" jsonschema:"one per active coin"`
}

// NewBalances are the balances held of each active coin, zero included.
func NewBalances(active []drip.Coin, held []drip.Balance) Balances {
	r := Balances{Balances: []Balance{}}
	for _, coin := range active {
		var units int64
		for _, b := range held {
			if b.Coin == coin.Symbol {
				units = b.Amount
			}
		}
		r.Balances = append(r.Balances, NewBalance(coin.Symbol, units))
	}
	return r
}

// Currency is a coin the service pays in and the limits that count it.
type Currency struct {
	Currency             string      `json:"currency" jsonschema:"coin symbol"`
	Name                 string      `json:"name" jsonschema:"coin name"`
	MinimumPayout        int64       `json:"minimum_payout" jsonschema:"smallest payout the service makes in this coin, in smallest units"`
	MinimumPayoutBitcoin json.Number `json:"minimum_payout_bitcoin" jsonschema:"the same in whole coins"`
	Selected             bool        `json:"selected" jsonschema:"whether the faucet's currencies_selected lists it"`
	RateLimits           []Limit     `json:"ratelimits" jsonschema:"the owner's send limits that count this coin"`
}

// Currencies are the active coins: /currencies and get_currencies.
type Currencies struct {
	Currencies []Currency `json:"currencies" jsonschema:"the active coins"`
}

// NewCurrencies are the active coins, each with whether f selected it and
// f's send limits that count it (those of the coin and those of every
// coin).
func NewCurrencies(active []drip.Coin, f *drip.Faucet) Currencies {
	r := Currencies{Currencies: []Currency{}}
	for _, coin := range active {
		var limits []drip.Limit
		for _, l := range f.Limits {
			if l.Coin == "" || l.Coin == coin.Symbol {
				limits = append(limits, l)
			}
		}
		r.Currencies = append(r.Currencies, Currency{
			Currency: coin.Symbol, Name: coin.Name, MinimumPayout: coin.MinPayout,
			MinimumPayoutBitcoin: Coins(coin.MinPayout),
			Selected:             slices.Contains(f.Settings.Currencies, coin.Symbol),
			RateLimits:           NewLimits(limits),
		})
	}
	return r
}

// AddressCheck is a destination found payable: /check-address and
// check_address.
type AddressCheck struct {
	Address        string `json:"address" jsonschema:"the destination as given"`
	Currency       string `json:"currency" jsonschema:"the coin checked: the one asked for, else the coin a wallet address is linked for, else the faucet's first selected coin or the default coin"`
	PayoutUserHash string `json:"payout_user_hash" jsonschema:"the user's stable identifier, usable as a destination"`
}

// Payout is one payout the faucet made.
type Payout struct {
	PayoutID  int64  `json:"payout_id" jsonschema:"payout identifier"`
	To        string `json:"to" jsonschema:"recipient as the faucet gave it"`
	Amount    int64  `json:"amount" jsonschema:"amount in smallest units"`
	Currency  string `json:"currency" jsonschema:"coin symbol"`
	IPAddress string `json:"ip_address" jsonschema:"claimer IP the faucet reported, or empty"`
	Referral  string `json:"referral" jsonschema:"referral tag the faucet gave, or empty"`
	CreatedAt string `json:"created_at" jsonschema:"when it was paid (RFC 3339, UTC)"`
}

// Payouts are the faucet's latest payouts: /payouts and get_payouts.
type Payouts struct {
	Payouts []Payout `json:"payouts" jsonschema:"newest first"`
}

// NewPayouts are the records of list, in its order.
func NewPayouts(list []drip.Payout) Payouts {
	r := Payouts{Payouts: make([]Payout, len(list))}
	for i, po := range list {
		r.Payouts[i] = Payout{PayoutID: po.ID, To: po.To, Amount: po.Amount, Currency: po.Coin,
			IPAddress: po.IPAddress, Referral: po.Referral, CreatedAt: Timestamp(po.CreatedAt)}
	}
	return r
}

// Day is the payouts of one UTC day in one coin.
type Day struct {
	Date          string      `json:"date" jsonschema:"UTC day, YYYY-MM-DD"`
	Currency      string      `json:"currency" jsonschema:"coin symbol"`
	Payouts       int64       `json:"payouts" jsonschema:"number of payouts"`
	Amount        int64       `json:"amount" jsonschema:"amount paid, in smallest units"`
	AmountBitcoin json.Number `json:"amount_bitcoin" jsonschema:"the same in whole coins"`
	UniqueUsers   int64       `json:"unique_users" jsonschema:"distinct recipients"`
}

// Daily are the payouts per day and coin over the last faucet.StatsDays
// days: /stats/daily and get_daily_stats.
type Daily struct {
	From string `json:"from" jsonschema:"first day covered, YYYY-MM-DD"`
	To   string `json:"to" jsonschema:"today (UTC), YYYY-MM-DD"`
	Days []Day  `json:"days" jsonschema:"one per day and coin with payouts, newest first"`
}

// NewDaily is the record of stats, the days up to now's (UTC).
func NewDaily(stats []drip.DailyStat, now time.Time) Daily {
	today := now.UTC()
	r := Daily{From: today.AddDate(0, 0, -(faucet.StatsDays - 1)).Format(dateLayout), To: today.Format(dateLayout),
		Days: make([]Day, len(stats))}
	for i, s := range stats {
		r.Days[i] = Day{Date: s.Day.Format(dateLayout), Currency: s.Coin, Payouts: s.Payouts,
			Amount: s.Amount, AmountBitcoin: Coins(s.Amount), UniqueUsers: s.Recipients}
	}
	return r
}

// UserStat is what the faucet paid one recipient in a coin: an item of
// /stats/users and get_user_stats.
type UserStat struct {
	PayoutUserHash string      `json:"payout_user_hash" jsonschema:"the recipient"`
	Payouts        int64       `json:"payouts" jsonschema:"number of payouts"`
	Amount         int64       `json:"amount" jsonschema:"amount paid, in smallest units"`
	AmountBitcoin  json.Number `json:"amount_bitcoin" jsonschema:"the same in whole coins"`
	LastPayoutAt   string      `json:"last_payout_at" jsonschema:"the latest payout (RFC 3339, UTC)"`
}

// NewUserStats is the record of page p.
func NewUserStats(p *faucet.Page[drip.UserStat]) Page[UserStat] {
	r := Page[UserStat]{Items: make([]UserStat, len(p.Items)), Page: p.Page, PerPage: faucet.PerPage, Total: p.Total}
	for i, s := range p.Items {
		r.Items[i] = UserStat{PayoutUserHash: s.PayoutUserHash, Payouts: s.Payouts, Amount: s.Amount,
			AmountBitcoin: Coins(s.Amount), LastPayoutAt: Timestamp(s.LastPayoutAt)}
	}
	return r
}

// Transaction is one entry of the faucet's journal: an item of
// /transactions and get_transactions.
type Transaction struct {
	ID            int64       `json:"id" jsonschema:"entry identifier"`
	Type          string      `json:"type" jsonschema:"deposit, payout, listing_fee or listing_refund"`
	Currency      string      `json:"currency" jsonschema:"coin symbol"`
	Amount        int64       `json:"amount" jsonschema:"smallest units: positive in, negative out"`
	AmountBitcoin json.Number `json:"amount_bitcoin" jsonschema:"the same in whole coins"`
	PayoutID      *int64      `json:"payout_id" jsonschema:"the payout of a payout entry; null for others"`
	CreatedAt     string      `json:"created_at" jsonschema:"when it was booked (RFC 3339, UTC)"`
}

// NewTransactions is the record of page p.
func NewTransactions(p *faucet.Page[drip.Transaction]) Page[Transaction] {
	r := Page[Transaction]{Items: make([]Transaction, len(p.Items)), Page: p.Page, PerPage: faucet.PerPage, Total: p.Total}
	for i, t := range p.Items {
		e := Transaction{ID: t.ID, Type: t.Kind, Currency: t.Coin, Amount: t.Amount, AmountBitcoin: Coins(t.Amount),
			CreatedAt: Timestamp(t.CreatedAt)}
		if t.PayoutID != 0 {
			e.PayoutID = &t.PayoutID
		}
		r.Items[i] = e
	}
	return r
}
