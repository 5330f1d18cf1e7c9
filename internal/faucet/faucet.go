// Package faucet manages faucets: creation, the v1 key and its two-step
// rotation (D13), the owner's settings (IP whitelist, send limits D41,
// anti-fraud rules D42) and the faucet's own reads (balance, payouts).
package faucet

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dripfaucet/drip/internal/coin"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/gencache"
	"github.com/dripfaucet/drip/internal/store"
)

// Service manages faucets. It holds the coin catalogue its checks read
// (selected currencies, limits, thresholds, paged reads), so that no
// caller fetches coins only to hand them back.
type Service struct {
	store store.Store
	coins *coin.Catalog
	now   func() time.Time
	// byKey and byID serve Authenticate and Get from memory (D63); nil
	// until UseCache: every read goes to the database.
	byKey *gencache.Cache[string, *drip.Faucet]
	byID  *gencache.Cache[int64, *drip.Faucet]
	// recent serves Payouts while the faucet's debits are unchanged (D66).
	recent *recent
}

// UseCache serves Authenticate and Get from memory while gen says nothing
// they read has changed (D63).
func (s *Service) UseCache(gen *gencache.Generation) {
	s.byKey = gencache.New[string, *drip.Faucet](gen, gencache.Keys, cacheSize)
	s.byID = gencache.New[int64, *drip.Faucet](gen, gencache.Keys, cacheSize)
}

// cacheSize bounds each cache of faucets: a deployment's active faucets.
const cacheSize = 10000

// cached reads k through c when there is one, and returns a copy, which
// the caller may change.
func cached[K comparable](ctx context.Context, c *gencache.Cache[K, *drip.Faucet], k K, load func(context.Context) (*drip.Faucet, error)) (*drip.Faucet, error) {
	if c == nil {
		return load(ctx)
	}
	f, err := c.Get(ctx, k, load)
	if err != nil {
		return nil, err
	}
	cp := *f
	return &cp, nil
}

func NewService(st store.Store, coins *coin.Catalog, now func() time.Time) *Service {
	return &Service{store: st, coins: coins, now: now, recent: newRecent()}
}

// NewKey returns a fresh v1 key: 48 hex characters of 192 random bits (D13).
func NewKey() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// HashKey is how keys are stored: SHA-256, enough for high-entropy keys (D13).
func HashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// CreateParams are a new faucet's details.
type CreateParams struct {
	OwnerID int64
	Name    string
	Domain  string
	URL     string
}

// Create makes a faucet with its ledger account and returns it with its v1
// key, which is shown this once and stored only as a hash.
func (s *Service) Create(ctx context.Context, p CreateParams) (*drip.Faucet, string, error) {
	if err := validateSite(p.Name, p.Domain, p.URL); err != nil {
		return nil, "", err
	}
	key := NewKey()
	var id int64
	now := s.now()
	err := s.store.Transact(ctx, func(tx store.Tx) error {
		account, err := tx.AccountCreate(ctx, "faucet", now)
		if err != nil {
			return err
		}
		id, err = tx.FaucetCreate(ctx, &store.FaucetCreateParams{
			OwnerID: p.OwnerID, AccountID: account, Name: strings.TrimSpace(p.Name),
			Domain: strings.ToLower(p.Domain), URL: p.URL, APIKeyHash: HashKey(key),
			Rules: drip.DefaultRules, CreatedAt: now,
		})
		return err
	})
	if err != nil {
		return nil, "", err
	}
	f, err := s.store.FaucetGetByID(ctx, id)
	return f, key, err
}

// validateSite applies D38 to a faucet's name, domain and URL.
func validateSite(name, domain, rawURL string) error {
	if n := len([]rune(strings.TrimSpace(name))); n < 1 || n > 64 {
		return drip.Errorf(drip.CodeInvalid, "Invalid faucet name: 1-64 characters.")
	}
	if !isHostname(domain) {
		return drip.Errorf(drip.CodeInvalid, "Invalid faucet domain: a hostname such as faucet.example.com.")
	}
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || !strings.EqualFold(u.Hostname(), domain) {
		return drip.Errorf(drip.CodeInvalid, "Invalid faucet URL: an http(s) URL on the faucet's domain.")
	}
	return nil
}

func isHostname(s string) bool {
	if len(s) == 0 || len(s) > 253 || !strings.Contains(s, ".") {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if len(label) == 0 || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range strings.ToLower(label) {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// Get returns a faucet by id.
func (s *Service) Get(ctx context.Context, id int64) (*drip.Faucet, error) {
	f, err := cached(ctx, s.byID, id, func(ctx context.Context) (*drip.Faucet, error) { return s.store.FaucetGetByID(ctx, id) })
	if errors.Is(err, store.ErrNotFound) {
		return nil, drip.Errorf(drip.CodeNotFound, "No faucet %d.", id)
	}
	return f, err
}

// Authenticate finds the faucet of a v1 key, current or pending (D13).
func (s *Service) Authenticate(ctx context.Context, key string) (*drip.Faucet, error) {
	if key == "" {
		return nil, drip.Errorf(drip.CodeUnauthenticated, "Missing api_key.")
	}
	hash := HashKey(key)
	f, err := cached(ctx, s.byKey, hash, func(ctx context.Context) (*drip.Faucet, error) { return s.store.FaucetGetByKeyHash(ctx, hash) })
	if errors.Is(err, store.ErrNotFound) {
		return nil, drip.Errorf(drip.CodeUnauthenticated, "Invalid api_key.")
	}
	return f, err
}

// RotateKey issues a new v1 key beside the current one; both work until
// ConfirmRotation. Rotating again replaces a pending key not yet confirmed.
func (s *Service) RotateKey(ctx context.Context, id int64) (string, error) {
	key := NewKey()
	err := s.store.Transact(ctx, func(tx store.Tx) error { return tx.FaucetSetPendingKey(ctx, id, HashKey(key)) })
	if errors.Is(err, store.ErrNotFound) {
		return "", drip.Errorf(drip.CodeNotFound, "No faucet %d.", id)
	}
	return key, err
}

// ConfirmRotation makes the pending key the only key: the old key is refused
// from the moment this commits (D13), on every node: the commit raises the
// cache generation (D63).
func (s *Service) ConfirmRotation(ctx context.Context, id int64) error {
	err := s.store.Transact(ctx, func(tx store.Tx) error { return tx.FaucetConfirmKey(ctx, id) })
	if errors.Is(err, store.ErrNotFound) {
		return drip.Errorf(drip.CodeNotFound, "Faucet %d has no pending key rotation.", id)
	}
	return err
}

// ParseIPList reads a whitelist of addresses and CIDRs separated by commas,
// spaces or newlines; single addresses become /32 or /128 prefixes.
func ParseIPList(s string) ([]netip.Prefix, error) {
	return ParseIPs(strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\t' }))
}

// ParseIPs reads a whitelist given as a list of addresses and CIDRs.
func ParseIPs(list []string) ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(list))
	for _, field := range list {
		p, err := ParseIPOrCIDR(field)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// ParseIPOrCIDR reads "203.0.113.7" or "203.0.113.0/24" as a prefix.
func ParseIPOrCIDR(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, drip.Errorf(drip.CodeInvalid, "Invalid CIDR %q.", s)
		}
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, drip.Errorf(drip.CodeInvalid, "Invalid IP address %q.", s)
	}
	a = a.Unmap()
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// update reads the faucet, lets change modify it, and writes it back, in
// one transaction. The row is locked first: every setting is written back
// whole, so two concurrent updates must not both start from the same copy
// (one would undo the other, say a new IP whitelist). It returns the faucet
// as the transaction found it, before the change, and after: what a change
// did is judged from those two, never from a copy read earlier, which a
// concurrent change may have made stale.
func (s *Service) update(ctx context.Context, id int64, change func(*drip.Faucet) error) (before, after *drip.Faucet, err error) {
	err = s.store.Transact(ctx, func(tx store.Tx) error {
		if err := tx.FaucetLock(ctx, id); err != nil {
			return err
		}
		f, err := tx.FaucetGetByID(ctx, id)
		if err != nil {
			return err
		}
		before = snapshot(f)
		if err := change(f); err != nil {
			return err
		}
		after = f
		return tx.FaucetUpdateSettings(ctx, f)
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, drip.Errorf(drip.CodeNotFound, "No faucet %d.", id)
	}
	if err != nil {
		return nil, nil, err
	}
	return before, after, nil
}

// snapshot is a copy of f sharing nothing a change may modify in place
// (SetLowBalance edits the thresholds map).
func snapshot(f *drip.Faucet) *drip.Faucet {
	c := *f
	c.IPWhitelist, c.Limits = slices.Clone(f.IPWhitelist), slices.Clone(f.Limits)
	c.Rules.Whitelist, c.Rules.Blacklist = slices.Clone(f.Rules.Whitelist), slices.Clone(f.Rules.Blacklist)
	c.Settings.Currencies, c.Settings.Categories = slices.Clone(f.Settings.Currencies), slices.Clone(f.Settings.Categories)
	c.LowBalance.Thresholds = maps.Clone(f.LowBalance.Thresholds)
	return &c
}

// SetIPWhitelist replaces the faucet's IP whitelist; an empty list admits
// any IP. It returns the faucet as the change found it and as it left it
// (see update).
func (s *Service) SetIPWhitelist(ctx context.Context, id int64, ips []netip.Prefix) (before, after *drip.Faucet, err error) {
	if len(ips) > 100 {
		return nil, nil, drip.Errorf(drip.CodeInvalid, "Invalid IP whitelist: at most 100 entries.")
	}
	return s.update(ctx, id, func(f *drip.Faucet) error { f.IPWhitelist = ips; return nil })
}

// SetLimits replaces the owner's send limits after checking each (D41),
// and returns the faucet before and after (see update).
func (s *Service) SetLimits(ctx context.Context, id int64, limits []drip.Limit) (before, after *drip.Faucet, err error) {
	if len(limits) > 50 {
		return nil, nil, drip.Errorf(drip.CodeInvalid, "Invalid limits: at most 50.")
	}
	coins, err := s.coins.List(ctx)
	if err != nil {
		return nil, nil, err
	}
	limits = slices.Clone(limits) // the caller's slice stays as given
	for i := range limits {
		limits[i].Coin = drip.Symbol(limits[i].Coin)
	}
	for i, l := range limits {
		if err := validateLimit(l, coins); err != nil {
			e := drip.Errorf(drip.CodeInvalid, "Invalid limit %d: %s", i+1, err)
			var unknown notACoin
			if errors.As(err, &unknown) {
				e.WithV1Status(410) // as v1 answers an unknown coin
			}
			return nil, nil, e
		}
	}
	return s.update(ctx, id, func(f *drip.Faucet) error { f.Limits = limits; return nil })
}

// LimitInput is an owner send limit as v2 and the tool server take it
// (D41): absent pointers are "every coin" and "no maximum".
type LimitInput struct {
	Currency      *string `json:"currency,omitempty" jsonschema:"coin the limit counts; absent: every coin"`
	Per           string  `json:"per" jsonschema:"count per faucet (all sends), recipient, or ip (claimer IP)"`
	WindowSeconds int64   `json:"window_seconds" jsonschema:"length of the sliding window, in seconds"`
	MaxCount      *int64  `json:"max_count,omitempty" jsonschema:"most payouts in the window"`
	MaxAmount     *int64  `json:"max_amount,omitempty" jsonschema:"most smallest units paid in the window"`
}

// Limits turns inputs into limits; SetLimits checks them.
func Limits(in []LimitInput) []drip.Limit {
	limits := make([]drip.Limit, len(in))
	for i, l := range in {
		limits[i] = drip.Limit{Per: drip.LimitScope(l.Per), WindowSeconds: l.WindowSeconds}
		if l.Currency != nil {
			limits[i].Coin = *l.Currency
		}
		if l.MaxCount != nil {
			limits[i].MaxCount = *l.MaxCount
		}
		if l.MaxAmount != nil {
			limits[i].MaxAmount = *l.MaxAmount
		}
	}
	return limits
}

// notACoin is a limit's coin that the service does not know.
type notACoin string

func (c notACoin) Error() string { return fmt.Sprintf("coin %q is not a coin", string(c)) }

func validateLimit(l drip.Limit, coins []drip.Coin) error {
	if l.Coin != "" && !drip.HasCoin(coins, l.Coin) {
		return notACoin(l.Coin)
	}
	switch l.Per {
	case drip.PerFaucet, drip.PerRecipient, drip.PerIP:
	default:
		return fmt.Errorf(`per must be "faucet", "recipient" or "ip"`)
	}
	if l.WindowSeconds < 1 || l.WindowSeconds > 366*24*3600 {
		return fmt.Errorf("window_seconds must be 1 to 31622400")
	}
	if l.MaxCount < 0 || l.MaxAmount < 0 || (l.MaxCount == 0 && l.MaxAmount == 0) {
		return fmt.Errorf("give max_count or max_amount, positive")
	}
	return nil
}

// RulesChange is a partial update of the anti-fraud rules; nil leaves a field as it is.
type RulesChange struct {
	AntiFraud *bool
	// ToggleAntiFraud flips the rank checks when AntiFraud is nil, from
	// the rules as they are in the transaction.
	ToggleAntiFraud bool
	TrustRank       *int
	NegativeRank    *int
	Whitelist       *[]string
	Blacklist       *[]string
}

// SetRules applies a change to the faucet's anti-fraud rules (D42), and
// returns the faucet before and after (see update): a toggle flips the
// rules the transaction found.
func (s *Service) SetRules(ctx context.Context, id int64, c RulesChange) (before, after *drip.Faucet, err error) {
	for _, r := range []*int{c.TrustRank, c.NegativeRank} {
		if r != nil && (*r < 0 || *r > 100) {
			return nil, nil, drip.Errorf(drip.CodeInvalid, "Invalid rank: 0 to 100.")
		}
	}
	for _, list := range []*[]string{c.Whitelist, c.Blacklist} {
		if list == nil {
			continue
		}
		if len(*list) > 1000 {
			return nil, nil, drip.Errorf(drip.CodeInvalid, "Invalid list: at most 1000 entries.")
		}
		for i, e := range *list {
			(*list)[i] = strings.TrimSpace(e)
			// Counted in characters before trimming, as the schema counts
			// (operation.UpdateRulesParams).
			if (*list)[i] == "" || utf8.RuneCountInString(e) > 320 {
				return nil, nil, drip.Errorf(drip.CodeInvalid, "Invalid list entry %q.", e)
			}
		}
	}
	return s.update(ctx, id, func(f *drip.Faucet) error {
		if c.AntiFraud != nil {
			f.Rules.AntiFraud = *c.AntiFraud
		} else if c.ToggleAntiFraud {
			f.Rules.AntiFraud = !f.Rules.AntiFraud
		}
		if c.TrustRank != nil {
			f.Rules.TrustRank = *c.TrustRank
		}
		if c.NegativeRank != nil {
			f.Rules.NegativeRank = *c.NegativeRank
		}
		if c.Whitelist != nil {
			f.Rules.Whitelist = *c.Whitelist
		}
		if c.Blacklist != nil {
			f.Rules.Blacklist = *c.Blacklist
		}
		return nil
	})
}

// Balance returns the faucet's balance of coin.
func (s *Service) Balance(ctx context.Context, f *drip.Faucet, coin string) (int64, error) {
	coin = drip.Symbol(coin)
	return s.store.BalanceGet(ctx, f.AccountID, coin)
}

// Payouts returns the faucet's latest payouts, newest first; count is
// clamped to 1-100 (D27) and coin "" means every coin. The rows may be
// shared with other callers (D66): they must not be changed.
func (s *Service) Payouts(ctx context.Context, f *drip.Faucet, coin string, count int) ([]drip.Payout, error) {
	count = min(max(count, 1), 100)
	return s.recent.get(ctx, s.store, f, coin, count)
}

// Paid takes a batch's committed payouts of one faucet in one coin into
// the latest payouts kept in memory (D66), so that Payouts need not read
// them again: the batch raised the faucet's debit count of coin from
// before to before+1 (ledger.BatchConfig.Paid). Each payout must be as
// the store reads it back (its time to the microsecond, in UTC).
func (s *Service) Paid(faucetID int64, coin string, before int64, payouts []drip.Payout) {
	s.recent.paid(faucetID, coin, before, payouts)
}
