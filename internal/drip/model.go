package drip

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"net/netip"
	"strings"
	"time"
)

// Coin is a currency the service can move. Symbols are upper-case. The
// built-in set (BTC, ETH, DOGE, LTC, BCH, DASH, DGB, TRX, USDT, BNB, SOL,
// XRP) is seeded by the first migration of each engine.
type Coin struct {
	Symbol    string
	Name      string
	Active    bool
	MinPayout int64 // smallest amount a send may pay, in smallest units
}

// Symbol is a coin symbol as drip keeps and answers it: upper case.
// Symbols are taken in any case on every interface (D28), as client
// libraries send "btc", and answered in upper case (spec 1).
func Symbol(s string) string { return strings.ToUpper(s) }

// HasCoin reports whether coins holds the coin with this symbol.
func HasCoin(coins []Coin, symbol string) bool {
	for _, c := range coins {
		if c.Symbol == symbol {
			return true
		}
	}
	return false
}

// UserStatus is whether a user may receive payouts and use the service.
type UserStatus string

const (
	UserActive    UserStatus = "active"
	UserSuspended UserStatus = "suspended"
)

// User is a registered user: a payout recipient, faucet owner or merchant (D10).
type User struct {
	ID             int64
	AccountID      int64 // the user's wallet in the ledger
	Username       string
	Email          string
	PasswordHash   string // argon2id, empty when the user has no password yet
	EmailVerified  bool
	Status         UserStatus
	PayoutUserHash string // D12
	CreatedAt      time.Time
	Operator       bool // may use the operator pages (issue 11)
	// TOTPSecret is the second factor's secret as stored: AES-256-GCM
	// ciphertext, never the secret itself. Set while TOTPEnabled is false,
	// it is an enrolment waiting for its first code.
	TOTPSecret   string
	TOTPEnabled  bool
	TOTPLastStep int64 // the last TOTP time step accepted (replay guard)
}

// Payable reports whether the user can receive a payout (D11).
func (u *User) Payable() bool { return u.Status == UserActive && u.EmailVerified }

// Faucet is a site whose owner pays its visitors from the faucet's balance.
type Faucet struct {
	ID          int64
	OwnerID     int64
	OwnerStatus UserStatus // read with the faucet, so authorizing a key is one query
	AccountID   int64      // the faucet's balance in the ledger
	Name        string
	Domain      string
	URL         string
	CreatedAt   time.Time
	IPWhitelist []netip.Prefix // empty: any caller IP
	Limits      []Limit        // D41
	Rules       Rules          // D42
	Settings    Settings       // D38
	LowBalance  LowBalance     // D43
}

// Settings are the faucet's public details beyond its name, domain and URL,
// as the v2 update operation sets them (spec 2.7, D38).
type Settings struct {
	Description  string   `json:"faucet_description"`
	TimerMinutes int      `json:"timer_minutes"`
	Currencies   []string `json:"currencies_selected"` // active coin symbols
	Categories   []string `json:"categories_selected"` // slugs of Categories
}

// DefaultSettings are a new faucet's settings: a claim an hour.
var DefaultSettings = Settings{TimerMinutes: 60, Currencies: []string{}, Categories: []string{}}

// Categories is the fixed list a faucet's categories_selected is drawn from (D38).
var Categories = []string{"bitcoin", "altcoins", "stablecoins", "games", "ptc", "shortlinks",
	"offerwall", "surveys", "mining", "lottery", "other"}

// LowBalance is the owner's low-balance alert (D43): when a payout takes a
// coin's balance from at or above its threshold to below it, the owner gets
// one email and the faucet one faucet.low_balance event.
type LowBalance struct {
	Enabled    bool             `json:"enabled"`
	Thresholds map[string]int64 `json:"thresholds"` // coin -> smallest units
}

// Crossed reports whether a payout of coin that took the balance from
// before to after crosses the alert's threshold downwards.
func (lb LowBalance) Crossed(coin string, before, after int64) (threshold int64, crossed bool) {
	t, ok := lb.Thresholds[coin]
	if !lb.Enabled || !ok || t <= 0 {
		return 0, false
	}
	return t, before >= t && after < t
}

// AllowsIP reports whether a caller at ip may use the faucet's key.
func (f *Faucet) AllowsIP(ip netip.Addr) bool { return WhitelistAllows(f.IPWhitelist, ip) }

// IPWhitelistStrings is the whitelist as text ("203.0.113.0/24"), never nil.
func (f *Faucet) IPWhitelistStrings() []string { return PrefixStrings(f.IPWhitelist) }

// WhitelistAllows reports whether an IP whitelist admits ip; an empty
// whitelist admits every address.
func WhitelistAllows(list []netip.Prefix, ip netip.Addr) bool {
	if len(list) == 0 {
		return true
	}
	ip = ip.Unmap()
	for _, p := range list {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// PrefixStrings writes prefixes as text, never nil.
func PrefixStrings(list []netip.Prefix) []string {
	out := make([]string, 0, len(list))
	for _, p := range list {
		out = append(out, p.String())
	}
	return out
}

// LimitScope is what an owner send limit counts per (D41).
type LimitScope string

const (
	PerFaucet    LimitScope = "faucet"    // all payouts of the faucet
	PerRecipient LimitScope = "recipient" // payouts to one recipient user
	PerIP        LimitScope = "ip"        // payouts claimed from one ip_address
)

// Limit is one owner-set send limit (D41): at most MaxCount payouts and at
// most MaxAmount units within any WindowSeconds, for one coin or all coins.
type Limit struct {
	Coin          string     `json:"coin"` // "" means every coin
	Per           LimitScope `json:"per"`
	WindowSeconds int64      `json:"window_seconds"`
	MaxCount      int64      `json:"max_count,omitempty"`  // 0: no count limit
	MaxAmount     int64      `json:"max_amount,omitempty"` // 0: no amount limit
}

// Rules are a faucet owner's anti-fraud settings (D42).
type Rules struct {
	AntiFraud    bool     `json:"anti_fraud"`    // rank checks on
	TrustRank    int      `json:"trust_rank"`    // minimum trust rank, 0-100
	NegativeRank int      `json:"negative_rank"` // maximum negative rank tolerated, 0-100
	Whitelist    []string `json:"whitelist"`     // bypass the rank checks
	Blacklist    []string `json:"blacklist"`     // always refused
}

// DefaultRules are a new faucet's rules: anti-fraud on, ranks that every
// verified user passes, negative rank tolerant of one blacklisting elsewhere.
var DefaultRules = Rules{AntiFraud: true, TrustRank: 0, NegativeRank: 100}

// Payout is one paid send, as listed by the payouts operations.
type Payout struct {
	ID          int64
	FaucetID    int64
	RecipientID int64
	To          string // the destination as the caller gave it
	Coin        string
	Amount      int64
	IPAddress   string
	Referral    string
	CreatedAt   time.Time
}

// NewestFirst orders payouts as every list of them is ordered (the
// stores' ORDER BY created_at DESC, id DESC): the later first, and of one
// time the larger id first. It is a comparison for slices.SortFunc.
func NewestFirst(a, b Payout) int {
	if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
		return c
	}
	return cmp.Compare(b.ID, a.ID)
}

// Event types recorded in the outbox for webhooks (D51).
const (
	EventPayoutSent   = "payout.sent"
	EventPayoutFailed = "payout.failed"
	EventLowBalance   = "faucet.low_balance" // D43
	// EventWebhookTest is the event an owner sends to one endpoint from
	// the console to try it; no endpoint subscribes to it.
	EventWebhookTest = "webhook.test"
)

// NewEventID returns "evt_", the current Unix millisecond (48 bits) and
// 96 random bits, in hex: an event id, unique without coordination between
// nodes (the random bits), whose order follows time (the millisecond).
// Ids made one after the other sort one after the other, so the unique
// index that holds a payment's identity (D6) grows at its right edge: a
// batch of payouts dirties one or two of its pages, where random ids
// dirtied a page per payout, each written to the log at every commit.
func NewEventID() string {
	var b [18]byte
	ms := uint64(time.Now().UnixMilli())
	for i := 5; i >= 0; i-- {
		b[i], ms = byte(ms), ms>>8
	}
	_, _ = rand.Read(b[6:]) // crypto/rand.Read never fails on supported platforms
	return "evt_" + hex.EncodeToString(b[:])
}

// Event is a fact recorded for webhook delivery, in the transaction that caused it (D50).
type Event struct {
	ID        string // "evt_..."
	FaucetID  int64
	Type      string
	Data      []byte // the JSON of the body's data member (D51)
	CreatedAt time.Time
}
